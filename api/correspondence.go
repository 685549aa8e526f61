package api

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

// correspondenceHandlers answer the agency's sending (/api/serviceowner/correspondence…): the room is
// package correspondence; these parse, call it and render.
type correspondenceHandlers struct {
	sends *correspondence.Service
}

// correspondenceBody is a POST /api/serviceowner/correspondence.
type correspondenceBody struct {
	ServiceCode               jsonText
	ServiceEdition            flexInt
	Recipients                []jsonText
	Subject                   jsonText
	Summary                   jsonText                       `json:",omitempty"`
	Body                      jsonText                       `json:",omitempty"`
	SendersReference          jsonText                       `json:",omitempty"`
	IdempotentKey             jsonText                       `json:",omitempty"`
	Language                  flexInt                        `json:",omitempty"`
	ReplyOptions              []replyOptionBody              `json:",omitempty"`
	CustomMessageData         []customDataBody               `json:",omitempty"`
	IsConfirmationNeeded      bool                           `json:",omitempty"`
	VisibleDateTime           *dateTimeField                 `json:",omitempty"`
	DueDateTime               *dateTimeField                 `json:",omitempty"`
	AllowSystemDeleteDateTime *dateTimeField                 `json:",omitempty"`
	Attachments               []correspondenceAttachmentBody `json:",omitempty"`
	Notification              *notificationBody              `json:",omitempty"`
}

// correspondenceAttachmentBody is a file of a correspondence: its bytes in base64 (Data), or the
// AttachmentId of an upload (POST …/correspondence/attachments), whose file name it keeps unless FileName
// gives another.
type correspondenceAttachmentBody struct {
	Name         jsonText `json:",omitempty"`
	FileName     jsonText `json:",omitempty"`
	Data         jsonText `json:",omitempty"`
	AttachmentID jsonText `json:"AttachmentId,omitempty"`
}

type replyOptionBody struct {
	Type               jsonText
	URL                jsonText `json:",omitempty"`
	Text               jsonText `json:",omitempty"`
	ServiceCode        jsonText `json:",omitempty"`
	ServiceEditionCode flexInt  `json:",omitzero"`
}

type customDataBody struct {
	Key   jsonText
	Value jsonText
}

// dateTimeField is a date-time of a request: a local date-time as the interface writes them
// (2026-12-01T09:00:00, in the service's zone) or one with its offset (…T08:00:00Z), taken as the same
// moment in the service's zone.
type dateTimeField struct{ t time.Time }

func (d *dateTimeField) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fieldTypeError[dateTimeField](b)
	}
	s := string(b[1 : len(b)-1])
	if t, err := time.Parse(clock.LocalTimeLayout, s); err == nil {
		d.t = t
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fieldTypeError[dateTimeField](b)
	}
	d.t = clock.Local(t)
	return nil
}

func (d *dateTimeField) time() *time.Time {
	if d == nil {
		return nil
	}
	return &d.t
}

func (b correspondenceBody) send() (correspondence.Send, error) {
	s := correspondence.Send{ServiceCode: string(b.ServiceCode), ServiceEdition: b.ServiceEdition.n,
		Subject: string(b.Subject), Summary: string(b.Summary), Body: string(b.Body), SendersReference: string(b.SendersReference),
		IdempotentKey: string(b.IdempotentKey),
		Language:      b.Language.n, IsConfirmationNeeded: b.IsConfirmationNeeded,
		VisibleAt: b.VisibleDateTime.time(), DueAt: b.DueDateTime.time(), AllowSystemDeleteAt: b.AllowSystemDeleteDateTime.time(),
		Notification: b.Notification.order()}
	s.Recipients = make([]string, len(b.Recipients))
	for i, r := range b.Recipients {
		s.Recipients[i] = string(r)
	}
	for _, o := range b.ReplyOptions {
		s.ReplyOptions = append(s.ReplyOptions, store.ReplyOption{Type: string(o.Type), URL: string(o.URL), Text: string(o.Text),
			ServiceCode: string(o.ServiceCode), ServiceEditionCode: o.ServiceEditionCode.n})
	}
	for _, d := range b.CustomMessageData {
		s.CustomMessageData = append(s.CustomMessageData, store.CustomData{Key: string(d.Key), Value: string(d.Value)})
	}
	for i, a := range b.Attachments {
		data, err := base64.StdEncoding.DecodeString(string(a.Data))
		if err != nil {
			return s, problem.BadRequest("Attachments[%d].Data is not base64", i)
		}
		s.Attachments = append(s.Attachments, correspondence.Attachment{Name: string(a.Name), FileName: string(a.FileName), Data: data,
			UploadID: string(a.AttachmentID)})
	}
	return s, nil
}

type recipientOutcomeResource struct {
	Recipient string
	MessageID string `json:"MessageId,omitempty"`
	Refused   string `json:",omitempty"`
}

type shipmentAcceptedResource struct {
	ShipmentID          string `json:"ShipmentId"`
	NotificationOrderID string `json:"NotificationOrderId,omitempty"`
	Recipients          int
	Accepted            int
	Refused             int
	Links               render.Links    `json:"_links"`
	Embedded            render.Embedded `json:"_embedded"`
}

type shipmentResource struct {
	ShipmentID                string `json:"ShipmentId"`
	ServiceCode               string
	ServiceEdition            int
	Subject                   string
	SendersReference          string `json:",omitempty"`
	CreatedDateTime           render.Timestamp
	VisibleDateTime           *render.Timestamp `json:",omitempty"`
	DueDateTime               *render.Timestamp `json:",omitempty"`
	AllowSystemDeleteDateTime *render.Timestamp `json:",omitempty"`
	Recipients                int
	Created                   int
	Refused                   int
	Retracted                 int
	Links                     render.Links    `json:"_links"`
	Embedded                  render.Embedded `json:"_embedded"`
}

type recipientStatusResource struct {
	Recipient         string
	MessageID         string `json:"MessageId,omitempty"`
	Status            string
	Refused           string            `json:",omitempty"`
	CreatedDateTime   *render.Timestamp `json:",omitempty"`
	ReadDateTime      *render.Timestamp `json:",omitempty"`
	ConfirmedDateTime *render.Timestamp `json:",omitempty"`
	RetractedDateTime *render.Timestamp `json:",omitempty"`
	// Notified: the notice of the shipment's notification order went (at NotifiedDateTime).
	Notified         bool
	NotifiedDateTime *render.Timestamp `json:",omitempty"`
}

func shipmentURL(c *gin.Context, id string) string {
	return baseURL(c) + "/api/serviceowner/correspondence/shipments/" + id
}

// correspondenceActor is the calling owner's client as the sent messages and the audit log name it.
func correspondenceActor(c *gin.Context) correspondence.Actor {
	p, owner := principalOf(c), serviceOwnerOf(c)
	key, _ := apiKeyOf(c)
	return correspondence.Actor{ServiceOwner: owner.Code, ServiceOwnerName: owner.Name, OrganizationNumber: p.OrganizationNumber,
		APIKeyName: key.Name, AuthMethod: string(p.Method), RequestID: requestID(c)}
}

// sendCorrespondence accepts a shipment: 202 with where to follow it and what became of each recipient.
func (h *correspondenceHandlers) sendCorrespondence(c *gin.Context) {
	var body correspondenceBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	send, err := body.send()
	if err != nil {
		abort(c, err)
		return
	}
	accepted, err := h.sends.Send(c.Request.Context(), correspondenceActor(c), send)
	if err != nil {
		abort(c, err)
		return
	}
	r := shipmentAcceptedResource{ShipmentID: accepted.ShipmentID, NotificationOrderID: accepted.NotificationOrderID,
		Recipients: len(accepted.Outcomes)}
	items := make([]recipientOutcomeResource, len(accepted.Outcomes))
	for i, o := range accepted.Outcomes {
		items[i] = recipientOutcomeResource{Recipient: o.Recipient, MessageID: o.MessageID, Refused: o.Refused}
		if o.Refused == "" {
			r.Accepted++
		}
	}
	r.Refused = r.Recipients - r.Accepted
	self := shipmentURL(c, accepted.ShipmentID)
	r.Links.Add("self", render.Link{Href: self})
	if accepted.NotificationOrderID != "" {
		r.Links.Add("notification", render.Link{Href: notificationURL(c, accepted.NotificationOrderID)})
	}
	r.Embedded = render.EmbedList("recipients", items)
	c.Header("Location", self)
	respond(c, http.StatusAccepted, r)
}

// getShipment answers a shipment with a page of its recipients (?state=… narrows them).
func (h *correspondenceHandlers) getShipment(c *gin.Context) {
	limit, after, err := keysetPage(c, "recipients")
	if err != nil {
		abort(c, err)
		return
	}
	sh, list, more, err := h.sends.Recipients(c.Request.Context(), serviceOwnerOf(c).Code, c.Param("shipmentId"),
		c.Query("state"), int(after), limit)
	if err != nil {
		abort(c, err)
		return
	}
	page := keysetCollection(c, "recipients", list, recipientStatusOf, correspondence.RecipientStatus.Key, more)
	if sh.NotificationOrderID != "" {
		page.Links.Add("notification", render.Link{Href: notificationURL(c, sh.NotificationOrderID)})
	}
	respond(c, http.StatusOK, shipmentResource{ShipmentID: sh.ID, ServiceCode: sh.ServiceCode, ServiceEdition: sh.ServiceEdition,
		Subject: sh.Subject, SendersReference: sh.SendersReference, CreatedDateTime: render.TimestampOf(sh.CreatedAt),
		VisibleDateTime: render.TimestampOrNull(sh.VisibleAt), DueDateTime: render.TimestampOrNull(sh.DueAt),
		AllowSystemDeleteDateTime: render.TimestampOrNull(sh.AllowSystemDeleteAt),
		Recipients:                sh.Recipients, Created: sh.Created, Refused: sh.Refused, Retracted: sh.Retracted,
		Links: page.Links, Embedded: page.Embedded})
}

// recipientStatusOf is a recipient's line: its Status is the furthest it has come.
func recipientStatusOf(r correspondence.RecipientStatus) recipientStatusResource {
	out := recipientStatusResource{Recipient: r.Recipient, MessageID: r.MessageID, Refused: r.Refused,
		CreatedDateTime: render.TimestampOrNull(r.CreatedAt), ReadDateTime: render.TimestampOrNull(r.ReadAt),
		ConfirmedDateTime: render.TimestampOrNull(r.ConfirmedAt), RetractedDateTime: render.TimestampOrNull(r.RetractedAt),
		Notified: r.NotifiedAt != nil, NotifiedDateTime: render.TimestampOrNull(r.NotifiedAt)}
	switch {
	case r.Refused != "":
		out.Status = "Refused"
	case r.RetractedAt != nil:
		out.Status = "Retracted"
	case r.ConfirmedAt != nil:
		out.Status = "Confirmed"
	case r.ReadAt != nil:
		out.Status = "Read"
	case r.Purged:
		out.Status = "Purged"
	case r.CreatedAt != nil:
		out.Status = "Created"
	default:
		out.Status = "Pending"
	}
	return out
}

// uploadResource is an attachment uploaded for sends to come.
type uploadResource struct {
	AttachmentID string `json:"AttachmentId"`
	FileName     string
	ContentType  string
	FileSize     int64
	SHA256       string `json:"Sha256"` // hex
}

// uploadAttachment is POST /api/serviceowner/correspondence/attachments?fileName=: the raw bytes of a
// larger attachment, streamed into the store; a send references it by its AttachmentId. The name is
// checked before a byte is read and the content as it arrives; a refused or cut upload keeps nothing.
func (h *correspondenceHandlers) uploadAttachment(c *gin.Context) {
	if ceiling := h.sends.UploadCeiling(); c.Request.ContentLength > ceiling {
		abort(c, problem.New(http.StatusRequestEntityTooLarge, "body-too-large", "the file is larger than %d bytes", ceiling))
		return
	}
	up, err := h.sends.Upload(c.Request.Context(), serviceOwnerOf(c).Code, c.Query("fileName"), c.Request.Body)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusCreated, uploadResource{AttachmentID: up.ID, FileName: up.FileName, ContentType: up.ContentType,
		FileSize: up.Size, SHA256: hex.EncodeToString(up.SHA256[:])})
}

// retractCorrespondence takes back a sent message its recipient has not opened: 204.
func (h *correspondenceHandlers) retractCorrespondence(c *gin.Context) {
	if err := h.sends.Retract(c.Request.Context(), correspondenceActor(c), c.Param("messageId")); err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// prefillBody is a POST /api/serviceowner/formtasks: a form task of one of the caller's services, with
// its forms (and attachments) as far as the owner fills them in, for one party.
type prefillBody struct {
	Reportee        jsonText
	ServiceCode     jsonText
	ServiceEdition  *flexInt
	Subject         jsonText          `json:",omitempty"`
	VisibleDateTime *dateTimeField    `json:",omitempty"`
	DueDateTime     *dateTimeField    `json:",omitempty"`
	Notification    *notificationBody `json:",omitempty"`
	Embedded        struct {
		Forms       []formBody       `json:"forms,omitempty"`
		Attachments []attachmentBody `json:"attachments,omitempty"`
	} `json:"_embedded,omitzero"`
}

type prefilledResource struct {
	MessageID           string `json:"MessageId"`
	NotificationOrderID string `json:"NotificationOrderId,omitempty"`
	Reportee            string
	ServiceCode         string
	ServiceEdition      int
	Status              string
	// VisibleDateTime is when a scheduled task appears in the mailbox (null: it is there now).
	VisibleDateTime *render.Timestamp
}

// prefillFormTask puts a pre-filled form task into a party's mailbox: 201 with its message id, or 202
// when it is scheduled to appear at its VisibleDateTime.
func (h *correspondenceHandlers) prefillFormTask(c *gin.Context) {
	var body prefillBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	if body.ServiceCode == "" || body.ServiceEdition == nil || body.Reportee == "" {
		abort(c, problem.BadRequest("Reportee, ServiceCode and ServiceEdition are required"))
		return
	}
	key := store.ServiceKey{Code: string(body.ServiceCode), Edition: body.ServiceEdition.n}
	done, err := h.sends.Prefill(c.Request.Context(), correspondenceActor(c), correspondence.PrefillRequest{Reportee: string(body.Reportee),
		Service: key, Subject: string(body.Subject), DueAt: body.DueDateTime.time(), VisibleAt: body.VisibleDateTime.time(),
		Content: formTaskBody{Embedded: body.Embedded}.content(), Notification: body.Notification.order()})
	if err != nil {
		abort(c, err)
		return
	}
	status := http.StatusCreated
	if done.VisibleAt != nil {
		status = http.StatusAccepted
	}
	respond(c, status, prefilledResource{MessageID: done.MessageID, NotificationOrderID: done.NotificationOrderID,
		Reportee: string(body.Reportee), ServiceCode: key.Code, ServiceEdition: key.Edition, Status: taskstatus.Filling,
		VisibleDateTime: render.TimestampOrNull(done.VisibleAt)})
}
