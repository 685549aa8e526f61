package correspondence

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/internal/child"
	"github.com/postbox/postbox/notification"
)

// The stages of a shipment, as its workflow's memo shows them in the Temporal UI.
const (
	StageWaiting   = "waiting for VisibleDateTime"
	StageCreating  = "creating messages"
	StageCreated   = "created"
	StageOverdue   = "overdue marked"
	StagePurged    = "purged"
	StageAbandoned = "abandoned: the shipment was never stored"
)

// batchOptions: a batch is one transaction of at most BatchSize messages. Retries go on as long as the
// database is away; only a shipment that never committed ends the workflow (errNoShipment, given up by
// the activity itself after noShipmentPatience).
var batchOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2,
		MaximumInterval: 10 * time.Second},
}

// ShipmentWorkflow is the workflow of one shipment (WorkflowID(in.ShipmentID)): it makes the messages visible at
// in.VisibleAt (at once when zero), marks the unconfirmed ones overdue at in.DueAt, and purges them at
// in.AllowSystemDeleteAt. Every wait is a durable timer.
func ShipmentWorkflow(ctx workflow.Context, in WorkflowInput) (Progress, error) {
	var a *Activities
	progress := Progress{Stage: StageWaiting}
	stage := func(s string) {
		progress.Stage = s
		// The memo is what the Temporal UI lists; an upsert that fails is only a stale view.
		_ = workflow.UpsertMemo(ctx, map[string]any{"Stage": progress.Stage, "Created": progress.Created})
	}
	if err := sleepUntil(ctx, in.VisibleAt); err != nil {
		return progress, err
	}
	stage(StageCreating)
	batches := workflow.WithActivityOptions(ctx, batchOptions)
	started := workflow.GetInfo(ctx).WorkflowStartTime
	for after := 0; ; {
		var res BatchResult
		err := workflow.ExecuteActivity(batches, a.CreateBatch, BatchInput{ShipmentID: in.ShipmentID, After: after, StartedAt: started}).Get(ctx, &res)
		if isNoShipment(err) {
			stage(StageAbandoned)
			return progress, nil
		}
		if err != nil {
			return progress, err
		}
		progress.Created += res.Created
		if res.Created < BatchSize {
			break
		}
		after = res.Last
		stage(StageCreating)
	}
	stage(StageCreated)
	if in.Notification != nil {
		if err := notification.StartOrder(ctx, *in.Notification); err != nil {
			return progress, err
		}
	}
	if in.ConfirmationNeeded && !in.DueAt.IsZero() {
		if err := sleepUntil(ctx, in.DueAt); err != nil {
			return progress, err
		}
		if err := workflow.ExecuteActivity(batches, a.MarkOverdue, in.ShipmentID).Get(ctx, nil); err != nil {
			return progress, err
		}
		stage(StageOverdue)
	}
	if !in.AllowSystemDeleteAt.IsZero() {
		if err := sleepUntil(ctx, in.AllowSystemDeleteAt); err != nil {
			return progress, err
		}
		for {
			var purged int
			if err := workflow.ExecuteActivity(batches, a.PurgeBatch, in.ShipmentID).Get(ctx, &purged); err != nil {
				return progress, err
			}
			if purged < BatchSize {
				break
			}
		}
		stage(StagePurged)
	}
	return progress, nil
}

// The stages of a scheduled pre-fill, as its workflow's memo and result show them.
const (
	PrefillChecking  = "checking the forms"
	PrefillWaiting   = "waiting for VisibleDateTime"
	PrefillCreated   = "created"
	PrefillRefused   = "refused: the forms did not pass validation"
	PrefillFailed    = "failed: the task could not be created (scheduled_prefills.failure says why)"
	PrefillAbandoned = "abandoned: the forms were never checked, or the pre-fill was dropped"
)

// checkPatience is how long a PrefillWorkflow waits for the Update that checks its forms: the request that
// starts the workflow sends it at once, so one that has not come by then never will.
const checkPatience = time.Minute

// checkOptions: the request waits for the check, so a database that stays away fails it soon (503).
var checkOptions = workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 3}}

// PrefillWorkflow is the workflow of a pre-filled form task scheduled for in.VisibleAt (id
// PrefillWorkflowIDPrefix + in.MessageID). Its UpdateCheckPrefill validates the forms and answers the
// findings; passed, the workflow sleeps on a durable timer until in.VisibleAt, creates the task, and
// starts its notification order and due timer (TaskDueWorkflow) as children that outlive it.
func PrefillWorkflow(ctx workflow.Context, in PrefillInput) (string, error) {
	var a *Activities
	stage := func(s string) string {
		_ = workflow.UpsertMemo(ctx, map[string]any{"Stage": s}) // the Temporal UI's view; a failed upsert is only stale
		return s
	}
	var checked *formtask.Findings
	checking := false
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCheckPrefill, func(ctx workflow.Context) (formtask.Findings, error) {
		checking = true
		defer func() { checking = false }()
		var f formtask.Findings
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, checkOptions), a.CheckPrefill, in.MessageID).Get(ctx, &f); err != nil {
			return f, err
		}
		checked = &f
		return f, nil
	}, workflow.UpdateHandlerOptions{Validator: func(workflow.Context) error {
		if checking || checked != nil {
			return temporal.NewNonRetryableApplicationError("the forms of a pre-fill are checked once", "AlreadyChecked", nil)
		}
		return nil
	}})
	if err != nil {
		return "", err
	}
	stage(PrefillChecking)
	steps := workflow.WithActivityOptions(ctx, batchOptions)
	ok, err := workflow.AwaitWithTimeout(ctx, checkPatience, func() bool { return checked != nil })
	if err != nil {
		return "", err
	}
	if !ok {
		if err := workflow.ExecuteActivity(steps, a.DropPrefill, in.MessageID).Get(ctx, nil); err != nil {
			return "", err
		}
		return stage(PrefillAbandoned), nil
	}
	if len(checked.Errors) > 0 { // CheckPrefill dropped it
		return stage(PrefillRefused), nil
	}
	stage(PrefillWaiting)
	if err := sleepUntil(ctx, in.VisibleAt); err != nil {
		return "", err
	}
	var out PrefillOutcome
	if err := workflow.ExecuteActivity(steps, a.CreatePrefilled, in.MessageID).Get(ctx, &out); err != nil {
		return "", err
	}
	switch {
	case out.Failure != "":
		return stage(PrefillFailed), nil
	case !out.Created:
		return stage(PrefillAbandoned), nil
	}
	if in.Notification != nil {
		if err := notification.StartOrder(ctx, *in.Notification); err != nil {
			return "", err
		}
	}
	if !in.DueAt.IsZero() {
		err := child.StartAbandoned(ctx, TaskDueWorkflowIDPrefix+in.MessageID, TaskQueue, TaskDueWorkflowName,
			TaskDueInput{MessageID: in.MessageID, DueAt: in.DueAt})
		if err != nil {
			return "", err
		}
	}
	return stage(PrefillCreated), nil
}

// TaskDueWorkflow waits on a durable timer for a pre-filled form task's due date, then marks it overdue
// if it has not been submitted (MarkTaskOverdue).
func TaskDueWorkflow(ctx workflow.Context, in TaskDueInput) error {
	if err := sleepUntil(ctx, in.DueAt); err != nil {
		return err
	}
	var a *Activities
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, batchOptions), a.MarkTaskOverdue, in.MessageID).Get(ctx, nil)
}

// sleepUntil waits on a durable timer until t; a zero or past t does not wait.
func sleepUntil(ctx workflow.Context, t time.Time) error {
	if d := t.Sub(workflow.Now(ctx)); !t.IsZero() && d > 0 {
		return workflow.Sleep(ctx, d)
	}
	return nil
}
