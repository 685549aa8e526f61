package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
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
// in progress is a 409. Moving to the trashbin, restoring and deleting for good need Delete, and
// ArchiveDelete for an archived message.
//
// Form tasks in progress (Utfylling, Signering) have a running workflow that owns their state: their
// trashbin, restore and delete for good go through it (lifecycle_formtask.go). A sent and archived task's
// workflow has ended: it moves like a correspondence.

// lifecycleHandlers serve the changes of a message's place and state, and the trashbin.
type lifecycleHandlers struct {
	pool    *pgxpool.Pool
	mailbox *mailboxHandlers  // the views a change answers with
	tasks   *formTaskHandlers // the workflows of form tasks in progress
	events  events.Builder
}

// changeMessage runs one change of a message, its audit entry and its event (eventType) in one transaction, on the message locked
// (store.LockMessage): concurrent changes of one message run one after the other, each deciding on where
// the one before left it, so a message is never in two places. A message the caller may not see is
// answered like one that does not exist. change decides and writes; it returns the audit summary, or ""
// when there was nothing to change (a repeat), or an error (a problem for a refusal). The answer is the
// message as the change left it, read in the same transaction (a change that follows at once cannot make
// it look refused), or 204 when the message has left the mailbox (answer false).
func (h *lifecycleHandlers) changeMessage(c *gin.Context, action, eventType string, answer bool, change func(q *store.Queries, m store.MessageState, at time.Time) (string, error)) {
	ctx := c.Request.Context()
	party, rights := reporteeOf(c)
	id := c.Param("messageId")
	at := clock.Now()
	var after store.Message
	err := store.InTx(ctx, h.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		m, err := q.LockMessage(ctx, party.ID, id)
		if err == nil && !rights.Visibility().Allows(m.Service, m.Status) {
			err = store.ErrNotFound
		}
		if errors.Is(err, store.ErrNotFound) {
			return problem.NotFound("there is no message %s in this mailbox", id)
		}
		if err != nil {
			return err
		}
		if err := h.checkUnchanged(c, q, party.ID, id); err != nil {
			return err
		}
		summary, err := change(q, m, at)
		if err != nil {
			return err
		}
		if summary != "" {
			e := store.MessageAuditEntry{Entry: auditEntry(c, party.ID, action, at), MessageID: id}
			e.Summary = summary
			if err := q.AppendMessageAudit(ctx, e); err != nil {
				return err
			}
			if err := h.appendEvent(ctx, q, eventType, party.ID, m); err != nil {
				return err
			}
		}
		if answer {
			after, err = q.GetMessage(ctx, party.ID, id)
		}
		return err
	})
	switch {
	case err != nil:
		abort(c, err)
	case answer:
		respond(c, http.StatusOK, h.mailbox.singleMessage(c, after))
	default:
		c.Status(http.StatusNoContent)
	}
}

// appendEvent writes the event of a change of message m (as it was locked before the change), with the
// status the change left it in; a message deleted for good keeps the status it had.
func (h *lifecycleHandlers) appendEvent(ctx context.Context, q *store.Queries, eventType string, reporteeID int64, m store.MessageState) error {
	after, err := q.LockMessage(ctx, reporteeID, m.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		after = m
	case err != nil:
		return err
	}
	return q.AppendEvents(ctx, h.events.MessageEvent(eventType, events.Message{MessageID: m.ID, ReporteeID: reporteeID, Type: m.Type,
		ServiceCode: m.Service.Code, ServiceEdition: m.Service.Edition, Status: after.Status}))
}

// checkUnchanged holds a change of the locked message to its If-Match, if it has one: the message's ETag
// as it is now (as a GET answers it; none once it is in the trashbin) must be named.
func (h *lifecycleHandlers) checkUnchanged(c *gin.Context, q *store.Queries, partyID int64, id string) error {
	if _, ok := c.Request.Header["If-Match"]; !ok {
		return nil
	}
	m, err := q.GetMessage(c.Request.Context(), partyID, id)
	tag := ""
	switch {
	case err == nil:
		tag, err = resourceETag(c, h.mailbox.singleMessage(c, m))
	case errors.Is(err, store.ErrNotFound):
		err = nil
	}
	if err != nil {
		return err
	}
	return checkIfMatch(c, tag)
}

// requireRight refuses a change the caller's rights on the message's service do not allow.
func requireRight(c *gin.Context, m store.MessageState, action identity.Action) error {
	if _, rights := reporteeOf(c); rights.Has(action, m.Service) {
		return nil
	}
	return problem.New(http.StatusForbidden, "missing-right", "you need the right %s on service %s/%d of message %s",
		action, m.Service.Code, m.Service.Edition, m.ID)
}

// deleteRight is the right that moves a message to and from the trashbin and deletes it for good.
func deleteRight(m store.MessageState) identity.Action {
	if m.Archived() {
		return identity.ArchiveDelete
	}
	return identity.Delete
}

// inMailbox refuses a change of a message that is in the trashbin: it has left the mailbox.
func inMailbox(m store.MessageState) error {
	if m.InTrashbin {
		return problem.NotFound("there is no message %s in this mailbox; it is in the trashbin", m.ID)
	}
	return nil
}

// taskInProgress is the refusal of a change a form task's running workflow would have to make.
func taskInProgress(m store.MessageState, format string, args ...any) error {
	p := problem.New(http.StatusConflict, "conflict", format, args...)
	p.TaskStatus = m.Status
	return p
}

// archiveMessage files a correspondence away (Arkivert); see the rights above.
func (h *lifecycleHandlers) archiveMessage(c *gin.Context) {
	h.changeMessage(c, store.AuditArchive, events.CorrespondenceArchived, true, func(q *store.Queries, m store.MessageState, at time.Time) (string, error) {
		if err := inMailbox(m); err != nil {
			return "", err
		}
		if m.Type == store.TypeFormTask {
			if err := requireRight(c, m, identity.Write); err != nil {
				return "", err
			}
			if !m.Archived() {
				return "", taskInProgress(m, "form task %s is %s: a form task is archived by signing it (PUT on the message)", m.ID, m.Status)
			}
			return "", nil
		}
		if err := requireRight(c, m, identity.Read); err != nil {
			return "", err
		}
		if m.Archived() {
			return "", nil
		}
		return fmt.Sprintf("archived %s (was %s)", m.ID, m.Status), q.FileCorrespondence(c.Request.Context(), m.ID, principalOf(c).Name, at)
	})
}

// confirmMessage confirms a correspondence that asks for it, and so marks it read.
func (h *lifecycleHandlers) confirmMessage(c *gin.Context) {
	h.changeMessage(c, store.AuditConfirm, events.CorrespondenceConfirmed, true, func(q *store.Queries, m store.MessageState, at time.Time) (string, error) {
		if err := inMailbox(m); err != nil {
			return "", err
		}
		if err := requireRight(c, m, identity.Read); err != nil {
			return "", err
		}
		switch {
		case m.Type != store.TypeCorrespondence:
			return "", problem.New(http.StatusConflict, "not-correspondence", "message %s is a %s: only a correspondence is confirmed", m.ID, m.Type)
		case !m.IsConfirmationNeeded:
			return "", problem.New(http.StatusConflict, "confirmation-not-needed", "correspondence %s does not ask for confirmation", m.ID)
		case m.Confirmed:
			return "", nil
		}
		return fmt.Sprintf("confirmed %s", m.ID), q.ConfirmCorrespondence(c.Request.Context(), m.ID, principalOf(c).Name, at)
	})
}

// deleteMessage moves a message to the reportee's trashbin.
func (h *lifecycleHandlers) deleteMessage(c *gin.Context) {
	if h.changeTaskPlace(c, formtask.UpdateTrash) {
		return
	}
	h.changeMessage(c, store.AuditDelete, events.MessageDeleted, false, func(q *store.Queries, m store.MessageState, at time.Time) (string, error) {
		if err := inMailbox(m); err != nil {
			return "", err
		}
		if err := requireRight(c, m, deleteRight(m)); err != nil {
			return "", err
		}
		return trashedSummary(m.ID, m.Status), q.MoveToTrashbin(c.Request.Context(), m.ID, principalOf(c).Name, at)
	})
}

// restoreMessage puts a message of the trashbin back into the mailbox, in the status it had.
func (h *lifecycleHandlers) restoreMessage(c *gin.Context) {
	if h.changeTaskPlace(c, formtask.UpdateRestore) {
		return
	}
	h.changeMessage(c, store.AuditRestore, events.MessageRestored, true, func(q *store.Queries, m store.MessageState, _ time.Time) (string, error) {
		if err := requireRight(c, m, deleteRight(m)); err != nil {
			return "", err
		}
		if !m.InTrashbin {
			return "", problem.New(http.StatusConflict, "not-in-trashbin", "message %s is in the mailbox, not in the trashbin", m.ID)
		}
		return restoredSummary(m.ID, m.Status), q.RestoreFromTrashbin(c.Request.Context(), m.ID)
	})
}

// purgeMessage deletes a message of the trashbin for good. The archive of a sent form task is not the
// message's and stays.
func (h *lifecycleHandlers) purgeMessage(c *gin.Context) {
	if h.changeTaskPlace(c, formtask.UpdatePurge) {
		return
	}
	h.changeMessage(c, store.AuditDeleteForGood, events.MessagePurged, false, func(q *store.Queries, m store.MessageState, at time.Time) (string, error) {
		if !m.InTrashbin {
			return "", problem.NotFound("there is no message %s in the trashbin", m.ID)
		}
		if err := requireRight(c, m, deleteRight(m)); err != nil {
			return "", err
		}
		return purgedSummary(m.ID, m.Status), q.PurgeMessage(c.Request.Context(), m.ID, at)
	})
}

// inTrashbin turns a message's resource into its trashbin form: when and by whom it was deleted, its self
// link in the trashbin and the link that restores it. Its print, portal view, forms and attachments belong
// to the mailbox and are gone while it is in the trashbin.
func (h *lifecycleHandlers) inTrashbin(c *gin.Context, r messageResource, id string, deletedAt time.Time, deletedBy string) messageResource {
	at := render.TimestampOf(deletedAt)
	r.DeletedDateTime, r.DeletedBy = &at, deletedBy
	r.Links = messageLinks{
		Self:     render.Link{Href: messagesURL(c) + "/trashbin/" + url.PathEscape(id)},
		Metadata: r.Links.Metadata,
		Restore:  &render.Link{Href: messagesURL(c) + "/" + url.PathEscape(id) + "/restore"},
	}
	return r
}

// listTrashbin lists the reportee's trashbin, newest deletion first, with the OData options of the mailbox.
func (h *lifecycleHandlers) listTrashbin(c *gin.Context) {
	party, rights := reporteeOf(c)
	coll, ok := listPage(c, "messages", func(lq store.ListQuery) ([]store.TrashedMessage, bool, error) {
		return h.mailbox.q.ListTrashbin(c.Request.Context(), party.ID, rights.Visibility(), lq)
	}, func(m store.TrashedMessage) messageResource {
		return h.inTrashbin(c, h.mailbox.messageResource(baseURL(c), messagesURL(c), m.MessageSummary, nil), m.MessageID, m.DeletedAt, m.DeletedBy)
	})
	if !ok {
		return
	}
	coll.Links.Add("find", render.Link{Href: messagesURL(c) + "/trashbin/{MessageId}", IsTemplated: true})
	respond(c, http.StatusOK, coll)
}

// getTrashedMessage is the single view of a message of the trashbin; reading it there does not mark it read.
func (h *lifecycleHandlers) getTrashedMessage(c *gin.Context) {
	party, rights := reporteeOf(c)
	id := c.Param("messageId")
	m, err := h.mailbox.messages.VisibleInTrashbin(c.Request.Context(), party.ID, rights, id)
	if found(c, err, func() *problem.Problem { return problem.NotFound("there is no message %s in the trashbin", id) }) {
		respond(c, http.StatusOK, h.inTrashbin(c, h.mailbox.singleMessage(c, m), m.MessageID, *m.DeletedAt, m.DeletedBy))
	}
}
