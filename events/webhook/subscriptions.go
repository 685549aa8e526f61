package webhook

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/store"
)

// Subscriptions are the webhook subscriptions as their subscribers manage them: a reportee's caller or
// a service owner sees only its own, secrets are stored sealed and shown once, and dead letters are
// replayed on request.
type Subscriptions struct {
	st      Store
	guard   Guard
	limit   int           // the most subscriptions a subscriber may have in an area; 0: no limit
	sealer  *Sealer       // secrets are stored sealed, never in plaintext
	overlap time.Duration // how long a rotated secret still signs beside the new one
}

// NewSubscriptions returns the service over st.
func NewSubscriptions(st Store, guard Guard, limit int, sealer *Sealer, overlap time.Duration) *Subscriptions {
	return &Subscriptions{st: st, guard: guard, limit: limit, sealer: sealer, overlap: overlap}
}

// Kind is a kind of refused subscription request.
type Kind int

// Kinds of refusal.
const (
	BadInput           Kind = iota + 1
	EndpointNotAllowed      // the endpoint is not a public https address
	NotFound                // no such subscription of the subscriber's (ended ones included)
)

// Error is a refused subscription request.
type Error = refusal.Error[Kind]

// MaxTypes is the most event types a subscription names.
const MaxTypes = 50

// Create subscribes owner (a Subscription with only its subscriber set) to the event types (none:
// every type) at endpoint; it returns the subscription and its secret, which is never shown again.
func (s *Subscriptions) Create(ctx context.Context, owner Subscription, endpoint string, types []string) (Subscription, string, error) {
	if endpoint == "" {
		return owner, "", refusal.New(BadInput, "EndPoint is required: the https URL deliveries are POSTed to")
	}
	checked, err := s.guard.CheckEndpoint(ctx, endpoint)
	if err != nil {
		return owner, "", refusal.New(EndpointNotAllowed, "EndPoint: %s", err)
	}
	if len(types) > MaxTypes {
		return owner, "", refusal.New(BadInput, "Types: at most %d", MaxTypes)
	}
	for _, t := range types {
		if !slices.Contains(events.Types, t) {
			return owner, "", refusal.New(BadInput, "Types: %q is not an event type; the types are %v", t, events.Types)
		}
		if !slices.Contains(owner.Types, t) {
			owner.Types = append(owner.Types, t)
		}
	}
	secret, sealed, err := s.newSecret()
	if err != nil {
		return owner, "", err
	}
	owner.EndPoint, owner.Secret = checked, sealed
	created, err := s.st.CreateSubscription(ctx, owner, s.limit)
	return created, secret, err
}

func (s *Subscriptions) newSecret() (secret, sealed string, err error) {
	secret = NewSecret()
	sealed, err = s.sealer.Seal(secret)
	return secret, sealed, err
}

// List is the subscriptions of owner.
func (s *Subscriptions) List(ctx context.Context, owner Subscription) ([]Subscription, error) {
	if owner.ServiceOwnerCode != "" {
		return s.st.ServiceOwnerSubscriptions(ctx, owner.ServiceOwnerCode)
	}
	return s.st.ReporteeSubscriptions(ctx, owner.ReporteeID, owner.Subscriber)
}

// Get is subscription ref (its id as the client wrote it) of owner; one ended or another's is NotFound.
func (s *Subscriptions) Get(ctx context.Context, owner Subscription, ref string) (Subscription, error) {
	id, err := strconv.ParseInt(ref, 10, 64)
	sub := Subscription{}
	if err == nil {
		sub, err = s.st.GetSubscription(ctx, id)
	} else {
		err = store.ErrNotFound
	}
	if err == nil && (sub.Status == StatusEnded || sub.ServiceOwnerCode != owner.ServiceOwnerCode ||
		sub.ReporteeID != owner.ReporteeID || sub.Subscriber != owner.Subscriber) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		err = refusal.New(NotFound, "there is no subscription %s of yours", ref)
	}
	return sub, err
}

// End ends subscription ref of owner: nothing more is delivered, its workflow ends at its next step.
func (s *Subscriptions) End(ctx context.Context, owner Subscription, ref string) error {
	sub, err := s.Get(ctx, owner, ref)
	if err != nil {
		return err
	}
	return s.st.EndSubscription(ctx, sub.ID)
}

// DeadLetters is subscription ref of owner with its dead letters.
func (s *Subscriptions) DeadLetters(ctx context.Context, owner Subscription, ref string) (Subscription, []DeadLetter, error) {
	sub, err := s.Get(ctx, owner, ref)
	if err != nil {
		return sub, nil, err
	}
	dead, err := s.st.DeadLetters(ctx, sub.ID)
	return sub, dead, err
}

// Replay asks for the dead letters of subscription ref of owner to be sent again, and says how many; a
// paused subscription is resumed, from its handshake.
func (s *Subscriptions) Replay(ctx context.Context, owner Subscription, ref string) (Subscription, int, error) {
	sub, err := s.Get(ctx, owner, ref)
	if err != nil {
		return sub, 0, err
	}
	n, err := s.st.AskReplay(ctx, sub.ID)
	if errors.Is(err, ErrSubscriptionEnded) || errors.Is(err, store.ErrNotFound) {
		err = refusal.New(NotFound, "there is no subscription %d of yours", sub.ID)
	}
	return sub, n, err
}

// RotateSecret gives subscription ref of owner a new secret, returned once. The one it replaces still
// signs every delivery beside the new one for the overlap, so the subscriber can switch without missing
// a delivery; a second rotation within the overlap drops the oldest.
func (s *Subscriptions) RotateSecret(ctx context.Context, owner Subscription, ref string) (Subscription, string, error) {
	sub, err := s.Get(ctx, owner, ref)
	if err != nil {
		return sub, "", err
	}
	secret, sealed, err := s.newSecret()
	if err != nil {
		return sub, "", err
	}
	until := time.Now().Add(s.overlap)
	err = s.st.RotateSubscriptionSecret(ctx, sub.ID, sealed, until)
	if errors.Is(err, store.ErrNotFound) { // ended meanwhile
		err = refusal.New(NotFound, "there is no subscription %d of yours", sub.ID)
	}
	sub.PreviousSecret, sub.PreviousSecretUntil = sub.Secret, until
	return sub, secret, err
}
