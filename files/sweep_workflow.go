package files

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The sweep of the object store: a Temporal schedule (SweepScheduleID, under Schedules in the Temporal
// UI) starts Sweep every SweepInterval on the archive workers' task queue. It deletes the blobs no row
// refers to (and their objects), then the objects and unfinished multipart uploads no blob names, each
// only once it is older than the grace period, so that an upload under way is never taken.
const (
	// SweepScheduleID is the id of the schedule, SweepWorkflowID the id of the runs it starts.
	SweepScheduleID = "postbox-files-sweep"
	SweepWorkflowID = "files-sweep"
	// SweepWorkflowName is the registered name of Sweep.
	SweepWorkflowName = "FilesSweep"
	SweepInterval     = time.Hour
)

// SweepInput is what a sweep run is started with.
type SweepInput struct {
	// Grace is how long a blob no row refers to, or an object no blob names, is kept (config
	// POSTBOX_FILES_SWEEP_GRACE).
	Grace time.Duration
}

// SweepResult counts what a run deleted.
type SweepResult struct {
	Blobs   int // blob rows, each with its object
	Objects int // objects and unfinished uploads no blob named
}

// sweepActivity lists and deletes in batches, heartbeating between them.
var sweepActivity = workflow.ActivityOptions{
	StartToCloseTimeout:    30 * time.Minute,
	ScheduleToCloseTimeout: time.Hour,
	HeartbeatTimeout:       time.Minute,
	RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 10 * time.Second, MaximumInterval: 5 * time.Minute},
}

// Sweep sweeps the blobs first, so that their objects left by a failed delete are swept as orphans in the
// same run.
func Sweep(ctx workflow.Context, in SweepInput) (SweepResult, error) {
	ctx = workflow.WithActivityOptions(ctx, sweepActivity)
	var s *Sweeper // activities by method value, run by the workers that registered them
	var res SweepResult
	if err := workflow.ExecuteActivity(ctx, s.SweepBlobs, in).Get(ctx, &res.Blobs); err != nil {
		return res, err
	}
	err := workflow.ExecuteActivity(ctx, s.SweepObjects, in).Get(ctx, &res.Objects)
	return res, err
}
