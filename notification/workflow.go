package notification

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/internal/child"
)

// inFlight is how many batches of a round an order's workflow sends at once: they share the worker's
// SMTP connections and rate limits, so more would only queue.
const inFlight = 4

// sendOptions: a batch's sends that met a temporary failure are retried with backoff for about ten
// minutes (sendAttempts), after which GiveUp dead-letters them. The batch heartbeats: a worker that dies
// mid-batch is noticed within HeartbeatTimeout and the batch goes on elsewhere, under the same keys.
var sendOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Minute,
	HeartbeatTimeout:    20 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: 2 * time.Minute, MaximumAttempts: sendAttempts},
}

const sendAttempts = 8

// giveUpOptions: recording a dead letter is retried for as long as the database is away.
var giveUpOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
}

// Progress is the workflow's progress as its memo shows it in the Temporal UI.
type Progress struct {
	Round                 int // the round being sent, or the last one sent
	Sent, Failed, Skipped int
}

// OrderWorkflow is the workflow of one order (WorkflowID(in.OrderID)): at in.SendAt it sends the notice to
// every recipient, then each reminder in.ReminderEvery after the one before, each round in batches of
// BatchSize recipients, inFlight at a time. Every wait is a durable timer.
func OrderWorkflow(ctx workflow.Context, in WorkflowInput) (Progress, error) {
	var a *Activities
	var progress Progress
	if d := in.SendAt.Sub(workflow.Now(ctx)); !in.SendAt.IsZero() && d > 0 {
		if err := workflow.Sleep(ctx, d); err != nil {
			return progress, err
		}
	}
	sends := workflow.WithActivityOptions(ctx, sendOptions)
	giveUps := workflow.WithActivityOptions(ctx, giveUpOptions)
	started := workflow.GetInfo(ctx).WorkflowStartTime
	abandoned := false
	for round := 0; round <= in.Reminders; round++ {
		if round > 0 {
			if err := workflow.Sleep(ctx, in.ReminderEvery); err != nil {
				return progress, err
			}
		}
		progress.Round = round
		pending := 0
		sel := workflow.NewSelector(ctx)
		var failed error
		for from := 0; from < in.Recipients || pending > 0; {
			if from < in.Recipients && pending < inFlight && failed == nil && !abandoned {
				batch := BatchInput{OrderID: in.OrderID, Round: round, From: from, To: min(from+BatchSize, in.Recipients), StartedAt: started}
				from = batch.To
				pending++
				sel.AddFuture(workflow.ExecuteActivity(sends, a.SendBatch, batch), func(f workflow.Future) {
					var res BatchResult
					err := f.Get(ctx, &res)
					if isNoOrder(err) {
						abandoned = true
					} else if err != nil {
						// The retries are spent: what is still undecided is a dead letter.
						if err := workflow.ExecuteActivity(giveUps, a.GiveUp, batch).Get(ctx, &res); err != nil {
							failed = err
						}
					}
					progress.Sent, progress.Failed, progress.Skipped = progress.Sent+res.Sent, progress.Failed+res.Failed, progress.Skipped+res.Skipped
					pending--
				})
				continue
			}
			if pending == 0 {
				break
			}
			sel.Select(ctx)
		}
		if failed != nil {
			return progress, failed
		}
		if abandoned { // the request that started it never committed the order
			_ = workflow.UpsertMemo(ctx, map[string]any{"Abandoned": "the order was never stored"})
			return progress, nil
		}
		// The memo is what the Temporal UI lists; an upsert that fails is only a stale view.
		_ = workflow.UpsertMemo(ctx, map[string]any{"Round": progress.Round, "Sent": progress.Sent, "Failed": progress.Failed,
			"Skipped": progress.Skipped})
	}
	return progress, nil
}

// StartOrder starts the workflow of order in as a child of the calling workflow that outlives it: a
// shipment's reminders may come after its purge, and a call to sign's after the task is archived; they find
// their messages gone or signed and skip.
func StartOrder(ctx workflow.Context, in WorkflowInput) error {
	return child.StartAbandoned(ctx, WorkflowID(in.OrderID), TaskQueue, WorkflowName, in)
}
