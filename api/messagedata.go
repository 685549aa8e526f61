package api

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
)

// signingTextResource is the text the signer of a form task confirms, in one language.
type signingTextResource struct {
	SigningText    string
	Language       int
	ServiceCode    string
	ServiceEdition int
	Links          render.Links `json:"_links"`
}

// getSigningText is GET …/{messageId}/signingtext[?language=]: the text a signer of the form task confirms,
// the service's own or the default text of the language (bokmål unless asked).
func (h *mailboxHandlers) getSigningText(c *gin.Context) {
	m, ok := h.loadMessage(c)
	if !ok {
		return
	}
	text, language, err := h.tasks.SigningText(c.Request.Context(), m, languageOf(c))
	if err != nil {
		abort(c, err)
		return
	}
	r := signingTextResource{SigningText: text, Language: language, ServiceCode: m.ServiceCode, ServiceEdition: m.ServiceEdition}
	message := messagesURL(c) + "/" + url.PathEscape(m.MessageID)
	r.Links.Add("self", render.Link{Href: message + "/signingtext"})
	r.Links.Add("message", render.Link{Href: message})
	respond(c, http.StatusOK, r)
}

// getCustomMessageData is GET …/{messageId}/custommessagedata: the service owner's extra key/value data of
// the message, an empty collection when it has none. Reading it does not mark the message read.
func (h *mailboxHandlers) getCustomMessageData(c *gin.Context) {
	m, ok := h.loadMessage(c)
	if !ok {
		return
	}
	var links render.Links
	links.Add("self", render.Link{Href: messagesURL(c) + "/" + url.PathEscape(m.MessageID) + "/custommessagedata"})
	respond(c, http.StatusOK, render.Collection{Links: links, Embedded: render.EmbedList("custommessagedata", m.CustomMessageData)})
}
