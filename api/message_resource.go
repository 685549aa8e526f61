package api

import (
	"strconv"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/store"
)

// messageResource is a message as every list and single view renders it; its JSON is written by hand
// (AppendJSON), the list being the hottest path of the API.
type messageResource struct {
	MessageID           string `json:"MessageId"`
	ReporteeID          string `json:"ReporteeId,omitempty"` // in the list of every party's messages
	ReporteeName        string `json:",omitempty"`
	Subject             string
	Status              string
	LastChangedDateTime render.Timestamp
	LastChangedBy       string
	ServiceOwner        string
	Type                string
	MessageSender       string `json:",omitempty"`
	Summary             string `json:",omitempty"`
	Body                string `json:",omitempty"`
	ServiceCode         string
	ServiceEdition      int
	ArchiveReference    string              `json:",omitempty"`
	ReplyOptions        []store.ReplyOption `json:",omitempty" xmlitem:"ReplyOption"`
	CreatedDate         render.Timestamp
	// IsConfirmationNeeded is shown on a correspondence, ConfirmedDateTime and ConfirmedBy in the single
	// view once it is confirmed; DueDateTime on a message a service owner sent with one.
	IsConfirmationNeeded *bool             `json:",omitempty"`
	ConfirmedDateTime    *render.Timestamp `json:",omitempty"`
	ConfirmedBy          string            `json:",omitempty"`
	// DeletedDateTime and DeletedBy are shown on the messages of the trashbin.
	DeletedDateTime *render.Timestamp `json:",omitempty"`
	DeletedBy       string            `json:",omitempty"`
	// ReceivedByServiceOwnerDateTime is shown on a sent form task once the agency that owns its service
	// has confirmed that it received it.
	ReceivedByServiceOwnerDateTime *render.Timestamp `json:",omitempty"`
	// The other dates a service owner sent a correspondence with, in the single view.
	VisibleDateTime           *render.Timestamp `json:",omitempty"`
	DueDateTime               *render.Timestamp `json:",omitempty"`
	AllowSystemDeleteDateTime *render.Timestamp `json:",omitempty"`
	Links                     messageLinks      `json:"_links"`
}

// messageLinks are a message's relations; a struct, not render.Links, because lists encode fifty of them.
type messageLinks struct {
	Self             render.Link   `json:"self"`
	Print            *render.Link  `json:"print,omitempty"`
	Metadata         render.Link   `json:"metadata"`
	PortalView       *render.Link  `json:"portalview,omitempty"` // nil in the trashbin
	Restore          *render.Link  `json:"restore,omitempty"`    // in the trashbin
	Form             []render.Link `json:"form,omitempty"`
	Attachment       []render.Link `json:"attachment,omitempty"`
	ArchiveReference *render.Link  `json:"archivereference,omitempty"`
	// Signatures is a form task's signing (its steps and signatures), in the single view.
	Signatures *render.Link `json:"signatures,omitempty"`
}

// AppendJSON writes the message as encoding/json would (render.JSONAppender): lists write fifty a page.
func (r *messageResource) AppendJSON(b []byte) []byte {
	b = append(b, `{"MessageId":`...)
	b = render.AppendString(b, r.MessageID)
	b = appendOptional(b, `,"ReporteeId":`, r.ReporteeID)
	b = appendOptional(b, `,"ReporteeName":`, r.ReporteeName)
	b = append(b, `,"Subject":`...)
	b = render.AppendString(b, r.Subject)
	b = append(b, `,"Status":`...)
	b = render.AppendString(b, r.Status)
	b = append(b, `,"LastChangedDateTime":`...)
	b = r.LastChangedDateTime.AppendJSON(b)
	b = append(b, `,"LastChangedBy":`...)
	b = render.AppendString(b, r.LastChangedBy)
	b = append(b, `,"ServiceOwner":`...)
	b = render.AppendString(b, r.ServiceOwner)
	b = append(b, `,"Type":`...)
	b = render.AppendString(b, r.Type)
	b = appendOptional(b, `,"MessageSender":`, r.MessageSender)
	b = appendOptional(b, `,"Summary":`, r.Summary)
	b = appendOptional(b, `,"Body":`, r.Body)
	b = append(b, `,"ServiceCode":`...)
	b = render.AppendString(b, r.ServiceCode)
	b = append(b, `,"ServiceEdition":`...)
	b = strconv.AppendInt(b, int64(r.ServiceEdition), 10)
	b = appendOptional(b, `,"ArchiveReference":`, r.ArchiveReference)
	if len(r.ReplyOptions) > 0 {
		b = append(b, `,"ReplyOptions":[`...)
		for i, o := range r.ReplyOptions {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Type":`...)
			b = render.AppendString(b, o.Type)
			b = append(b, `,"URL":`...)
			b = render.AppendString(b, o.URL)
			b = append(b, `,"Text":`...)
			b = render.AppendString(b, o.Text)
			b = appendOptional(b, `,"ServiceCode":`, o.ServiceCode)
			if o.ServiceEditionCode != 0 {
				b = append(b, `,"ServiceEditionCode":`...)
				b = strconv.AppendInt(b, int64(o.ServiceEditionCode), 10)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"CreatedDate":`...)
	b = r.CreatedDate.AppendJSON(b)
	if r.IsConfirmationNeeded != nil {
		b = append(b, `,"IsConfirmationNeeded":`...)
		b = strconv.AppendBool(b, *r.IsConfirmationNeeded)
	}
	b = appendOptionalTime(b, `,"ConfirmedDateTime":`, r.ConfirmedDateTime)
	b = appendOptional(b, `,"ConfirmedBy":`, r.ConfirmedBy)
	b = appendOptionalTime(b, `,"DeletedDateTime":`, r.DeletedDateTime)
	b = appendOptional(b, `,"DeletedBy":`, r.DeletedBy)
	b = appendOptionalTime(b, `,"ReceivedByServiceOwnerDateTime":`, r.ReceivedByServiceOwnerDateTime)
	b = appendOptionalTime(b, `,"VisibleDateTime":`, r.VisibleDateTime)
	b = appendOptionalTime(b, `,"DueDateTime":`, r.DueDateTime)
	b = appendOptionalTime(b, `,"AllowSystemDeleteDateTime":`, r.AllowSystemDeleteDateTime)
	l := &r.Links
	b = append(b, `,"_links":{"self":`...)
	b = l.Self.AppendJSON(b)
	b = appendOptionalLink(b, `,"print":`, l.Print)
	b = append(b, `,"metadata":`...)
	b = l.Metadata.AppendJSON(b)
	b = appendOptionalLink(b, `,"portalview":`, l.PortalView)
	b = appendOptionalLink(b, `,"restore":`, l.Restore)
	if len(l.Form) > 0 {
		b = append(b, `,"form":`...)
		b = render.AppendLinks(b, l.Form)
	}
	if len(l.Attachment) > 0 {
		b = append(b, `,"attachment":`...)
		b = render.AppendLinks(b, l.Attachment)
	}
	b = appendOptionalLink(b, `,"archivereference":`, l.ArchiveReference)
	b = appendOptionalLink(b, `,"signatures":`, l.Signatures)
	return append(b, "}}"...)
}

// appendOptional writes a string member that is left out when empty (omitempty).
func appendOptional(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return render.AppendString(append(b, key...), v)
}

// appendOptionalTime writes a date-time member that is left out when nil (omitempty).
func appendOptionalTime(b []byte, key string, t *render.Timestamp) []byte {
	if t == nil {
		return b
	}
	return t.AppendJSON(append(b, key...))
}

// appendOptionalLink writes a link member that is left out when nil (omitempty).
func appendOptionalLink(b []byte, key string, l *render.Link) []byte {
	if l == nil {
		return b
	}
	return l.AppendJSON(append(b, key...))
}
