package api

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/notification"
)

// notificationHandlers answer the agency's notification orders (/api/serviceowner/notifications… and
// …/messages/{id}/notifications): the room is package notification; these parse, call it and render.
type notificationHandlers struct {
	notices *notification.Service
}

// notificationBody is a notification order, alone or as the Notification of a send.
type notificationBody struct {
	Channel           jsonText
	EmailSubject      jsonText               `json:",omitempty"`
	EmailBody         jsonText               `json:",omitempty"`
	SmsText           jsonText               `json:",omitempty"`
	RequestedSendTime *dateTimeField         `json:",omitempty"`
	Reminders         *notificationReminders `json:",omitempty"`
	Recipient         *notificationRecipient `json:",omitempty"`
}

// notificationReminders: up to Count reminders, AfterDays apart, while the message waits for its reader.
type notificationReminders struct {
	AfterDays flexInt
	Count     flexInt
}

// notificationRecipient replaces the party's contact data; only for an order of one message.
type notificationRecipient struct {
	EmailAddress jsonText `json:",omitempty"`
	MobileNumber jsonText `json:",omitempty"`
}

// order is the body as the room takes it; nil for none.
func (b *notificationBody) order() *notification.Order {
	if b == nil {
		return nil
	}
	o := &notification.Order{Channel: string(b.Channel), EmailSubject: string(b.EmailSubject), EmailBody: string(b.EmailBody),
		SmsText: string(b.SmsText), SendAt: b.RequestedSendTime.time()}
	if r := b.Reminders; r != nil {
		o.ReminderDays, o.Reminders = r.AfterDays.n, r.Count.n
	}
	if r := b.Recipient; r != nil {
		o.Addresses = &notification.Addresses{EmailAddress: string(r.EmailAddress), MobileNumber: string(r.MobileNumber)}
	}
	return o
}

type notificationSendResource struct {
	Round           int
	Status          string
	Channel         string            `json:",omitempty"`
	Address         string            `json:",omitempty"` // shown to the order's owner only
	Reason          string            `json:",omitempty"`
	Attempts        int               `json:",omitempty"`
	DecidedDateTime *render.Timestamp `json:",omitempty"`
}

type notificationRecipientResource struct {
	MessageID string `json:"MessageId"`
	// Status is the notice's (round 0): Scheduled until it is decided.
	Status string
	Sends  []notificationSendResource
}

type notificationRemindersResource struct {
	AfterDays int
	Count     int
}

type notificationOrderResource struct {
	NotificationOrderID string `json:"NotificationOrderId"`
	ShipmentID          string `json:"ShipmentId,omitempty"`
	Channel             string
	RequestedSendTime   render.Timestamp
	Reminders           *notificationRemindersResource `json:",omitempty"`
	Recipients          int
	CreatedDateTime     render.Timestamp
	CreatedBy           string
	Links               render.Links    `json:"_links"`
	Embedded            render.Embedded `json:"_embedded"`
}

// messageNotificationResource is an order as one of its messages sees it: the order and that message's
// sends.
type messageNotificationResource struct {
	NotificationOrderID string `json:"NotificationOrderId"`
	ShipmentID          string `json:"ShipmentId,omitempty"`
	Channel             string
	RequestedSendTime   render.Timestamp
	Reminders           *notificationRemindersResource `json:",omitempty"`
	CreatedDateTime     render.Timestamp
	CreatedBy           string
	Status              string
	Sends               []notificationSendResource
	Links               render.Links `json:"_links"`
}

// listMessageNotifications answers the caller's orders for one message, newest first.
func (h *notificationHandlers) listMessageNotifications(c *gin.Context) {
	orders, err := h.notices.OrdersOf(c.Request.Context(), serviceOwnerOf(c).Code, c.Param("messageId"))
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]messageNotificationResource, len(orders))
	for i, o := range orders {
		line := notificationRecipientOf(o.Recipient)
		items[i] = messageNotificationResource{NotificationOrderID: o.ID, ShipmentID: o.ShipmentID, Channel: o.Channel,
			RequestedSendTime: render.TimestampOf(o.SendAt), CreatedDateTime: render.TimestampOf(o.CreatedAt), CreatedBy: o.CreatedBy,
			Status: line.Status, Sends: line.Sends}
		if o.Reminders > 0 {
			items[i].Reminders = &notificationRemindersResource{AfterDays: o.ReminderDays, Count: o.Reminders}
		}
		items[i].Links.Add("self", render.Link{Href: notificationURL(c, o.ID)})
	}
	var links render.Links
	links.Add("self", render.Link{Href: baseURL(c) + "/api/serviceowner/messages/" + url.PathEscape(c.Param("messageId")) + "/notifications"})
	respond(c, http.StatusOK, render.Collection{Links: links, Embedded: render.EmbedList("notifications", items)})
}

func notificationURL(c *gin.Context, id string) string {
	return baseURL(c) + "/api/serviceowner/notifications/" + id
}

// orderNotification orders a notification about one message of the caller's services: 201 with where
// to follow it.
func (h *notificationHandlers) orderNotification(c *gin.Context) {
	var body notificationBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	owner := serviceOwnerOf(c)
	placed, err := h.notices.Order(c.Request.Context(), owner.Code, owner.Name, c.Param("messageId"), *body.order())
	if err != nil {
		abort(c, err)
		return
	}
	h.respondOrder(c, http.StatusCreated, placed.OrderID)
}

// getNotification answers an order with a page of its recipients and their sends.
func (h *notificationHandlers) getNotification(c *gin.Context) {
	h.respondOrder(c, http.StatusOK, c.Param("orderId"))
}

func (h *notificationHandlers) respondOrder(c *gin.Context, status int, id string) {
	limit, after, err := keysetPage(c, "recipients")
	if err != nil {
		abort(c, err)
		return
	}
	o, list, more, err := h.notices.Status(c.Request.Context(), serviceOwnerOf(c).Code, id, int(after), limit)
	if err != nil {
		abort(c, err)
		return
	}
	page := keysetCollection(c, "recipients", list, notificationRecipientOf, notification.RecipientStatus.Key, more)
	r := notificationOrderResource{NotificationOrderID: o.ID, ShipmentID: o.ShipmentID, Channel: o.Channel,
		RequestedSendTime: render.TimestampOf(o.SendAt), Recipients: o.Recipients, CreatedDateTime: render.TimestampOf(o.CreatedAt),
		CreatedBy: o.CreatedBy, Links: page.Links, Embedded: page.Embedded}
	if o.Reminders > 0 {
		r.Reminders = &notificationRemindersResource{AfterDays: o.ReminderDays, Count: o.Reminders}
	}
	if o.ShipmentID != "" {
		r.Links.Add("shipment", render.Link{Href: shipmentURL(c, o.ShipmentID)})
	}
	if status == http.StatusCreated {
		c.Header("Location", notificationURL(c, o.ID))
	}
	respond(c, status, r)
}

// notificationRecipientOf is a recipient's line: each round decided so far, the notice's state first.
func notificationRecipientOf(r notification.RecipientStatus) notificationRecipientResource {
	out := notificationRecipientResource{MessageID: r.MessageID, Status: "Scheduled", Sends: []notificationSendResource{}}
	for _, s := range r.Sends {
		send := notificationSendResource{Round: s.Round, Status: sendStatus(s.State), Channel: s.Channel, Address: s.Address,
			Reason: s.Reason, Attempts: s.Attempts, DecidedDateTime: render.TimestampOrNull(s.DecidedAt)}
		if s.Round == 0 {
			out.Status = send.Status
		}
		out.Sends = append(out.Sends, send)
	}
	return out
}

// sendStatus is a send's state as the interface writes it.
func sendStatus(state string) string {
	switch state {
	case notification.StateSent:
		return "Sent"
	case notification.StateFailed:
		return "Failed"
	case notification.StateSkipped:
		return "Skipped"
	}
	return "Sending"
}
