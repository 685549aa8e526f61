package api

import (
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
)

// expectation turns the If-Match of a change into what the task's workflow must find when it makes the
// change (nil without If-Match), after checking the ETag against the resource as beginFormTask read it
// (tagOf the message; 412 at once when stale).
func expectation(c *gin.Context, ft formTaskCall, tagOf func(store.Message) (string, error)) (*formtask.Expectation, bool) {
	if !ft.Conditional {
		return nil, true
	}
	tag, err := tagOf(ft.Message)
	if err == nil {
		err = checkIfMatch(c, tag)
	}
	if err != nil {
		abort(c, err)
		return nil, false
	}
	return ft.Expectation(), true
}

// formETag is the ETag a GET of the form gives with the request's Accept, "" when the message has no
// such form (an If-Match then fails).
func (h *formTaskHandlers) formETag(c *gin.Context, m store.Message, formID int64) (string, error) {
	if formID == 0 {
		return "", nil
	}
	party, _ := reporteeOf(c)
	f, err := h.mailbox.messages.FormOf(c.Request.Context(), party.ID, m, formID)
	var refused *mailbox.Error
	if errors.As(err, &refused) && refused.Kind == mailbox.NotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if mt, ok := render.PickMediaType(c.GetHeader("Accept")); ok {
		render.SetFormat(c, mt)
	}
	return resourceETag(c, formResourceOf(c, f))
}

// tagCurrent answers a change its workflow refused for a stale If-Match with the message's current ETag.
func (h *formTaskHandlers) tagCurrent(c *gin.Context) {
	party, rights := reporteeOf(c)
	m, err := h.mailbox.messages.Visible(c.Request.Context(), party.ID, rights, c.Param("messageId"))
	if err != nil {
		return
	}
	if tag, err := resourceETag(c, h.mailbox.singleMessage(c, m)); err == nil {
		c.Header("ETag", tag)
	}
}
