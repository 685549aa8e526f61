package worker

// The Temporal schedules the workers keep: the trashbins' purge, the object store's sweep and the
// retention of events and audit logs.

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/retention"
)

// EnsureTrashbinPurgeSchedule creates the schedule that purges the trashbins (formtask.TrashbinPurge every
// formtask.TrashbinPurgeInterval, a run at a time), or sets the retention of the one that exists: workers
// starting together may race to create it, and whoever loses updates it.
func EnsureTrashbinPurgeSchedule(ctx context.Context, c client.Client, retention time.Duration) error {
	return ensureSchedule(ctx, c, formtask.TrashbinPurgeScheduleID, formtask.TrashbinPurgeInterval,
		&client.ScheduleWorkflowAction{ID: formtask.TrashbinPurgeWorkflowID, Workflow: formtask.TrashbinPurgeWorkflow,
			Args: []any{formtask.PurgeTrashbinInput{Retention: retention}}, TaskQueue: formtask.TaskQueue},
		map[string]any{"Retention": retention.String()})
}

// EnsureFilesSweepSchedule creates the schedule of the object store's sweep (files.Sweep) on the archive
// workers' task queue, or brings its action up to date with grace.
func EnsureFilesSweepSchedule(ctx context.Context, c client.Client, grace time.Duration) error {
	return ensureSchedule(ctx, c, files.SweepScheduleID, files.SweepInterval,
		&client.ScheduleWorkflowAction{ID: files.SweepWorkflowID, Workflow: files.SweepWorkflowName,
			Args: []any{files.SweepInput{Grace: grace}}, TaskQueue: formtask.TaskQueueArchive},
		map[string]any{"Grace": grace.String()})
}

// EnsureRetentionSchedule creates the schedule of the retention of events and audit logs
// (retention.Retention) on the archive workers' task queue, or brings its action up to date with in.
func EnsureRetentionSchedule(ctx context.Context, c client.Client, in retention.Input) error {
	return ensureSchedule(ctx, c, retention.ScheduleID, retention.Interval,
		&client.ScheduleWorkflowAction{ID: retention.WorkflowID, Workflow: retention.WorkflowName,
			Args: []any{in}, TaskQueue: formtask.TaskQueueArchive},
		map[string]any{"EventsMonths": in.EventsMonths, "AuditMonths": in.AuditMonths})
}

// ensureSchedule creates a schedule that starts action every interval, skipping a start while a run is
// under way, or, when it exists, gives it action (a changed setting).
func ensureSchedule(ctx context.Context, c client.Client, id string, every time.Duration, action *client.ScheduleWorkflowAction, memo map[string]any) error {
	schedules := c.ScheduleClient()
	_, err := schedules.Create(ctx, client.ScheduleOptions{
		ID:      id,
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}},
		Action:  action,
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Memo:    memo,
	})
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		if err != nil {
			return fmt.Errorf("create the schedule %s: %w", id, err)
		}
		return nil
	}
	err = schedules.GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			in.Description.Schedule.Action = action
			return &client.ScheduleUpdate{Schedule: &in.Description.Schedule}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("update the schedule %s: %w", id, err)
	}
	return nil
}
