package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
)

// A form task in progress (Utfylling, Signering) belongs to its workflow: moving it to the trashbin,
// restoring it and deleting it for good are updates of the workflow (formtask/workflow_place.go),
// which makes the change and its audit entry in one transaction of its activity. The answers are those of
// the plain changes of mailbox.Lifecycle, so a client cannot tell the two ways apart.

// placeChanges are, per workflow update, the audit action, the summary, and the refusal of a task that is
// not where the change takes it from (as mailbox.Lifecycle refuses it).
var placeChanges = map[string]struct {
	action   string
	summary  func(id, status string) string
	misplace func(id string) error
}{
	formtask.UpdateTrash: {store.AuditDelete, mailbox.TrashedSummary, func(id string) error {
		return &mailbox.Error{Kind: mailbox.NotFound, Detail: fmt.Sprintf("there is no message %s in this mailbox; it is in the trashbin", id)}
	}},
	formtask.UpdateRestore: {store.AuditRestore, mailbox.RestoredSummary, func(id string) error {
		return &mailbox.Error{Kind: mailbox.NotInTrashbin, Detail: fmt.Sprintf("message %s is in the mailbox, not in the trashbin", id)}
	}},
	formtask.UpdatePurge: {store.AuditDeleteForGood, mailbox.PurgedSummary, func(id string) error {
		return &mailbox.Error{Kind: mailbox.NotFound, Detail: fmt.Sprintf("there is no message %s in the trashbin", id)}
	}},
}

// changeTaskPlace makes change (a formtask.Update* of placeChanges) of the path's message through its
// workflow when it is a form task in progress the caller can see, and answers the request: 204, or 200
// with the message for a restore. It returns false, having answered nothing, for any other message — and
// for a task archived meanwhile, whose workflow has ended: mailbox.Lifecycle then makes the change.
func (h *lifecycleHandlers) changeTaskPlace(c *gin.Context, change string) bool {
	ctx := c.Request.Context()
	party, rights := reporteeOf(c)
	id := c.Param("messageId")
	task, err := h.mailbox.q.GetFormTask(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false
	case err != nil:
		abort(c, err)
		return true
	}
	svc := store.ServiceKey{Code: task.ServiceCode, Edition: task.ServiceEdition}
	if task.ReporteeID != identity.ReporteeID(party.ID) || task.Status == taskstatus.Archived || !rights.Visibility().Allows(svc, task.Status) {
		return false
	}
	tasks, ok := h.tasks.formTasksOrUnavailable(c)
	if !ok {
		return true
	}
	p := placeChanges[change]
	state := store.MessageState{ID: id, Type: store.TypeFormTask, Status: task.Status, Service: svc, InTrashbin: task.InTrashbin}
	if err := h.placeRefusal(c, change, state); err != nil {
		abort(c, err)
		return true
	}
	var expect *formtask.Expectation
	if _, ok := c.Request.Header["If-Match"]; ok {
		// task.Revision was read with the status before the ETag is checked: a change in between makes the
		// workflow's check fail, never pass.
		if err := h.checkUnchanged(c, h.mailbox.q, party.ID, id); err != nil {
			abort(c, err)
			return true
		}
		expect = &formtask.Expectation{Revision: task.Revision, Status: task.Status}
	}
	audit := auditEntry(c, party.ID, p.action, clock.Now())
	audit.Summary = p.summary(id, task.Status)
	_, err = tasks.ChangePlace(ctx, task, change, formtask.PlaceInput{
		Caller: caller(principalOf(c), rights, svc), Audit: audit, Expect: expect})
	var refused *formtask.Error
	if errors.As(err, &refused) {
		switch refused.Kind {
		case formtask.Conflict:
			if refused.Status == taskstatus.Archived {
				return false
			}
		case formtask.InTrashbin, formtask.NotInTrashbin:
			err = p.misplace(id)
		case formtask.PreconditionFailed:
			h.tasks.tagCurrent(c)
		}
	}
	if err != nil {
		abort(c, err)
		return true
	}
	if change != formtask.UpdateRestore {
		c.Status(http.StatusNoContent)
		return true
	}
	m, ok := h.mailbox.loadMessage(c)
	if ok {
		respond(c, http.StatusOK, h.mailbox.singleMessage(c, m))
	}
	return true
}

// placeRefusal refuses, as mailbox.Lifecycle would, a place change of a task in progress that the caller may
// not make (Delete on the service) or that the task's place does not allow; the workflow checks both again
// in the step that makes the change.
func (h *lifecycleHandlers) placeRefusal(c *gin.Context, change string, m store.MessageState) error {
	_, rights := reporteeOf(c)
	misplaced := m.InTrashbin
	if change != formtask.UpdateTrash {
		misplaced = !m.InTrashbin
	}
	if change == formtask.UpdateRestore { // restore names the right first, as mailbox.Lifecycle does
		if err := mailbox.RequireRight(rights, m, identity.Delete); err != nil {
			return err
		}
	}
	if misplaced {
		return placeChanges[change].misplace(m.ID)
	}
	return mailbox.RequireRight(rights, m, identity.Delete)
}

// refuseTrashedTask answers a change of a form task that is in the trashbin, which the mailbox no longer
// shows: 409 in-trashbin, with the status it keeps, rather than the 404 of a message that does not exist
// (which its reads, validate and print, still answer: they belong to the mailbox). It returns
// store.ErrNotFound for any other message.
func (h *formTaskHandlers) refuseTrashedTask(c *gin.Context, partyID int64, rights identity.RightSet, id string) error {
	m, err := h.q.GetTrashedMessage(c.Request.Context(), partyID, id)
	if err != nil {
		return err
	}
	if m.Type != store.TypeFormTask || !rights.Visibility().Allows(m.Service(), m.Status) {
		return store.ErrNotFound
	}
	p := problem.New(http.StatusConflict, "in-trashbin", "form task %s is in the trashbin; restore it (PUT …/messages/%s/restore) before changing it", id, id)
	p.TaskStatus = m.Status
	return p
}
