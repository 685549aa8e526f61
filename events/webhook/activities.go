package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Activities are the delivery workflow's activities, over the store, the sender and the listener.
type Activities struct {
	q        *store.Queries
	rights   *identity.Rights
	sender   *Sender
	listener *Listener
}

// NewActivities returns the activities; the listener must run (Listener.Run) for the long polls to wake
// at once rather than at the next FallbackPoll.
func NewActivities(q *store.Queries, rights *identity.Rights, sender *Sender, listener *Listener) *Activities {
	return &Activities{q: q, rights: rights, sender: sender, listener: listener}
}

// FallbackPoll is how often a waiting long poll looks at the outbox without being woken, so a lost
// notification delays a delivery by at most this.
const FallbackPoll = 2 * time.Second

// MaxConcurrentActivities is what an events worker runs at once: the long poll of every idle subscription
// holds an activity slot while it waits (a parked goroutine and no connection), so the slots are many.
const MaxConcurrentActivities = 1000

// BatchSize bounds the events one NextEvents returns (and one DeliverEvents sends).
const BatchSize = 100

func endpointError(reason string, delivered int) error {
	return temporal.NewNonRetryableApplicationError(reason, ErrEndpointFailed, nil, DeliverResult{Delivered: delivered})
}

// WebhookHandshake validates the subscription's endpoint and makes the subscription active; it answers
// false when the subscription is no longer to run.
func (a *Activities) WebhookHandshake(ctx context.Context, id int64) (bool, error) {
	sub, err := a.q.GetSubscription(ctx, id)
	if err != nil || (sub.Status != StatusPending && sub.Status != StatusActive) {
		return false, ignoreNotFound(err)
	}
	if err := a.sender.Handshake(ctx, sub.EndPoint); err != nil {
		var f *Failure
		if !errors.As(err, &f) {
			return false, err
		}
		if _, err := a.q.SetSubscriptionStatus(ctx, id, StatusPending, f.Reason); err != nil {
			return false, err
		}
		return false, endpointError(f.Reason, 0)
	}
	return a.q.SetSubscriptionStatus(ctx, id, StatusActive, "")
}

func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// NextEventsInput asks for the next events of a subscription, waiting up to Wait for some.
type NextEventsInput struct {
	SubscriptionID int64
	Wait           time.Duration
}

// WebhookNextEvents returns the replays asked for, else the next events after the cursor that the
// subscription may see, waiting (heartbeating) until there are some or in.Wait has passed. Events it may
// not see are passed over: the cursor moves past them.
func (a *Activities) WebhookNextEvents(ctx context.Context, in NextEventsInput) (NextEventsResult, error) {
	deadline := time.Now().Add(in.Wait)
	for {
		woken := a.listener.Changed()
		res, err := a.nextEvents(ctx, in.SubscriptionID)
		if err != nil || res.Status != StatusActive || len(res.Events) > 0 {
			return res, err
		}
		wait := min(FallbackPoll, time.Until(deadline))
		if wait <= 0 {
			return res, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-woken:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return res, ctx.Err()
		}
		timer.Stop()
		activity.RecordHeartbeat(ctx)
	}
}

func (a *Activities) nextEvents(ctx context.Context, id int64) (NextEventsResult, error) {
	sub, err := a.q.GetSubscription(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return NextEventsResult{Status: StatusEnded}, nil
	}
	if err != nil || sub.Status != StatusActive {
		return NextEventsResult{Status: sub.Status}, err
	}
	res := NextEventsResult{Status: sub.Status}
	replays, err := a.q.ReplaysAsked(ctx, id)
	if err != nil {
		return res, err
	}
	for _, d := range replays[:min(len(replays), BatchSize)] {
		res.Events = append(res.Events, EventRef{Seq: d.Seq, ID: d.EventID, Replay: true})
	}
	if len(res.Events) > 0 {
		return res, nil
	}
	// Everything up to the last committed seq is committed (seqs are given in commit order): what the
	// subscription may not see up to there is passed over.
	through, err := a.q.LastEventSeq(ctx)
	if err != nil || through <= sub.Cursor {
		return res, err
	}
	filter, err := a.filter(ctx, sub)
	if err != nil {
		return res, err
	}
	found, err := a.q.EventsFor(ctx, filter, sub.Cursor, through, BatchSize)
	if err != nil {
		return res, err
	}
	if len(found) == 0 {
		return res, a.q.AdvanceSubscription(ctx, id, through)
	}
	for _, e := range found {
		res.Events = append(res.Events, EventRef{Seq: e.Seq, ID: e.ID})
	}
	return res, nil
}

// filter is what the subscription may see: a service owner's services, or what the subscriber's rights
// for the reportee let it read now (so a right taken away stops the deliveries it gave).
func (a *Activities) filter(ctx context.Context, sub store.Subscription) (store.EventFilter, error) {
	f := store.EventFilter{Types: sub.Types, ServiceOwnerCode: sub.ServiceOwnerCode}
	if sub.ServiceOwnerCode != "" {
		return f, nil
	}
	rights, err := a.rights.ForSubscriber(ctx, sub.Subscriber, sub.ReporteeID)
	f.ReporteeID, f.Visibility = sub.ReporteeID, rights.Visibility()
	return f, err
}

// WebhookDeliverEvents sends the events in order and stops at the first the endpoint fails, an
// ErrEndpointFailed error whose details say how many went through. Each one delivered moves the cursor
// (or clears its dead letter), so a retried attempt does not send again what was acknowledged.
func (a *Activities) WebhookDeliverEvents(ctx context.Context, in DeliverInput) (DeliverResult, error) {
	sub, err := a.q.GetSubscription(ctx, in.SubscriptionID)
	if errors.Is(err, store.ErrNotFound) || sub.Status == StatusEnded {
		return DeliverResult{Ended: true}, nil
	}
	if err != nil {
		return DeliverResult{}, err
	}
	seqs := make([]int64, len(in.Events))
	for i, e := range in.Events {
		seqs[i] = e.Seq
	}
	stored, err := a.q.EventsBySeq(ctx, seqs)
	if err != nil {
		return DeliverResult{}, err
	}
	for i, ref := range in.Events {
		activity.RecordHeartbeat(ctx, i)
		if !ref.Replay && ref.Seq <= sub.Cursor {
			continue
		}
		e, ok := stored[ref.Seq]
		if !ok { // an event is never deleted; should it be, there is nothing to send
			continue
		}
		body, err := json.Marshal(events.FromStored(e))
		if err != nil {
			return DeliverResult{Delivered: i}, err
		}
		if err := a.sender.Deliver(ctx, sub.EndPoint, sub.Secret, e.ID, body); err != nil {
			var f *Failure
			if !errors.As(err, &f) {
				return DeliverResult{Delivered: i}, err
			}
			if _, err := a.q.SetSubscriptionStatus(ctx, sub.ID, StatusActive, "failing: "+f.Reason); err != nil {
				return DeliverResult{Delivered: i}, err
			}
			return DeliverResult{Delivered: i}, endpointError(f.Reason, i)
		}
		if ref.Replay {
			err = a.q.ReplayDelivered(ctx, sub.ID, ref.Seq)
		} else {
			err = a.q.AdvanceSubscription(ctx, sub.ID, ref.Seq)
		}
		if err != nil {
			return DeliverResult{Delivered: i}, err
		}
	}
	if sub.StatusReason != "" {
		_, err = a.q.SetSubscriptionStatus(ctx, sub.ID, StatusActive, "")
	}
	return DeliverResult{Delivered: len(in.Events)}, err
}

// WebhookDeadLetter puts an event aside after its last attempt, and moves the cursor past it.
func (a *Activities) WebhookDeadLetter(ctx context.Context, in DeadLetterInput) error {
	return a.q.AddDeadLetter(ctx, in.SubscriptionID, store.DeadLetter{Seq: in.Event.Seq, EventID: in.Event.ID,
		Attempts: in.Attempts, Reason: in.Reason})
}

// WebhookSetStatus sets a subscription's status and reason, unless it has ended.
func (a *Activities) WebhookSetStatus(ctx context.Context, in StatusInput) error {
	_, err := a.q.SetSubscriptionStatus(ctx, in.SubscriptionID, in.Status, in.Reason)
	return err
}
