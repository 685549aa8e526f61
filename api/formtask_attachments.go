package api

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

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
	att, err := revisionAttachment(body, "body")
	if err != nil {
		abort(c, err)
		return
	}
	res, err := ft.tasks.AddAttachment(c.Request.Context(), ft.task, ft.caller, att)
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", fmt.Sprintf("%s/%s/attachments/%d", messagesURL(c), ft.msg.MessageID, res.AttachmentID))
	c.Status(http.StatusCreated)
}

// postStreamedAttachment is POST .../attachments/streamedattachment?fileName=&attachmentType=: the raw
// bytes of a larger attachment, streamed into the store. The file name and the service's AttachmentRules
// are checked before a byte is read (400 for a name that is no plain file name, 415 for a file type the
// type does not allow, 400 for an unknown type or one already at its count) and while reading (400 for
// content that is empty, executable or not what the name says, judged on the first bytes; 413 past
// MaxFileSize); a refused upload keeps nothing. The body is the file's bytes whatever Content-Type says
// (clients send application/hal+json too): the rules check the file itself.
func (h *formTaskHandlers) postStreamedAttachment(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	name, typ := c.Query("fileName"), c.Query("attachmentType")
	v := formtask.CheckFileName(name)
	var rule store.AttachmentRule
	if v == nil {
		rule, v = formtask.AttachmentRuleOf(ft.svc, typ)
	}
	if v == nil {
		v = formtask.CheckFileType(rule, name)
	}
	if v == nil {
		v = formtask.CheckFileSize(rule, name, c.Request.ContentLength)
	}
	if v == nil {
		count := 0
		for _, a := range ft.msg.Attachments {
			if a.AttachmentType == rule.AttachmentTypeName {
				count++
			}
		}
		v = formtask.CheckAttachmentCount(rule, count+1, false)
	}
	if v != nil {
		abort(c, v.Refusal(""))
		return
	}
	att := store.RevisionAttachment{Name: name, FileName: name, AttachmentType: typ}
	body := checkedBody{body: c.Request.Body, check: formtask.NewContentCheck(name)}
	res, err := ft.tasks.AddStreamedAttachment(c.Request.Context(), ft.task, ft.caller, att, body, rule.MaxFileSize)
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", fmt.Sprintf("%s/%s/attachments/%d", messagesURL(c), ft.msg.MessageID, res.AttachmentID))
	c.Status(http.StatusCreated)
}
