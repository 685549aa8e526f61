package formtask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/activity"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/store"
)

// ChangePlace makes a form task's workflow's change of the task's place in one transaction on the locked
// message, with the audit entry the workflow carries and the change's event: to the trashbin, back, or deleted for good (with its
// forms, attachments and revisions; an archive is not the message's and stays). It makes the change only
// when the message is where the change takes it from, so a retried attempt that finds it made writes
// nothing more. A scheduled purge (DeletedBefore set) keeps a message that went to the trashbin later.
func (a *Activities) ChangePlace(ctx context.Context, in ChangePlaceInput) (ChangePlaceResult, error) {
	var res ChangePlaceResult
	err := store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := NewStore(store.New(tx))
		m, err := q.LockMessage(ctx, in.Audit.ReporteeID, in.MessageID)
		if errors.Is(err, store.ErrNotFound) {
			res.Gone = true
			return nil
		}
		if err != nil {
			return err
		}
		at := in.Audit.At // local wall-clock time, as the store keeps it
		var eventType string
		switch in.Change {
		case UpdateTrash:
			if m.InTrashbin {
				return nil
			}
			eventType, err = events.MessageDeleted, q.MoveToTrashbin(ctx, m.ID, in.Audit.ActorName, at)
		case UpdateRestore:
			if !m.InTrashbin {
				return nil
			}
			eventType, err = events.MessageRestored, q.RestoreFromTrashbin(ctx, m.ID)
		case UpdatePurge:
			if !m.InTrashbin || (!in.DeletedBefore.IsZero() && !m.DeletedAt.Before(in.DeletedBefore)) {
				return nil
			}
			eventType, err = events.MessagePurged, q.PurgeMessage(ctx, m.ID, at)
		default:
			return permanent(ErrBadInput, fmt.Errorf("no place change %q", in.Change))
		}
		if err != nil {
			return err
		}
		res.Changed = true
		if err := q.AppendMessageAudit(ctx, store.MessageAuditEntry{Entry: in.Audit, MessageID: m.ID}); err != nil {
			return err
		}
		return q.AppendEvents(ctx, a.placeEvent(eventType, in.Audit.ReporteeID, m.ID, m.Type, m.Service, m.Status))
	})
	return res, err
}

// scheduler is the caller of the scheduled purge's changes: the schedule holds the right it exercises.
var scheduler = Caller{Name: "Postbox", ID: "schedule", Delete: true}

// purgeDueTasks deletes for good the form tasks in progress moved to a trashbin before before, each
// through its workflow (an UpdatePurge that keeps a task restored or deleted again meanwhile), with the
// audit entry of actor, and returns how many it deleted. Without FormTasks (activities run without a
// Temporal client) they are left for a worker that has one.
func (a *Activities) purgeDueTasks(ctx context.Context, before time.Time, actor audit.Entry) (int, error) {
	if a.FormTasks == nil {
		return 0, nil
	}
	q := NewStore(store.New(a.Pool))
	purged, after := 0, ""
	for {
		due, err := q.DueTasksInTrashbin(ctx, before, after, purgeBatch)
		if err != nil {
			return purged, err
		}
		for _, d := range due {
			task, err := q.GetFormTask(ctx, d.ID)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return purged, err
			}
			e := actor
			e.ReporteeID, e.Action, e.Summary = d.ReporteeID, store.AuditPurge, store.PurgeSummary(d.ID, d.Status, d.DeletedAt)
			res, err := a.FormTasks.ChangePlace(ctx, task, UpdatePurge, PlaceInput{Caller: scheduler, Audit: e, DeletedBefore: before})
			var refused *Error
			if errors.As(err, &refused) && (refused.Kind == NotInTrashbin || refused.Kind == NotFound) {
				continue // restored or deleted for good meanwhile
			}
			if err != nil {
				return purged, err
			}
			if res.Outcome == OutcomePurged {
				purged++
			}
			activity.RecordHeartbeat(ctx, purged)
		}
		if len(due) < purgeBatch {
			return purged, nil
		}
		after = due[len(due)-1].ID
	}
}
