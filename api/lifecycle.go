package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
)

// The life of a message in the mailbox (archive, confirm, the trashbin, restore, the delete for good) is
// the mailbox room's (mailbox.Lifecycle; form tasks in progress move through their workflow there). These
// handlers parse, call one of its functions and render.

// lifecycleHandlers serve the changes of a message's place and state, and the trashbin.
type lifecycleHandlers struct {
	lifecycle *mailbox.Lifecycle
	mailbox   *mailboxHandlers  // the views a change answers with
	tasks     *formTaskHandlers // the workflows of form tasks in progress
}

// actor is the caller of a change of a message, as the mailbox records it.
func actor(c *gin.Context) mailbox.Actor {
	party, rights := reporteeOf(c)
	return mailbox.Actor{Principal: principalOf(c), Rights: rights, Audit: auditEntry(c, party.ID, "", time.Time{})}
}

// unchanged holds a change of the locked message to its If-Match, if it has one (nil without): the
// message's ETag as it is now (as a GET answers it; none once it is in the trashbin) must be named.
func (h *lifecycleHandlers) unchanged(c *gin.Context) mailbox.Unchanged {
	if _, ok := c.Request.Header["If-Match"]; !ok {
		return nil
	}
	return func(m store.Message, inMailbox bool) error {
		tag := ""
		if inMailbox {
			var err error
			if tag, err = resourceETag(c, h.mailbox.singleMessage(c, m)); err != nil {
				return err
			}
		}
		return checkIfMatch(c, tag)
	}
}

// A change is one of the lifecycle's changes of message id of a reportee, by an actor, held to unchanged;
// a changeLeaving also returns the message it left.
type (
	change        func(ctx context.Context, reportee int64, id string, a mailbox.Actor, unchanged mailbox.Unchanged) error
	changeLeaving func(ctx context.Context, reportee int64, id string, a mailbox.Actor, unchanged mailbox.Unchanged) (store.Message, error)
)

// answer makes the change of the message of the path and renders the message it left, or its refusal.
func (h *lifecycleHandlers) answer(c *gin.Context, change changeLeaving) {
	party, _ := reporteeOf(c)
	m, err := change(c.Request.Context(), party.ID, c.Param("messageId"), actor(c), h.unchanged(c))
	if err != nil {
		h.refused(c, err)
		return
	}
	respond(c, http.StatusOK, h.mailbox.singleMessage(c, m))
}

// answerEmpty makes the change of the message of the path and answers 204, or its refusal.
func (h *lifecycleHandlers) answerEmpty(c *gin.Context, change change) {
	party, _ := reporteeOf(c)
	if err := change(c.Request.Context(), party.ID, c.Param("messageId"), actor(c), h.unchanged(c)); err != nil {
		h.refused(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// refused answers a refused change; one a task's workflow refused for a stale If-Match carries the
// message's current ETag, as a plain change's does.
func (h *lifecycleHandlers) refused(c *gin.Context, err error) {
	var e *formtask.Error
	if errors.As(err, &e) && e.Kind == formtask.PreconditionFailed {
		h.tasks.tagCurrent(c)
	}
	abort(c, err)
}

// The handlers of the lifecycle's changes of the message of the path: archive files a correspondence away
// (Arkivert); confirm confirms one that asks for it, and so marks it read; restore puts a message of the
// trashbin back into the mailbox, in the status it had (each answered with the message as it is left);
// trash moves a message to the trashbin and purge deletes one of the trashbin for good (each answered 204).

func (h *lifecycleHandlers) archiveMessage(c *gin.Context) { h.answer(c, h.lifecycle.Archive) }
func (h *lifecycleHandlers) confirmMessage(c *gin.Context) { h.answer(c, h.lifecycle.Confirm) }
func (h *lifecycleHandlers) restoreMessage(c *gin.Context) { h.answer(c, h.lifecycle.Restore) }
func (h *lifecycleHandlers) deleteMessage(c *gin.Context)  { h.answerEmpty(c, h.lifecycle.Trash) }
func (h *lifecycleHandlers) purgeMessage(c *gin.Context)   { h.answerEmpty(c, h.lifecycle.Purge) }

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
	respondList(c, "messages", func(lq store.ListQuery) ([]mailbox.TrashedMessage, bool, error) {
		return h.mailbox.lists.Trashbin(c.Request.Context(), party.ID, rights.Visibility(), lq)
	}, func(m mailbox.TrashedMessage) messageResource {
		return h.inTrashbin(c, h.mailbox.messageResource(baseURL(c), messagesURL(c), m.MessageSummary, nil), m.MessageID, m.DeletedAt, m.DeletedBy)
	}, findLink(messagesURL(c)+"/trashbin/{MessageId}"))
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
