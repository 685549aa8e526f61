package api

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

var portalTemplate = template.Must(template.ParseFS(templateFiles, "templates/message.html"))

type portalLink struct {
	Href      string
	Name      string
	FileName  string
	Size      int64
	Encrypted bool
}

type portalReplyOption struct {
	URL  template.URL
	Text string
}

type portalPage struct {
	store.MessageSummary
	Reportee           string
	Created, Changed   string
	ChangedBy          string
	Summary            string
	Body               template.HTML
	ArchiveReference   string
	Forms, Attachments []portalLink
	ReplyOptions       []portalReplyOption
	Print              string
}

// getPortalView renders the message as an HTML page for a person in a browser.
func (h *mailboxHandlers) getPortalView(c *gin.Context) {
	m, ok := h.openMessage(c)
	if !ok {
		return
	}
	party, _ := reporteeOf(c)
	self := messagesURL(c) + "/" + url.PathEscape(m.MessageID)
	page := portalPage{
		MessageSummary: m.MessageSummary, Reportee: party.Name,
		Created: m.CreatedDate.Format(clock.LocalTimeLayout), Changed: m.LastChangedDateTime.Format(clock.LocalTimeLayout),
		ChangedBy: m.LastChangedBy, Summary: m.Summary, ArchiveReference: m.ArchiveReference,
		Body: template.HTML(mailbox.CleanBody(m.Body)), //nolint:gosec // sanitised just now
	}
	for _, f := range m.Forms {
		page.Forms = append(page.Forms, portalLink{Href: fmt.Sprintf("%s/forms/%d/formdata", self, f.ID), Name: f.Name})
	}
	for _, a := range m.Attachments {
		page.Attachments = append(page.Attachments, portalLink{Href: fmt.Sprintf("%s/attachments/%d", self, a.ID),
			FileName: a.FileName, Size: a.FileSize, Encrypted: a.Encrypted})
	}
	for _, o := range m.ReplyOptions {
		page.ReplyOptions = append(page.ReplyOptions, portalReplyOption{URL: safeURL(o.URL), Text: o.Text})
	}
	if m.Type == "FormTask" {
		page.Print = self + "/print"
	}
	var b strings.Builder
	if err := portalTemplate.Execute(&b, page); err != nil {
		abort(c, err)
		return
	}
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(b.String()))
}

// safeURL lets only http(s) and relative links through; anything else (javascript:, data:) becomes "#".
func safeURL(raw string) template.URL {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") {
		return "#"
	}
	return template.URL(u.String()) //nolint:gosec // scheme checked
}
