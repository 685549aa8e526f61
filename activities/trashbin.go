package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/workflows"
)

// purgeBatch is how many messages one transaction of the purge deletes.
const purgeBatch = 200

// PurgeTrashbin deletes for good every message moved to a trashbin before in.Before, a batch per
// transaction, each with its audit entry naming the schedule's run, then the form tasks in progress
// through their workflows (purgeDueTasks), and returns how many it deleted. A retried attempt finds only
// what is left.
func (a *Activities) PurgeTrashbin(ctx context.Context, in workflows.PurgeTrashbinActivityInput) (int, error) {
	info := activity.GetInfo(ctx)
	actor := store.AuditEntry{At: store.Local(time.Now()), ActorName: "Postbox", ActorMethod: "schedule",
		APIKeyName: "", RequestID: info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID}
	total := 0
	for {
		n, err := store.New(a.Pool).PurgeTrashbin(ctx, in.Before, purgeBatch, actor)
		total += n
		if err != nil {
			return total, err
		}
		if n < purgeBatch {
			break
		}
		activity.RecordHeartbeat(ctx, total)
	}
	n, err := a.purgeDueTasks(ctx, in.Before, actor)
	return total + n, err
}
