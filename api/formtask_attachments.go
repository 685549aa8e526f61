package api

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// The attachments of a form task in Utfylling: uploads (base64 in JSON, or streamed), new content for one,
// and its removal. A client may send the SHA-256 of an upload for a type with IsCheckSumAllowed: in the
// body's CheckSum (hex) or, streamed, as Content-Digest: sha-256=:<base64>: (RFC 9530); a sum that does
// not match keeps nothing (400 checksum-mismatch), one for a type that does not allow it is 400
// checksum-not-allowed.

// postAttachment is POST .../attachments: a base64 attachment on a form task in Utfylling.
func (h *formTaskHandlers) postAttachment(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	var body attachmentBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	att, err := formtask.RevisionAttachmentOf(ft.Service, body.input(), "body")
	if err != nil {
		abort(c, err)
		return
	}
	res, err := ft.tasks.AddAttachment(c.Request.Context(), ft.Task, ft.Caller, att,
		messageAudit(c, formtask.AuditAddAttachment, "attachment %s (%s) added", att.FileName, att.AttachmentType))
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", fmt.Sprintf("%s/%s/attachments/%d", messagesURL(c), ft.Message.MessageID, res.AttachmentID))
	c.Status(http.StatusCreated)
}

// postStreamedAttachment is POST .../attachments/streamedattachment?fileName=&attachmentType=: the raw
// bytes of a larger attachment, streamed into the store. The file name and the service's AttachmentRules
// are checked before a byte is read (400 for a name that is no plain file name, 415 for a file type the
// type does not allow, 400 for an unknown type or one already at its count) and while reading (400 for
// content that is empty, executable or not what the name says, judged on the first bytes; 413 past
// MaxFileSize; 400 for a Content-Digest the bytes do not match); a refused upload keeps nothing. The body
// is the file's bytes whatever Content-Type says (clients send application/hal+json too): the rules check
// the file itself.
func (h *formTaskHandlers) postStreamedAttachment(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	name, typ := c.Query("fileName"), c.Query("attachmentType")
	rule, err := ft.NewAttachment(name, typ, c.Request.ContentLength)
	if err != nil {
		abort(c, err)
		return
	}
	body, err := newCheckedBody(c, ft.Service, name, typ)
	if err != nil {
		abort(c, err)
		return
	}
	att := formtask.RevisionAttachment{Name: name, FileName: name, AttachmentType: typ}
	res, err := ft.tasks.AddStreamedAttachment(c.Request.Context(), ft.Task, ft.Caller, att, body, rule.MaxFileSize,
		messageAudit(c, formtask.AuditAddAttachment, "attachment %s (%s) added", name, typ))
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", fmt.Sprintf("%s/%s/attachments/%d", messagesURL(c), ft.Message.MessageID, res.AttachmentID))
	c.Status(http.StatusCreated)
}

// taskAttachment finds the attachment of the path on the form task, or answers 404.
func taskAttachment(c *gin.Context, ft formTaskCall) (store.Attachment, bool) {
	id, ok := pathID(c, "attachmentId", "attachment")
	if !ok {
		return store.Attachment{}, false
	}
	for _, a := range ft.Message.Attachments {
		if a.ID == id {
			return a, true
		}
	}
	abort(c, problem.NotFound("there is no attachment %d on message %s", id, ft.Message.MessageID))
	return store.Attachment{}, false
}

// attachmentETag is the ETag a GET of the attachment gives, "" when the message has no such attachment.
func attachmentETag(m store.Message, id int64) string {
	for _, a := range m.Attachments {
		if a.ID == id {
			return `"` + hex.EncodeToString(a.SHA256) + `"`
		}
	}
	return ""
}

// replaceAttachment is POST …/attachments/{attachmentId}: new content for an attachment of a form task in
// Utfylling (204), checked as an upload is; it keeps its id and its type. With Content-Type
// application/octet-stream the body is the file's bytes (?fileName= names it, else it keeps its name;
// Content-Digest as for streamed uploads), otherwise it is JSON as for POST …/attachments ({FileName, Data,
// CheckSum}; FileName optional, AttachmentType, if given, the attachment's own). If-Match names the
// attachment's ETag.
func (h *formTaskHandlers) replaceAttachment(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	old, ok := taskAttachment(c, ft)
	if !ok {
		return
	}
	rule, v := formtask.AttachmentRuleOf(ft.Service, old.AttachmentType)
	if v != nil {
		abort(c, v.Refusal(""))
		return
	}
	name, body, size, err := replacementOf(c, ft.Service, old)
	if err != nil {
		abort(c, err)
		return
	}
	if v := formtask.StreamChecks(rule, name, size); v != nil {
		abort(c, v.Refusal(""))
		return
	}
	expect, ok := expectation(c, ft, func(m store.Message) (string, error) { return attachmentETag(m, old.ID), nil })
	if !ok {
		return
	}
	att := formtask.RevisionAttachment{Name: old.Name, FileName: name, AttachmentType: old.AttachmentType}
	_, err = ft.tasks.ReplaceAttachment(c.Request.Context(), ft.Task, ft.Caller, old.ID, att, body, rule.MaxFileSize, expect,
		messageAudit(c, formtask.AuditReplaceAttachment, "attachment %d (%s) replaced by %s", old.ID, old.FileName, name))
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", fmt.Sprintf("%s/attachments/%d", messageURL(c), old.ID))
	c.Status(http.StatusNoContent)
}

// replacementOf reads the new content of attachment old from the request: its file name, its bytes and
// their size (-1 when a stream does not say).
func replacementOf(c *gin.Context, svc store.ServiceDetail, old store.Attachment) (string, io.Reader, int64, error) {
	if strings.EqualFold(strings.TrimSpace(strings.Split(c.ContentType(), ";")[0]), "application/octet-stream") {
		name := c.DefaultQuery("fileName", old.FileName)
		body, err := newCheckedBody(c, svc, name, old.AttachmentType)
		return name, body, c.Request.ContentLength, err
	}
	var b attachmentBody
	if err := bindJSON(c, &b); err != nil {
		return "", nil, 0, err
	}
	if b.AttachmentType != "" && string(b.AttachmentType) != old.AttachmentType {
		return "", nil, 0, problem.BadRequest("attachment %d is of type %s, not %q; new content keeps the type", old.ID, old.AttachmentType, b.AttachmentType)
	}
	if b.FileName == "" {
		b.FileName = jsonText(old.FileName)
	}
	b.AttachmentType = jsonText(old.AttachmentType)
	att, err := formtask.RevisionAttachmentOf(svc, b.input(), "body")
	if err != nil {
		return "", nil, 0, err
	}
	return att.FileName, bytes.NewReader(att.Data), int64(len(att.Data)), nil
}

// deleteAttachment is DELETE …/attachments/{attachmentId}: the attachment leaves the form task (204); the
// minimum counts of the attachment rules hold only when the task is completed. If-Match names the
// attachment's ETag.
func (h *formTaskHandlers) deleteAttachment(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	att, ok := taskAttachment(c, ft)
	if !ok {
		return
	}
	expect, ok := expectation(c, ft, func(m store.Message) (string, error) { return attachmentETag(m, att.ID), nil })
	if !ok {
		return
	}
	_, err := ft.tasks.DeleteAttachment(c.Request.Context(), ft.Task, ft.Caller, att.ID, expect,
		messageAudit(c, formtask.AuditDeleteAttachment, "attachment %d (%s) deleted", att.ID, att.FileName))
	if err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
