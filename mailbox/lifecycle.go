package mailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// The life of a message in the mailbox: archive, confirm, the trashbin, restore and the delete for good.
//
// Rights, per service of the message: archiving a correspondence needs Read (as in Altinn 2: whoever may
// read it may file it away; correspondence services hand out little more than Read); confirming one needs
// Read too (the reader confirms what they read). A form task is archived by signing it (PUT on the
// message), so archiving one that is sent and archived is an idempotent no-op that needs Write, and one
// in progress is refused (TaskInProgress). Moving to the trashbin, restoring and deleting for good need
// Delete, and ArchiveDelete for an archived message.
//
// Form tasks in progress (Utfylling, Signering) have a running workflow that owns their state: their
// trashbin, restore and delete for good go through it (taskplace.go). A sent and archived task's workflow
// has ended: it moves like a correspondence.

// Kind says why a change of a message was refused; the API maps each kind to its HTTP status.
type Kind int

// Kinds of refusal.
const (
	NotFound              Kind = iota + 1 // no such message the caller may see where the change looks for it
	MissingRight                          // the caller lacks the right the change needs on the message's service
	TaskInProgress                        // a form task in progress changes through its workflow; see Error.TaskStatus
	NotCorrespondence                     // only a correspondence is confirmed
	ConfirmationNotNeeded                 // the correspondence does not ask for confirmation
	NotInTrashbin                         // a restore of a message that is in the mailbox
)

// Error is a refused change of a message.
type Error struct {
	Kind   Kind
	Detail string
	// TaskStatus is the status of the form task of a TaskInProgress refusal.
	TaskStatus string
}

func (e *Error) Error() string { return e.Detail }

func refuse(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Actor is who changes a message: the caller's rights for the reportee, and the audit entry of the
// change begun (who, how, from which request); the change fills in its action, time and summary.
type Actor struct {
	Principal identity.Principal
	Rights    identity.RightSet
	Audit     audit.Entry
}

// Unchanged checks the message, locked for the change, against what the caller expects of it (If-Match):
// m is the message as a read answers it, when inMailbox (a message in the trashbin has no such view).
// nil expects nothing.
type Unchanged func(m store.Message, inMailbox bool) error

// check reads message id of the reportee as it is now and holds it to u; nil checks nothing.
func (u Unchanged) check(ctx context.Context, q *store.Queries, reporteeID int64, id string) error {
	if u == nil {
		return nil
	}
	m, err := q.GetMessage(ctx, reporteeID, id)
	if errors.Is(err, store.ErrNotFound) {
		return u(m, false)
	}
	if err != nil {
		return err
	}
	return u(m, true)
}

// Lifecycle changes the place and state of messages.
type Lifecycle struct {
	pool   *pgxpool.Pool
	events events.Builder
	tasks  *formtask.Service // moves form tasks in progress; nil without Temporal (such a move is Unavailable)
}

// NewLifecycle returns the lifecycle over pool, whose events name their resources with events, moving
// form tasks in progress through tasks.
func NewLifecycle(pool *pgxpool.Pool, events events.Builder, tasks *formtask.Service) *Lifecycle {
	return &Lifecycle{pool: pool, events: events, tasks: tasks}
}

// change is one change of a locked message: it decides and writes, and returns the audit summary, or ""
// when there was nothing to change (a repeat).
type change func(ctx context.Context, q *store.Queries, m store.MessageState, at time.Time) (string, error)

// apply runs a change of message id of the reportee, its audit entry (action) and its event (eventType)
// in one transaction, on the message locked (store.LockMessage): concurrent changes of one message run
// one after the other, each deciding on where the one before left it, so a message is never in two
// places. A message the caller may not see is refused like one that does not exist. With answer, it
// returns the message as the change left it, read in the same transaction (a change that follows at once
// cannot make it look refused).
func (l *Lifecycle) apply(ctx context.Context, reporteeID int64, id string, a Actor, unchanged Unchanged, action, eventType string, answer bool, fn change) (store.Message, error) {
	at := clock.Now()
	var after store.Message
	err := store.InTx(ctx, l.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		m, err := q.LockMessage(ctx, reporteeID, id)
		if err == nil && !a.Rights.Visibility().Allows(m.Service, m.Status) {
			err = store.ErrNotFound
		}
		if errors.Is(err, store.ErrNotFound) {
			return refuse(NotFound, "there is no message %s in this mailbox", id)
		}
		if err != nil {
			return err
		}
		if err := unchanged.check(ctx, q, reporteeID, id); err != nil {
			return err
		}
		summary, err := fn(ctx, q, m, at)
		if err != nil {
			return err
		}
		if summary != "" {
			e := store.MessageAuditEntry{Entry: a.Audit, MessageID: id}
			e.ReporteeID, e.Action, e.At, e.Summary = reporteeID, action, at, summary
			if err := q.AppendMessageAudit(ctx, e); err != nil {
				return err
			}
			if err := l.appendEvent(ctx, q, eventType, reporteeID, m); err != nil {
				return err
			}
		}
		if answer {
			after, err = q.GetMessage(ctx, reporteeID, id)
		}
		return err
	})
	return after, err
}

// appendEvent writes the event of a change of message m (as it was locked before the change), with the
// status the change left it in; a message deleted for good keeps the status it had.
func (l *Lifecycle) appendEvent(ctx context.Context, q *store.Queries, eventType string, reporteeID int64, m store.MessageState) error {
	after, err := q.LockMessage(ctx, reporteeID, m.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		after = m
	case err != nil:
		return err
	}
	return q.AppendEvents(ctx, l.events.MessageEvent(eventType, events.Message{MessageID: m.ID, ReporteeID: reporteeID, Type: m.Type,
		ServiceCode: m.Service.Code, ServiceEdition: m.Service.Edition, Status: after.Status}))
}

// RequireRight refuses a change the caller's rights on the message's service do not allow.
func RequireRight(rights identity.RightSet, m store.MessageState, action identity.Action) error {
	if rights.Has(action, m.Service) {
		return nil
	}
	return refuse(MissingRight, "you need the right %s on service %s/%d of message %s", action, m.Service.Code, m.Service.Edition, m.ID)
}

// DeleteRight is the right that moves a message to and from the trashbin and deletes it for good.
func DeleteRight(m store.MessageState) identity.Action {
	if m.Archived() {
		return identity.ArchiveDelete
	}
	return identity.Delete
}

// inMailbox refuses a change of a message that is in the trashbin: it has left the mailbox.
func inMailbox(m store.MessageState) error {
	if m.InTrashbin {
		return refuse(NotFound, "there is no message %s in this mailbox; it is in the trashbin", m.ID)
	}
	return nil
}

// Archive files a correspondence away (Arkivert), and answers a sent and archived form task as it is.
func (l *Lifecycle) Archive(ctx context.Context, reporteeID int64, id string, a Actor, unchanged Unchanged) (store.Message, error) {
	return l.apply(ctx, reporteeID, id, a, unchanged, store.AuditArchive, events.CorrespondenceArchived, true,
		func(ctx context.Context, q *store.Queries, m store.MessageState, at time.Time) (string, error) {
			if err := inMailbox(m); err != nil {
				return "", err
			}
			if m.Type == store.TypeFormTask {
				if err := RequireRight(a.Rights, m, identity.Write); err != nil {
					return "", err
				}
				if !m.Archived() {
					e := refuse(TaskInProgress, "form task %s is %s: a form task is archived by signing it (PUT on the message)", m.ID, m.Status)
					e.TaskStatus = m.Status
					return "", e
				}
				return "", nil
			}
			if err := RequireRight(a.Rights, m, identity.Read); err != nil {
				return "", err
			}
			if m.Archived() {
				return "", nil
			}
			return fmt.Sprintf("archived %s (was %s)", m.ID, m.Status), q.FileCorrespondence(ctx, m.ID, a.Audit.ActorName, at)
		})
}

// Confirm confirms a correspondence that asks for it, and so marks it read.
func (l *Lifecycle) Confirm(ctx context.Context, reporteeID int64, id string, a Actor, unchanged Unchanged) (store.Message, error) {
	return l.apply(ctx, reporteeID, id, a, unchanged, store.AuditConfirm, events.CorrespondenceConfirmed, true,
		func(ctx context.Context, q *store.Queries, m store.MessageState, at time.Time) (string, error) {
			if err := inMailbox(m); err != nil {
				return "", err
			}
			if err := RequireRight(a.Rights, m, identity.Read); err != nil {
				return "", err
			}
			switch {
			case m.Type != store.TypeCorrespondence:
				return "", refuse(NotCorrespondence, "message %s is a %s: only a correspondence is confirmed", m.ID, m.Type)
			case !m.IsConfirmationNeeded:
				return "", refuse(ConfirmationNotNeeded, "correspondence %s does not ask for confirmation", m.ID)
			case m.Confirmed:
				return "", nil
			}
			return fmt.Sprintf("confirmed %s", m.ID), q.ConfirmCorrespondence(ctx, m.ID, a.Audit.ActorName, at)
		})
}

// Trash moves a message to the reportee's trashbin.
func (l *Lifecycle) Trash(ctx context.Context, reporteeID int64, id string, a Actor, unchanged Unchanged) error {
	if done, err := l.taskPlace(ctx, reporteeID, id, a, unchanged, formtask.UpdateTrash); done {
		return err
	}
	_, err := l.apply(ctx, reporteeID, id, a, unchanged, store.AuditDelete, events.MessageDeleted, false,
		func(ctx context.Context, q *store.Queries, m store.MessageState, at time.Time) (string, error) {
			if err := inMailbox(m); err != nil {
				return "", err
			}
			if err := RequireRight(a.Rights, m, DeleteRight(m)); err != nil {
				return "", err
			}
			return TrashedSummary(m.ID, m.Status), q.MoveToTrashbin(ctx, m.ID, a.Audit.ActorName, at)
		})
	return err
}

// Restore puts a message of the trashbin back into the mailbox, in the status it had.
func (l *Lifecycle) Restore(ctx context.Context, reporteeID int64, id string, a Actor, unchanged Unchanged) (store.Message, error) {
	if done, err := l.taskPlace(ctx, reporteeID, id, a, unchanged, formtask.UpdateRestore); done {
		if err != nil {
			return store.Message{}, err
		}
		return store.New(l.pool).GetMessage(ctx, reporteeID, id)
	}
	return l.apply(ctx, reporteeID, id, a, unchanged, store.AuditRestore, events.MessageRestored, true,
		func(ctx context.Context, q *store.Queries, m store.MessageState, _ time.Time) (string, error) {
			if err := RequireRight(a.Rights, m, DeleteRight(m)); err != nil {
				return "", err
			}
			if !m.InTrashbin {
				return "", refuse(NotInTrashbin, "message %s is in the mailbox, not in the trashbin", m.ID)
			}
			return RestoredSummary(m.ID, m.Status), q.RestoreFromTrashbin(ctx, m.ID)
		})
}

// Purge deletes a message of the trashbin for good. The archive of a sent form task is not the message's
// and stays.
func (l *Lifecycle) Purge(ctx context.Context, reporteeID int64, id string, a Actor, unchanged Unchanged) error {
	if done, err := l.taskPlace(ctx, reporteeID, id, a, unchanged, formtask.UpdatePurge); done {
		return err
	}
	_, err := l.apply(ctx, reporteeID, id, a, unchanged, store.AuditDeleteForGood, events.MessagePurged, false,
		func(ctx context.Context, q *store.Queries, m store.MessageState, at time.Time) (string, error) {
			if !m.InTrashbin {
				return "", refuse(NotFound, "there is no message %s in the trashbin", m.ID)
			}
			if err := RequireRight(a.Rights, m, DeleteRight(m)); err != nil {
				return "", err
			}
			return PurgedSummary(m.ID, m.Status), q.PurgeMessage(ctx, m.ID, at)
		})
	return err
}

// TrashedSummary is the audit summary of a move to the trashbin, the same whichever way a message takes
// (here, or a form task in progress through its workflow).
func TrashedSummary(id, status string) string {
	return fmt.Sprintf("moved %s (%s) to the trashbin", id, status)
}

// RestoredSummary is the audit summary of a restore.
func RestoredSummary(id, status string) string {
	return fmt.Sprintf("restored %s (%s) from the trashbin", id, status)
}

// PurgedSummary is the audit summary of a delete for good.
func PurgedSummary(id, status string) string {
	return fmt.Sprintf("deleted %s (%s) for good", id, status)
}
