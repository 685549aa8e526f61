package correspondence

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

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
		if err := startNotification(ctx, *in.Notification); err != nil {
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

// startNotification starts the workflow of the shipment's notification order as a child that outlives
// the shipment's own (its reminders may come after the purge: they find the messages gone and skip).
func startNotification(ctx workflow.Context, in notification.WorkflowInput) error {
	child := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: notification.WorkflowID(in.OrderID),
		TaskQueue: notification.TaskQueue, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON})
	err := workflow.ExecuteChildWorkflow(child, notification.WorkflowName, in).GetChildWorkflowExecution().Get(ctx, nil)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if errors.As(err, &started) {
		return nil
	}
	return err
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
