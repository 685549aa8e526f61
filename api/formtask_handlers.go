package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// formTaskHandlers answer the changes of form tasks; the form-task service carries them to their
// workflows. They answer with the message as the mailbox renders it.
type formTaskHandlers struct {
	formTasks *formtask.Service
	log       *slog.Logger
	mailbox   *mailboxHandlers
}

// formTasksOrUnavailable is the form-task service, or a 503 when this API runs without Temporal.
func (h *formTaskHandlers) formTasksOrUnavailable(c *gin.Context) (*formtask.Service, bool) {
	if h.formTasks == nil {
		abort(c, formtask.ErrUnavailable())
		return nil, false
	}
	return h.formTasks, true
}

// formTaskCall is what every change of an existing form task starts from, with the service that carries it.
type formTaskCall struct {
	formtask.Call
	tasks *formtask.Service
}

// beginFormTask loads the form task of the path, its service and the caller's facts, or answers the
// request.
func (h *formTaskHandlers) beginFormTask(c *gin.Context) (formTaskCall, bool) {
	tasks, ok := h.formTasksOrUnavailable(c)
	if !ok {
		return formTaskCall{}, false
	}
	party, rights := reporteeOf(c)
	id := c.Param("messageId")
	_, conditional := c.Request.Header["If-Match"]
	call, err := tasks.Begin(c.Request.Context(), party.ID, principalOf(c), rights, id, conditional && c.Request.Method != http.MethodGet,
		func(ctx context.Context) (store.Message, error) {
			m, err := h.mailbox.messages.Visible(ctx, party.ID, rights, id)
			if errors.Is(err, store.ErrNotFound) && c.Request.Method != http.MethodGet { // a read finds nothing there
				err = tasks.TrashedTask(ctx, party.ID, rights, id)
			}
			return m, err
		})
	if !found(c, err, func() *problem.Problem { return problem.NotFound("there is no message %s in this mailbox", id) }) {
		return formTaskCall{}, false
	}
	return formTaskCall{Call: call, tasks: tasks}, true
}

// putFormTask is PUT /api/{who}/messages/{id}?complete=&sign=: replace the forms and attachments and move
// the task as the state table says.
func (h *formTaskHandlers) putFormTask(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	complete, sign, err := formTaskParams(c, true)
	if err != nil {
		abort(c, err)
		return
	}
	var body formTaskBody
	if err := bindFormTaskBody(c, &body); err != nil {
		abort(c, err)
		return
	}
	forms, attachments, err := formtask.RevisionContent(ft.Service, body.content())
	if err != nil {
		abort(c, err)
		return
	}
	expect, ok := expectation(c, ft, func(m store.Message) (string, error) {
		return resourceETag(c, h.mailbox.singleMessage(c, m))
	})
	if !ok {
		return
	}
	res, err := ft.tasks.Submit(c.Request.Context(), ft.Task, ft.Caller,
		formtask.Submission{Complete: complete, Sign: sign, Forms: forms, Attachments: attachments, Expect: expect,
			Signer: formtask.PersonSigner(principalOf(c))})
	var refused *formtask.Error
	if errors.As(err, &refused) && refused.Kind == formtask.PreconditionFailed {
		h.tagCurrent(c)
	}
	if err != nil {
		abort(c, err)
		return
	}
	h.renderChanged(c, http.StatusOK, ft.Message, res)
}

// postFormTask is POST /api/{who}/messages?complete=&sign=: a new form task of a service, empty or with
// content; kept in Utfylling without complete and sign, else moved by them as a PUT would (the content is
// then required).
func (h *formTaskHandlers) postFormTask(c *gin.Context) {
	tasks, ok := h.formTasksOrUnavailable(c)
	if !ok {
		return
	}
	// Without complete and sign the new task stays in Utfylling; with either, they move it as on a PUT.
	complete, sign, err := formTaskParams(c, c.Query("complete") != "" || c.Query("sign") != "")
	if err != nil {
		abort(c, err)
		return
	}
	var body formTaskBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	party, rights := reporteeOf(c)
	created, res, err := tasks.Start(c.Request.Context(), party.ID, principalOf(c), rights, body.content(), complete, sign)
	if err != nil {
		abort(c, err)
		return
	}
	c.Params = append(c.Params, gin.Param{Key: "messageId", Value: created.MessageID})
	c.Header("Location", messagesURL(c)+"/"+created.MessageID)
	h.renderChanged(c, http.StatusCreated, created, res)
}

// rereadBackoff are the pauses between reads of a message a change has just been applied to.
var rereadBackoff = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, time.Second}

// renderChanged answers a change its workflow has completed with the message as it is now. The change is
// done whatever happens here, so it is never answered as a failure: a read that fails is tried again, and
// if it keeps failing (or the caller may no longer see the message) the answer is the message as it was
// before, with the outcome the update returned (status, ArchiveReference) and without form and attachment
// links, whose ids the change may have replaced.
func (h *formTaskHandlers) renderChanged(c *gin.Context, status int, before store.Message, res formtask.Result) {
	ctx := c.Request.Context()
	party, rights := reporteeOf(c)
	var err error
	for attempt := 0; ; attempt++ {
		var m store.Message
		m, err = h.mailbox.messages.Visible(ctx, party.ID, rights, before.MessageID)
		if err == nil {
			r := h.mailbox.singleMessage(c, m)
			if tag, err := resourceETag(c, r); err == nil {
				c.Header("ETag", tag)
			}
			respond(c, status, r)
			return
		}
		if errors.Is(err, store.ErrNotFound) || attempt == len(rereadBackoff) || !sleepCtx(ctx, rereadBackoff[attempt]) {
			break
		}
	}
	h.log.WarnContext(ctx, "a completed change is answered from its outcome: the message could not be read again",
		"err", err, "message", before.MessageID, "status", res.Status, "request_id", requestID(c))
	m := before
	m.Status, m.LastChangedBy = res.Status, principalOf(c).Name
	if res.ArchiveReference != "" {
		m.ArchiveReference = res.ArchiveReference
	}
	m.Forms, m.Attachments = nil, nil
	respond(c, status, h.mailbox.singleMessage(c, m))
}

// sleepCtx waits d, or less when ctx ends first; it says whether it waited d.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// putSubForm is PUT .../forms/{formId}: change that sub-form, or add one when formId names none.
func (h *formTaskHandlers) putSubForm(c *gin.Context) {
	ft, form, ok := h.beginSubForm(c)
	if !ok {
		return
	}
	formID, _ := strconv.ParseInt(c.Param("formId"), 10, 64)
	target, exists, err := ft.SubFormTarget(formID)
	if err != nil {
		abort(c, err)
		return
	}
	expect, ok := expectation(c, ft, func(m store.Message) (string, error) {
		return h.formETag(c, m, target)
	})
	if !ok {
		return
	}
	res, err := ft.tasks.PutSubForm(c.Request.Context(), ft.Task, ft.Caller, target, form, expect,
		messageAudit(c, formtask.AuditPutSubForm, "sub-form %s/%d written", form.DataFormatID, form.DataFormatVersion))
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", fmt.Sprintf("%s/%s/forms/%d", messagesURL(c), ft.Message.MessageID, res.FormID))
	status := http.StatusOK
	if !exists {
		status = http.StatusCreated
	}
	c.Status(status)
}

type validationResource struct {
	formtask.ValidationResult
	Links render.Links `json:"_links"`
}

// validateFormTask is GET .../validate: the validation result of the current forms, no state change.
func (h *formTaskHandlers) validateFormTask(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	res, err := ft.tasks.Validate(c.Request.Context(), ft.Task, ft.Caller)
	if err != nil {
		abort(c, err)
		return
	}
	r := validationResource{ValidationResult: res}
	r.Links.Add("self", render.Link{Href: messagesURL(c) + "/" + url.PathEscape(ft.Message.MessageID) + "/validate"})
	r.Links.Add("message", render.Link{Href: messagesURL(c) + "/" + url.PathEscape(ft.Message.MessageID)})
	respond(c, http.StatusOK, r)
}

// getPrint is GET .../print: the PDF of a form task, its archive's once archived.
func (h *formTaskHandlers) getPrint(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	pdf, err := ft.tasks.Print(c.Request.Context(), ft.Task, ft.Caller)
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Content-Disposition", fmt.Sprintf(`inline; filename="%s.pdf"`, ft.Message.MessageID))
	serveContent(c, ft.Message.MessageID+".pdf", ft.Message.LastChangedDateTime, bytes.NewReader(pdf))
}
