package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events/webhook"
)

// Webhook subscriptions (docs/events.md): a reportee's, made by a caller for {who}, which gets the events
// the caller's rights let it read, or a service owner's, which gets the events of its services. The API
// only writes them; the events workers start each one's delivery workflow (webhook.Supervise), so
// subscribing works while Temporal is away. A subscription is the caller's own: another caller, even for
// the same reportee, neither sees nor ends it.
type subscriptionHandlers struct {
	subs *webhook.Subscriptions
}

// subscriptionBody is the body of POST …/events/subscriptions.
type subscriptionBody struct {
	EndPoint *jsonText
	Types    []jsonText
}

type subscriptionResource struct {
	ID           int64 `json:"Id"`
	EndPoint     string
	Types        []string `json:",omitempty" xmlitem:"Type"` // none: every type
	Status       string
	StatusReason string `json:",omitempty"`
	// Secret is shown once, in the answer to the POST that made the subscription or rotated its secret.
	Secret string `json:",omitempty"`
	// PreviousSecretExpires is when the secret a rotation replaced stops signing deliveries.
	PreviousSecretExpires *render.Timestamp `json:",omitempty"`
	Created               render.Timestamp
	Links                 render.Links `json:"_links"`
}

type deadLetterResource struct {
	Sequence     int64
	EventID      string `json:"EventId"`
	Attempts     int
	Reason       string
	DeadDateTime render.Timestamp
	Replaying    bool
}

type replayResource struct {
	Replaying int
	Links     render.Links `json:"_links"`
}

// subscriber is a subscription with whose it is filled in: the calling service owner's on the
// service-owner routes, else {who}'s and the caller's.
func subscriber(c *gin.Context) webhook.Subscription {
	if _, ok := c.Get(ctxServiceOwner); ok {
		return webhook.Subscription{ServiceOwnerCode: serviceOwnerOf(c).Code}
	}
	party, _ := reporteeOf(c)
	return webhook.Subscription{ReporteeID: party.ID, Subscriber: principalOf(c).Subject()}
}

func (h *subscriptionHandlers) subscriptionsURL(c *gin.Context) string {
	if _, ok := c.Get(ctxServiceOwner); ok {
		return baseURL(c) + "/api/serviceowner/events/subscriptions"
	}
	return baseURL(c) + "/api/" + c.Param("who") + "/events/subscriptions"
}

func (h *subscriptionHandlers) resource(c *gin.Context, s webhook.Subscription) subscriptionResource {
	self := h.subscriptionsURL(c) + "/" + strconv.FormatInt(s.ID, 10)
	r := subscriptionResource{ID: s.ID, EndPoint: s.EndPoint, Types: s.Types, Status: s.Status, StatusReason: s.StatusReason,
		Created: render.TimestampOf(clock.Local(s.Created))}
	if s.PreviousSecret != "" && time.Now().Before(s.PreviousSecretUntil) {
		until := render.TimestampOf(clock.Local(s.PreviousSecretUntil))
		r.PreviousSecretExpires = &until
	}
	r.Links.Add("self", render.Link{Href: self})
	r.Links.Add("deadletters", render.Link{Href: self + "/deadletters"})
	r.Links.Add("secret", render.Link{Href: self + "/secret"})
	return r
}

func (h *subscriptionHandlers) createSubscription(c *gin.Context) {
	var body subscriptionBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	var endpoint string
	if body.EndPoint != nil {
		endpoint = string(*body.EndPoint)
	}
	types := make([]string, len(body.Types))
	for i, t := range body.Types {
		types[i] = string(t)
	}
	created, secret, err := h.subs.Create(c.Request.Context(), subscriber(c), endpoint, types)
	if err != nil {
		abort(c, err)
		return
	}
	r := h.resource(c, created)
	r.Secret = secret
	c.Header("Location", r.Links.Self())
	respond(c, http.StatusCreated, r)
}

func (h *subscriptionHandlers) listSubscriptions(c *gin.Context) {
	subs, err := h.subs.List(c.Request.Context(), subscriber(c))
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]subscriptionResource, len(subs))
	for i, s := range subs {
		items[i] = h.resource(c, s)
	}
	coll := render.Collection{Embedded: render.EmbedList("subscriptions", items)}
	coll.Links.Add("self", render.Link{Href: h.subscriptionsURL(c)})
	respond(c, http.StatusOK, coll)
}

func (h *subscriptionHandlers) getSubscription(c *gin.Context) {
	s, err := h.subs.Get(c.Request.Context(), subscriber(c), c.Param("subscriptionId"))
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, h.resource(c, s))
}

// deleteSubscription ends the subscription: nothing more is delivered, its workflow ends at its next step.
func (h *subscriptionHandlers) deleteSubscription(c *gin.Context) {
	noContent(c, h.subs.End(c.Request.Context(), subscriber(c), c.Param("subscriptionId")))
}

func (h *subscriptionHandlers) listDeadLetters(c *gin.Context) {
	s, dead, err := h.subs.DeadLetters(c.Request.Context(), subscriber(c), c.Param("subscriptionId"))
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]deadLetterResource, len(dead))
	for i, d := range dead {
		items[i] = deadLetterResource{Sequence: d.Seq, EventID: d.EventID, Attempts: d.Attempts, Reason: d.Reason,
			DeadDateTime: render.TimestampOf(clock.Local(d.Dead)), Replaying: d.Replay}
	}
	self := h.resource(c, s).Links.Self()
	coll := render.Collection{Embedded: render.EmbedList("deadletters", items)}
	coll.Links.Add("self", render.Link{Href: self + "/deadletters"})
	coll.Links.Add("subscription", render.Link{Href: self})
	coll.Links.Add("replay", render.Link{Href: self + "/deadletters/replay"})
	respond(c, http.StatusOK, coll)
}

// replayDeadLetters asks for the dead letters to be sent again (202: the workflow sends them, oldest
// first, before further events); a paused subscription is resumed, from its handshake.
func (h *subscriptionHandlers) replayDeadLetters(c *gin.Context) {
	s, n, err := h.subs.Replay(c.Request.Context(), subscriber(c), c.Param("subscriptionId"))
	if err != nil {
		abort(c, err)
		return
	}
	self := h.resource(c, s).Links.Self()
	r := replayResource{Replaying: n}
	r.Links.Add("deadletters", render.Link{Href: self + "/deadletters"})
	r.Links.Add("subscription", render.Link{Href: self})
	c.Header("Location", self+"/deadletters")
	respond(c, http.StatusAccepted, r)
}

// rotateSecret gives the subscription a new secret, shown once in the answer (webhook.RotateSecret).
func (h *subscriptionHandlers) rotateSecret(c *gin.Context) {
	s, secret, err := h.subs.RotateSecret(c.Request.Context(), subscriber(c), c.Param("subscriptionId"))
	if err != nil {
		abort(c, err)
		return
	}
	r := h.resource(c, s)
	r.Secret = secret
	respond(c, http.StatusOK, r)
}
