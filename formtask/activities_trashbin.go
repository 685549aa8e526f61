package formtask

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/store"
)

// purgedEvent is the event of a message the schedule deleted for good.
func (a *Activities) purgedEvent(m store.PurgedMessage) store.Event {
	return a.placeEvent(events.MessagePurged, m.ReporteeID, m.ID, m.Type, m.Service, m.Status)
}

// placeEvent is the event (MessageDeleted, MessageRestored or MessagePurged) of a message of the reportee
// moved to or from the trashbin, or deleted for good: its status stays.
func (a *Activities) placeEvent(eventType string, reporteeID int64, messageID, messageType string, svc store.ServiceKey, status string) store.Event {
	return a.Events.MessageEvent(eventType, events.Message{MessageID: messageID, ReporteeID: reporteeID, Type: messageType,
		ServiceCode: svc.Code, ServiceEdition: svc.Edition, Status: status})
}

// purgeBatch is how many messages one transaction of the purge deletes.
const purgeBatch = 200

// PurgeTrashbin deletes for good every message moved to a trashbin before in.Before, a batch per
// transaction, each with its audit entry naming the schedule's run, then the form tasks in progress
// through their workflows (purgeDueTasks), and returns how many it deleted. A retried attempt finds only
// what is left.
func (a *Activities) PurgeTrashbin(ctx context.Context, in PurgeTrashbinActivityInput) (int, error) {
	info := activity.GetInfo(ctx)
	actor := audit.Entry{At: clock.Now(), ActorName: "Postbox", ActorMethod: "schedule",
		APIKeyName: "", RequestID: info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID}
	total := 0
	for {
		n, err := NewStore(store.New(a.Pool)).PurgeTrashbin(ctx, in.Before, purgeBatch, actor, a.purgedEvent)
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
