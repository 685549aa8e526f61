package formtask

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/clock"
)

// The scheduled purge of the trashbins: a Temporal schedule (TrashbinPurgeScheduleID, visible under
// Schedules in the Temporal UI) starts TrashbinPurge every TrashbinPurgeInterval; it deletes for good the
// messages that have been in a trashbin for longer than the retention it is given.
const (
	// TrashbinPurgeScheduleID is the id of the schedule, TrashbinPurgeWorkflowID the id of the runs it starts.
	TrashbinPurgeScheduleID = "postbox-trashbin-purge"
	TrashbinPurgeWorkflowID = "trashbin-purge"
	// TrashbinPurgeWorkflow is the registered name of TrashbinPurge.
	TrashbinPurgeWorkflow = "TrashbinPurge"
	TrashbinPurgeInterval = time.Hour
)

// PurgeTrashbinInput is what one purge run is started with: how long a message stays in a trashbin.
type PurgeTrashbinInput struct {
	Retention time.Duration
}

// PurgeTrashbinActivityInput asks the activity to purge the messages deleted before Before (a local
// date-time, like every timestamp of the store).
type PurgeTrashbinActivityInput struct {
	Before time.Time
}

// purgeActivity may take a while on a large backlog: it heartbeats between batches.
var purgeActivity = workflow.ActivityOptions{
	TaskQueue:              TaskQueueArchive,
	StartToCloseTimeout:    10 * time.Minute,
	ScheduleToCloseTimeout: 30 * time.Minute,
	HeartbeatTimeout:       time.Minute,
	RetryPolicy:            retryPolicy,
}

// TrashbinPurge purges the trashbins of what has been there for longer than in.Retention, as of the run's
// start, and returns how many messages it purged.
func TrashbinPurge(ctx workflow.Context, in PurgeTrashbinInput) (int, error) {
	before := clock.Local(workflow.Now(ctx)).Add(-in.Retention)
	var purged int
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, purgeActivity), acts.PurgeTrashbin,
		PurgeTrashbinActivityInput{Before: before}).Get(ctx, &purged)
	return purged, err
}
