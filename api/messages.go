package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
)

// mailboxHandlers answer the reading side of the mailbox: the message box, messages, their forms,
// attachments and portal view.
type mailboxHandlers struct {
	tasks formtask.Store // the signing text of a form task's service
	lists *mailbox.Lists
	// messages reads single messages outside transactions, sharing statements with concurrent requests.
	messages  *mailbox.Messages
	rights    *identity.Rights
	downloads fileDownloads
}

type formResource struct {
	Type              string
	DataFormatID      string `json:"DataFormatId"`
	DataFormatVersion int
	ValidationStatus  string
	Name              string
	Links             render.Links `json:"_links"`
}

// messagesURL is the mailbox address for {who} as the client wrote it, so links stay in its terms.
func messagesURL(c *gin.Context) string {
	return baseURL(c) + "/api/" + url.PathEscape(c.Param("who")) + "/messages"
}

// messageResource is m with its links under mailbox, the address of the messages of its reportee, and
// base, the address of the API (baseURL): lists make fifty, so both are worked out once per request, and
// take their optional links from one slab (nil: each its own).
func (h *mailboxHandlers) messageResource(base, mailbox string, m store.MessageSummary, slab *linkSlab) messageResource {
	// self is the start of the portal view's address, not a string of its own (ids are 'a' and digits).
	portalView := mailbox + "/" + m.MessageID + "/portalview"
	self := portalView[:len(portalView)-len("/portalview")]
	r := messageResource{
		MessageID: m.MessageID, Subject: m.Subject, Status: m.Status, LastChangedDateTime: render.TimestampOf(m.LastChangedDateTime),
		LastChangedBy: m.LastChangedBy, ServiceOwner: m.ServiceOwner, Type: m.Type, ServiceCode: m.ServiceCode,
		ServiceEdition: m.ServiceEdition, ReplyOptions: m.ReplyOptions, CreatedDate: render.TimestampOf(m.CreatedDate),
	}
	if m.Type == "Correspondence" {
		r.MessageSender = m.MessageSender
		r.IsConfirmationNeeded = boolRef(m.IsConfirmationNeeded)
	}
	r.DueDateTime = render.TimestampOrNull(m.DueAt) // of a sent correspondence or a pre-filled task
	r.Links.Self = render.Link{Href: self}
	if m.Type == "FormTask" {
		r.Links.Print = slab.link(render.Link{Href: self + "/print", MimeType: "application/pdf"})
	}
	kind := "formtask"
	if m.Type == "Correspondence" {
		kind = "correspondence"
	}
	r.Links.Metadata = render.Link{Href: base + "/api/metadata/" + kind + "/" + url.PathEscape(m.ServiceCode) + "/" + strconv.Itoa(m.ServiceEdition)}
	r.Links.PortalView = slab.link(render.Link{Href: portalView})
	return r
}

var yes, no = true, false

// boolRef points at a shared true or false, so a page of messages allocates none for its flags.
func boolRef(b bool) *bool {
	if b {
		return &yes
	}
	return &no
}

// linkSlab hands out links from one allocation: a page of fifty messages has up to a hundred optional
// links (print, portal view), each otherwise an allocation of its own.
type linkSlab []render.Link

// pageLinks is a slab for the optional links of a page of messages.
func pageLinks() *linkSlab {
	s := make(linkSlab, 0, 2*MaxPageSize)
	return &s
}

// link is a pointer to a copy of l: in the slab while it has room (a full slab is replaced, never grown,
// so the links handed out stay where they are), else a link of its own.
func (s *linkSlab) link(l render.Link) *render.Link {
	if s == nil || len(*s) == cap(*s) {
		return &l
	}
	*s = append(*s, l)
	return &(*s)[len(*s)-1]
}

func (h *mailboxHandlers) listMessages(c *gin.Context) {
	party, rights := reporteeOf(c)
	search, err := mailbox.ParseSearch(c.Query("search"))
	if err != nil {
		abort(c, err)
		return
	}
	base, mailbox, slab := baseURL(c), messagesURL(c), pageLinks()
	respondList(c, "messages", func(lq store.ListQuery) ([]store.MessageSummary, bool, error) {
		return h.lists.Messages(c.Request.Context(), party.ID, rights.Visibility(), lq, search)
	}, func(m store.MessageSummary) messageResource { return h.messageResource(base, mailbox, m, slab) }, findLink(mailbox+"/{MessageId}"))
}

// listAllMessages lists the messages of every party the caller may represent, itself included, each as
// the caller's rights for its party allow, newest first: one statement over all parties. Each message
// names its reportee and links under its reportee's mailbox.
func (h *mailboxHandlers) listAllMessages(c *gin.Context) {
	p := principalOf(c)
	search, err := mailbox.ParseSearch(c.Query("search"))
	if err != nil {
		abort(c, err)
		return
	}
	base, slab := baseURL(c), pageLinks()
	respondList(c, "messages", func(lq store.ListQuery) ([]mailbox.PartyMessage, bool, error) {
		return h.lists.AllMessages(c.Request.Context(), p.Subject(), p.Self(), lq, search)
	}, func(m mailbox.PartyMessage) messageResource {
		reportee := identity.ReporteeID(m.ReporteeID)
		r := h.messageResource(base, base+"/api/"+reportee+"/messages", m.MessageSummary, slab)
		r.ReporteeID, r.ReporteeName = reportee, m.ReporteeName
		return r
	}, findLink(base+"/api/{ReporteeId}/messages/{MessageId}"))
}

// mailboxReader is the caller reading the mailbox of {who}.
func mailboxReader(c *gin.Context) mailbox.Reader {
	party, rights := reporteeOf(c)
	return mailbox.Reader{ReporteeID: party.ID, Rights: rights, Name: principalOf(c).Name}
}

// loadMessage reads the message of the path, which the caller must see; any other is not there (404).
func (h *mailboxHandlers) loadMessage(c *gin.Context) (store.Message, bool) {
	m, err := h.messages.Message(c.Request.Context(), mailboxReader(c), c.Param("messageId"))
	if err != nil {
		abort(c, err)
		return m, false
	}
	return m, true
}

// openMessage loads the message of the path and records the caller's first read of it, unless the
// request says markAsRead=false.
func (h *mailboxHandlers) openMessage(c *gin.Context) (store.Message, bool) {
	mark := true
	if v, ok := c.GetQuery("markAsRead"); ok && v != "" {
		var err error
		if mark, err = strconv.ParseBool(strings.ToLower(v)); err != nil {
			abort(c, problem.BadRequest("markAsRead must be true or false, not %q", v))
			return store.Message{}, false
		}
	}
	m, err := h.messages.Open(c.Request.Context(), mailboxReader(c), c.Param("messageId"), mark)
	if err != nil {
		abort(c, err)
		return m, false
	}
	return m, true
}

func (h *mailboxHandlers) getMessage(c *gin.Context) {
	m, ok := h.openMessage(c)
	if !ok {
		return
	}
	respondTagged(c, h.singleMessage(c, m))
}

// singleMessage is the single view of a message, with its forms, attachments and archive reference.
func (h *mailboxHandlers) singleMessage(c *gin.Context, m store.Message) messageResource {
	r := h.messageResource(baseURL(c), messagesURL(c), m.MessageSummary, nil)
	self := r.Links.Self.Href
	if m.Type == store.TypeCorrespondence {
		r.Summary, r.Body = m.Summary, m.Body
		if m.ConfirmedAt != nil {
			at := render.TimestampOf(*m.ConfirmedAt)
			r.ConfirmedDateTime, r.ConfirmedBy = &at, m.ConfirmedBy
		}
	}
	r.ArchiveReference = m.ArchiveReference
	r.ReceivedByServiceOwnerDateTime = render.TimestampOrNull(m.ReceivedByOwnerAt)
	r.VisibleDateTime, r.AllowSystemDeleteDateTime = render.TimestampOrNull(m.VisibleAt), render.TimestampOrNull(m.AllowSystemDeleteAt)
	if m.Type == "FormTask" {
		forms := make([]render.Link, len(m.Forms))
		for i, f := range m.Forms {
			forms[i] = render.Link{Href: self + "/forms/" + strconv.FormatInt(f.ID, 10), Name: f.Name}
		}
		r.Links.Form = forms
		r.Links.Signatures = &render.Link{Href: self + "/signatures"}
	}
	if len(m.Attachments) > 0 {
		links := make([]render.Link, len(m.Attachments))
		for i, a := range m.Attachments {
			links[i] = render.Link{Href: self + "/attachments/" + strconv.FormatInt(a.ID, 10), Name: a.Name, FileName: a.FileName,
				Encrypted: &a.Encrypted, SigningLocked: &a.SigningLocked, SignedByDefault: &a.SignedByDefault, FileSize: &a.FileSize}
		}
		r.Links.Attachment = links
	}
	if m.ArchiveReference != "" && m.Type == "FormTask" {
		r.Links.ArchiveReference = &render.Link{Href: self + "/print", MimeType: "application/pdf"}
	}
	return r
}

// pathID parses a numeric id of the path, answering 404 for anything else (ids are opaque to clients).
func pathID(c *gin.Context, name, what string) (int64, bool) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		abort(c, problem.NotFound("there is no %s %s on message %s", what, c.Param(name), c.Param("messageId")))
		return 0, false
	}
	return id, true
}

func (h *mailboxHandlers) loadForm(c *gin.Context) (store.Form, bool) {
	id, ok := pathID(c, "formId", "form")
	if !ok {
		return store.Form{}, false
	}
	f, err := h.messages.Form(c.Request.Context(), mailboxReader(c), c.Param("messageId"), id)
	if err != nil {
		abort(c, err)
		return f, false
	}
	return f, true
}

func (h *mailboxHandlers) getForm(c *gin.Context) {
	f, ok := h.loadForm(c)
	if !ok {
		return
	}
	respondTagged(c, formResourceOf(c, f))
}

func formResourceOf(c *gin.Context, f store.Form) formResource {
	self := fmt.Sprintf("%s/%s/forms/%d", messagesURL(c), url.PathEscape(c.Param("messageId")), f.ID)
	r := formResource{Type: f.Type, DataFormatID: f.DataFormatID, DataFormatVersion: f.DataFormatVersion,
		ValidationStatus: f.ValidationStatus, Name: f.Name}
	r.Links.Add("self", render.Link{Href: self})
	r.Links.Add("formdata", render.Link{Href: self + "/formdata", MimeType: "application/xml"})
	return r
}

func (h *mailboxHandlers) getFormData(c *gin.Context) {
	id, ok := pathID(c, "formId", "form")
	if !ok {
		return
	}
	data, err := h.messages.FormData(c.Request.Context(), mailboxReader(c), c.Param("messageId"), id)
	if err != nil {
		abort(c, err)
		return
	}
	const xmlType = "application/xml; charset=utf-8"
	if notModified(c, etagOf(xmlType, data)) {
		return
	}
	c.Data(http.StatusOK, xmlType, data)
}

// getAttachment streams an attachment from the store, with Range support, never holding the whole file.
func (h *mailboxHandlers) getAttachment(c *gin.Context) {
	id, ok := pathID(c, "attachmentId", "attachment")
	if !ok {
		return
	}
	m, a, err := h.messages.Attachment(c.Request.Context(), mailboxReader(c), c.Param("messageId"), id)
	if err != nil {
		abort(c, err)
		return
	}
	downloadHeaders(c, a.ContentType, a.FileName, a.SHA256)
	c.Header("X-Content-Type-Options", "nosniff")
	h.downloads.serve(c, a.SHA256, a.FileSize, a.FileName, a.ContentType, m.LastChangedDateTime)
}
