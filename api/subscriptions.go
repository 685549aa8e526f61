package api

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
)

// Webhook subscriptions (docs/events.md): a reportee's, made by a caller for {who}, which gets the events
// the caller's rights let it read, or a service owner's, which gets the events of its services. The API
// only writes them; the events workers start each one's delivery workflow (webhook.Supervise), so
// subscribing works while Temporal is away. A subscription is the caller's own: another caller, even for
// the same reportee, neither sees nor ends it.
type subscriptionHandlers struct {
	q       *store.Queries
	guard   webhook.Guard
	limit   int             // the most subscriptions a caller may have in an area; 0: no limit
	sealer  *webhook.Sealer // secrets are stored sealed, never in plaintext
	overlap time.Duration   // how long a rotated secret still signs beside the new one
}

// subscriptionBody is the body of POST …/events/subscriptions.
type subscriptionBody struct {
	EndPoint *jsonText
	Types    []jsonText
}

// maxSubscriptionTypes bounds Types (there are fewer event types than this).
const maxSubscriptionTypes = 50

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
func subscriber(c *gin.Context) store.Subscription {
	if _, ok := c.Get(ctxServiceOwner); ok {
		return store.Subscription{ServiceOwnerCode: serviceOwnerOf(c).Code}
	}
	party, _ := reporteeOf(c)
	return store.Subscription{ReporteeID: party.ID, Subscriber: principalOf(c).Subject()}
}

func (h *subscriptionHandlers) subscriptionsURL(c *gin.Context) string {
	if _, ok := c.Get(ctxServiceOwner); ok {
		return baseURL(c) + "/api/serviceowner/events/subscriptions"
	}
	return baseURL(c) + "/api/" + c.Param("who") + "/events/subscriptions"
}

func (h *subscriptionHandlers) resource(c *gin.Context, s store.Subscription) subscriptionResource {
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

// newSecret is a fresh secret and its sealed form, which is what is stored.
func (h *subscriptionHandlers) newSecret() (secret, sealed string, err error) {
	secret = webhook.NewSecret()
	sealed, err = h.sealer.Seal(secret)
	return secret, sealed, err
}

func (h *subscriptionHandlers) createSubscription(c *gin.Context) {
	var body subscriptionBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	sub := subscriber(c)
	if body.EndPoint == nil || *body.EndPoint == "" {
		abort(c, problem.BadRequest("EndPoint is required: the https URL deliveries are POSTed to"))
		return
	}
	endpoint, err := h.guard.CheckEndpoint(c.Request.Context(), string(*body.EndPoint))
	if err != nil {
		abort(c, problem.New(http.StatusBadRequest, "endpoint-not-allowed", "EndPoint: %s", err))
		return
	}
	if len(body.Types) > maxSubscriptionTypes {
		abort(c, problem.BadRequest("Types: at most %d", maxSubscriptionTypes))
		return
	}
	for _, t := range body.Types {
		if !slices.Contains(events.Types, string(t)) {
			abort(c, problem.BadRequest("Types: %q is not an event type; the types are %v", string(t), events.Types))
			return
		}
		if !slices.Contains(sub.Types, string(t)) {
			sub.Types = append(sub.Types, string(t))
		}
	}
	secret, sealed, err := h.newSecret()
	if err != nil {
		abort(c, err)
		return
	}
	sub.EndPoint, sub.Secret = endpoint, sealed
	created, err := h.q.CreateSubscription(c.Request.Context(), sub, h.limit)
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
	want := subscriber(c)
	var subs []store.Subscription
	var err error
	if want.ServiceOwnerCode != "" {
		subs, err = h.q.ServiceOwnerSubscriptions(c.Request.Context(), want.ServiceOwnerCode)
	} else {
		subs, err = h.q.ReporteeSubscriptions(c.Request.Context(), want.ReporteeID, want.Subscriber)
	}
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

// loadSubscription reads the subscription of the path if it is the caller's and has not ended; any other
// is answered as one that does not exist.
func (h *subscriptionHandlers) loadSubscription(c *gin.Context) (store.Subscription, bool) {
	raw := c.Param("subscriptionId")
	id, err := strconv.ParseInt(raw, 10, 64)
	s, want := store.Subscription{}, subscriber(c)
	if err == nil {
		s, err = h.q.GetSubscription(c.Request.Context(), id)
	} else {
		err = store.ErrNotFound
	}
	if err == nil && (s.Status == webhook.StatusEnded || s.ServiceOwnerCode != want.ServiceOwnerCode ||
		s.ReporteeID != want.ReporteeID || s.Subscriber != want.Subscriber) {
		err = store.ErrNotFound
	}
	return s, found(c, err, func() *problem.Problem { return problem.NotFound("there is no subscription %s of yours", raw) })
}

func (h *subscriptionHandlers) getSubscription(c *gin.Context) {
	if s, ok := h.loadSubscription(c); ok {
		respond(c, http.StatusOK, h.resource(c, s))
	}
}

// deleteSubscription ends the subscription: nothing more is delivered, its workflow ends at its next step.
func (h *subscriptionHandlers) deleteSubscription(c *gin.Context) {
	s, ok := h.loadSubscription(c)
	if !ok {
		return
	}
	if err := h.q.EndSubscription(c.Request.Context(), s.ID); err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *subscriptionHandlers) listDeadLetters(c *gin.Context) {
	s, ok := h.loadSubscription(c)
	if !ok {
		return
	}
	dead, err := h.q.DeadLetters(c.Request.Context(), s.ID)
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
	s, ok := h.loadSubscription(c)
	if !ok {
		return
	}
	n, err := h.q.AskReplay(c.Request.Context(), s.ID)
	if errors.Is(err, store.ErrSubscriptionEnded) || errors.Is(err, store.ErrNotFound) {
		err = problem.NotFound("there is no subscription %d of yours", s.ID)
	}
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

// rotateSecret gives the subscription a new secret, shown once in the answer. The one it replaces still
// signs every delivery beside the new one for the overlap (PreviousSecretExpires), so the subscriber can
// switch to the new secret without missing a delivery; a second rotation within the overlap drops the
// oldest.
func (h *subscriptionHandlers) rotateSecret(c *gin.Context) {
	s, ok := h.loadSubscription(c)
	if !ok {
		return
	}
	secret, sealed, err := h.newSecret()
	if err != nil {
		abort(c, err)
		return
	}
	until := time.Now().Add(h.overlap)
	err = h.q.RotateSubscriptionSecret(c.Request.Context(), s.ID, sealed, until)
	if errors.Is(err, store.ErrNotFound) { // ended meanwhile
		err = problem.NotFound("there is no subscription %d of yours", s.ID)
	}
	if err != nil {
		abort(c, err)
		return
	}
	s.PreviousSecret, s.PreviousSecretUntil = s.Secret, until
	r := h.resource(c, s)
	r.Secret = secret
	respond(c, http.StatusOK, r)
}
