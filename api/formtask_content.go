package api

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// The forms and attachments of a message as collections, and the changes of one form of a form task in
// Utfylling; the changes go through the task's workflow, each promoted with its audit entry in one
// transaction (store.PromoteRevision).

// attachmentResource is an attachment of a message in the collection of its attachments; its self link is
// the attachment link the message shows.
type attachmentResource struct {
	AttachmentID    int64 `json:"AttachmentId"`
	Name            string
	FileName        string
	AttachmentType  string
	FileSize        int64
	Encrypted       bool
	SigningLocked   bool
	SignedByDefault bool
	Links           render.Links `json:"_links"`
}

// messageURL is the address of the message of the path.
func messageURL(c *gin.Context) string {
	return messagesURL(c) + "/" + url.PathEscape(c.Param("messageId"))
}

// formsOf is the collection of the forms of a form task.
func formsOf(c *gin.Context, m store.Message) render.Collection {
	forms := make([]formResource, len(m.Forms))
	for i, f := range m.Forms {
		forms[i] = formResourceOf(c, f)
	}
	var links render.Links
	links.Add("self", render.Link{Href: messageURL(c) + "/forms"})
	links.Add("message", render.Link{Href: messageURL(c)})
	return render.Collection{Links: links, Embedded: render.EmbedList("forms", forms)}
}

// listForms is GET …/forms: the forms of a form task (a correspondence has none: 409).
func (h *mailboxHandlers) listForms(c *gin.Context) {
	m, ok := h.loadMessage(c)
	if !ok {
		return
	}
	if err := formtask.OnlyFormTask(m, ": only a form task has forms"); err != nil {
		abort(c, err)
		return
	}
	respondTagged(c, formsOf(c, m))
}

// listAttachments is GET …/attachments: the attachments of a message of either type.
func (h *mailboxHandlers) listAttachments(c *gin.Context) {
	m, ok := h.loadMessage(c)
	if !ok {
		return
	}
	self := h.singleMessage(c, m).Links.Attachment
	items := make([]attachmentResource, len(m.Attachments))
	for i, a := range m.Attachments {
		items[i] = attachmentResource{AttachmentID: a.ID, Name: a.Name, FileName: a.FileName, AttachmentType: a.AttachmentType,
			FileSize: a.FileSize, Encrypted: a.Encrypted, SigningLocked: a.SigningLocked, SignedByDefault: a.SignedByDefault}
		items[i].Links.Add("self", self[i])
	}
	var links render.Links
	links.Add("self", render.Link{Href: messageURL(c) + "/attachments"})
	links.Add("message", render.Link{Href: messageURL(c)})
	respondTagged(c, render.Collection{Links: links, Embedded: render.EmbedList("attachments", items)})
}

// messageAudit is the audit entry of a change of the message of the path, written with the change.
func messageAudit(c *gin.Context, action, format string, args ...any) *store.MessageAuditEntry {
	party, _ := reporteeOf(c)
	e := store.MessageAuditEntry{Entry: auditEntry(c, party.ID, action, time.Time{}), MessageID: c.Param("messageId")}
	e.Summary = fmt.Sprintf(format, args...)
	return &e
}

// beginSubForm is beginFormTask for a sub-form change, with the sub-form of its body.
func (h *formTaskHandlers) beginSubForm(c *gin.Context) (formTaskCall, formtask.RevisionForm, bool) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return ft, formtask.RevisionForm{}, false
	}
	var body formBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return ft, formtask.RevisionForm{}, false
	}
	form, err := ft.SubForm(body.input())
	if err != nil {
		abort(c, err)
		return ft, formtask.RevisionForm{}, false
	}
	return ft, form, true
}

// postForm is POST …/forms: a new sub-form (201, Location of the form). If-Match names the forms
// collection as it was read.
func (h *formTaskHandlers) postForm(c *gin.Context) {
	ft, form, ok := h.beginSubForm(c)
	if !ok {
		return
	}
	expect, ok := expectation(c, ft, func(m store.Message) (string, error) { return resourceETag(c, formsOf(c, m)) })
	if !ok {
		return
	}
	res, err := ft.tasks.PutSubForm(c.Request.Context(), ft.Task, ft.Caller, 0, form, expect,
		messageAudit(c, formtask.AuditPutSubForm, "sub-form %s/%d added", form.DataFormatID, form.DataFormatVersion))
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", fmt.Sprintf("%s/forms/%d", messageURL(c), res.FormID))
	c.Status(http.StatusCreated)
}

// beginForm is beginFormTask for a change of the form of the path, which it finds on the task (else 404).
func (h *formTaskHandlers) beginForm(c *gin.Context) (formTaskCall, store.Form, bool) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return ft, store.Form{}, false
	}
	id, ok := pathID(c, "formId", "form")
	if !ok {
		return ft, store.Form{}, false
	}
	i := slices.IndexFunc(ft.Message.Forms, func(f store.Form) bool { return f.ID == id })
	if i < 0 {
		abort(c, problem.NotFound("there is no form %d on message %s", id, ft.Message.MessageID))
		return ft, store.Form{}, false
	}
	return ft, ft.Message.Forms[i], true
}

// deleteForm is DELETE …/forms/{formId}: a sub-form leaves the form task (204); the main form cannot (409).
func (h *formTaskHandlers) deleteForm(c *gin.Context) {
	ft, form, ok := h.beginForm(c)
	if !ok {
		return
	}
	expect, ok := expectation(c, ft, func(m store.Message) (string, error) { return h.formETag(c, m, form.ID) })
	if !ok {
		return
	}
	_, err := ft.tasks.DeleteForm(c.Request.Context(), ft.Task, ft.Caller, form, expect,
		messageAudit(c, formtask.AuditDeleteForm, "sub-form %d (%s) deleted", form.ID, form.Name))
	if err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// getFormPrint is GET …/forms/{formId}/print: the PDF of one form of a form task, as it is now.
func (h *formTaskHandlers) getFormPrint(c *gin.Context) {
	ft, form, ok := h.beginForm(c)
	if !ok {
		return
	}
	id := form.ID
	pdf, err := ft.tasks.PrintForm(c.Request.Context(), ft.Task, ft.Caller, id)
	if err != nil {
		abort(c, err)
		return
	}
	name := fmt.Sprintf("%s-%d.pdf", ft.Message.MessageID, id)
	c.Header("Content-Disposition", fmt.Sprintf(`inline; filename="%s"`, name))
	serveContent(c, name, ft.Message.LastChangedDateTime, bytes.NewReader(pdf))
}
