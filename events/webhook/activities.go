package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store"
)

// Activities are the delivery workflow's activities, over the store, the sender and the sealer of the
// subscriptions' secrets.
type Activities struct {
	st     Store
	rights *identity.Rights
	sender *Sender
	sealer *Sealer
}

// NewActivities returns the activities.
func NewActivities(st Store, rights *identity.Rights, sender *Sender, sealer *Sealer) *Activities {
	return &Activities{st: st, rights: rights, sender: sender, sealer: sealer}
}

// signingSecrets opens the secrets that sign a subscription's deliveries now: its secret and, until its
// overlap ends, the one a rotation replaced. A secret that does not open (its key is not configured) is
// Postbox's failure, not the endpoint's: the activity is retried until the key is there.
func (a *Activities) signingSecrets(sub Subscription) ([]string, error) {
	secret, err := a.sealer.Open(sub.Secret)
	if err != nil {
		return nil, err
	}
	secrets := []string{secret}
	if sub.PreviousSecret != "" && time.Now().Before(sub.PreviousSecretUntil) {
		previous, err := a.sealer.Open(sub.PreviousSecret)
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, previous)
	}
	return secrets, nil
}

// BatchSize bounds the events read at once; MaxPerActivity those one DeliverNext delivers (its result
// lists them, for the Temporal UI).
const (
	BatchSize      = 100
	MaxPerActivity = 1000
)

func endpointError(reason string, delivered int) error {
	return temporal.NewNonRetryableApplicationError(reason, ErrEndpointFailed, nil, DeliverResult{Delivered: delivered})
}

// WebhookHandshake validates the subscription's endpoint and makes the subscription active; it answers
// false when the subscription is no longer to run.
func (a *Activities) WebhookHandshake(ctx context.Context, id int64) (bool, error) {
	sub, err := a.st.GetSubscription(ctx, id)
	if err != nil || (sub.Status != StatusPending && sub.Status != StatusActive) {
		return false, ignoreNotFound(err)
	}
	if err := a.sender.Handshake(ctx, sub.EndPoint); err != nil {
		var f *Failure
		if !errors.As(err, &f) {
			return false, err
		}
		if _, err := a.st.SetSubscriptionStatus(ctx, id, StatusPending, f.Reason); err != nil {
			return false, err
		}
		return false, endpointError(f.Reason, 0)
	}
	return a.st.SetSubscriptionStatus(ctx, id, StatusActive, "")
}

func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// WebhookDeliverNext delivers the subscription's next events: the replays asked for, or the events after
// the cursor that it may see, in order, until MaxPerActivity went through, there is nothing more, or the
// endpoint failed one. Events the subscription may not see are passed over: the cursor moves past them.
func (a *Activities) WebhookDeliverNext(ctx context.Context, id int64) (NextResult, error) {
	var res NextResult
	for {
		sub, refs, more, err := a.nextEvents(ctx, id)
		res.Status = sub.Status
		if err != nil || sub.Status != StatusActive {
			return res, err
		}
		if len(refs) == 0 {
			if more { // a page it may not see was passed over; the next may hold some
				continue
			}
			return res, nil
		}
		n, failed, err := a.send(ctx, sub, refs)
		res.Delivered = append(res.Delivered, refs[:n]...)
		if failed != nil {
			res.Failed, res.Reason = &refs[n], failed.Reason
		}
		if err != nil || failed != nil || len(res.Delivered) >= MaxPerActivity {
			return res, err
		}
	}
}

// nextEvents returns the subscription and, while it is active, the replays asked for or else the next
// events after its cursor that it may see (moving the cursor past those it may not); more says that it
// passed over a whole page and there are events after it.
func (a *Activities) nextEvents(ctx context.Context, id int64) (sub Subscription, refs []EventRef, more bool, err error) {
	sub, err = a.st.GetSubscription(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Subscription{Status: StatusEnded}, nil, false, nil
	}
	if err != nil || sub.Status != StatusActive {
		return sub, nil, false, err
	}
	replays, err := a.st.ReplaysAsked(ctx, id)
	if err != nil {
		return sub, nil, false, err
	}
	for _, d := range replays[:min(len(replays), BatchSize)] {
		refs = append(refs, EventRef{Seq: d.Seq, ID: d.EventID, Replay: true})
	}
	if len(refs) > 0 {
		return sub, refs, false, nil
	}
	// Everything up to the last committed seq is committed (seqs are given in commit order): what the
	// subscription may not see up to there is passed over.
	through, err := a.st.LastEventSeq(ctx)
	if err != nil || through <= sub.Cursor {
		return sub, nil, false, err
	}
	page, more, err := a.visibleEvents(ctx, sub)
	if err != nil {
		return sub, nil, false, err
	}
	for _, e := range page {
		if len(sub.Types) == 0 || slices.Contains(sub.Types, e.Type) {
			refs = append(refs, EventRef{Seq: e.Seq, ID: e.ID})
		}
	}
	if len(refs) > 0 {
		return sub, refs, false, nil
	}
	passed := through
	if len(page) > 0 && (more || page[len(page)-1].Seq > through) {
		passed = page[len(page)-1].Seq
	}
	return sub, nil, more, a.st.AdvanceSubscription(ctx, id, passed)
}

// visibleEvents is the next page of events after the cursor that the subscription may see: the feed's
// own filter, so a subscriber gets what it could read in the feed. A reportee's subscription is held to
// what the subscriber's rights allow now (so a right taken away stops the deliveries it gave): the events
// of messages it may read in the mailbox, and those of roles and role definitions if it manages access.
func (a *Activities) visibleEvents(ctx context.Context, sub Subscription) ([]store.Event, bool, error) {
	if sub.ServiceOwnerCode != "" {
		return events.NewFeed(a.st.Queries).ServiceOwnerEvents(ctx, sub.ServiceOwnerCode, sub.Cursor, BatchSize)
	}
	rights, err := a.rights.ForSubscriber(ctx, sub.Subscriber, sub.ReporteeID)
	if err != nil {
		return nil, false, err
	}
	return events.NewFeed(a.st.Queries).ReporteeEvents(ctx, sub.ReporteeID, rights.Visibility(), rights.AccessManager(), sub.Cursor, BatchSize)
}

// WebhookDeliverEvents sends the events in order (a failed event's further attempts) and stops at the
// first the endpoint fails: an ErrEndpointFailed error whose details say how many went through, so the
// attempt shows as failed, with the endpoint's answer, in the Temporal UI.
func (a *Activities) WebhookDeliverEvents(ctx context.Context, in DeliverInput) (DeliverResult, error) {
	sub, err := a.st.GetSubscription(ctx, in.SubscriptionID)
	if errors.Is(err, store.ErrNotFound) || sub.Status == StatusEnded {
		return DeliverResult{Ended: true}, nil
	}
	if err != nil {
		return DeliverResult{}, err
	}
	n, failed, err := a.send(ctx, sub, in.Events)
	if err == nil && failed != nil {
		err = endpointError(failed.Reason, n)
	}
	return DeliverResult{Delivered: n}, err
}

// send POSTs the events in order and returns how many went through and, when the endpoint failed the
// next one, why. The cursor moves past what was acknowledged once per call (a replay's dead letter goes at
// once), so a retried attempt does not send again what was acknowledged before it, except what a worker
// that died in the middle had sent (at least once: the same webhook-id again). A failure is shown on the
// subscription until the next success.
func (a *Activities) send(ctx context.Context, sub Subscription, refs []EventRef) (delivered int, failed *Failure, err error) {
	var acknowledged int64
	defer func() {
		if acknowledged > 0 {
			if advanced := a.st.AdvanceSubscription(context.WithoutCancel(ctx), sub.ID, acknowledged); err == nil {
				err = advanced
			}
		}
	}()
	seqs := make([]int64, len(refs))
	for i, e := range refs {
		seqs[i] = e.Seq
	}
	stored, err := events.NewFeed(a.st.Queries).EventsBySeq(ctx, seqs)
	if err != nil {
		return 0, nil, err
	}
	secrets, err := a.signingSecrets(sub)
	if err != nil {
		return 0, nil, err
	}
	for i, ref := range refs {
		activity.RecordHeartbeat(ctx, i)
		e, ok := stored[ref.Seq]
		if (!ref.Replay && ref.Seq <= sub.Cursor) || !ok { // acknowledged before a retry; or an event deleted
			continue
		}
		body, err := json.Marshal(events.FromStored(e))
		if err != nil {
			return i, nil, err
		}
		subscription := strconv.FormatInt(sub.ID, 10)
		if err := a.sender.Deliver(ctx, sub.EndPoint, secrets, e.ID, body); err != nil {
			var f *Failure
			if !errors.As(err, &f) {
				return i, nil, err
			}
			telemetry.WebhookDeliveries.WithLabelValues(subscription, "failed").Inc()
			_, err := a.st.SetSubscriptionStatus(ctx, sub.ID, StatusActive, "failing: "+f.Reason)
			return i, f, err
		}
		telemetry.WebhookDeliveries.WithLabelValues(subscription, "delivered").Inc()
		if !ref.Replay {
			lag := max(time.Since(e.Time), 0).Seconds()
			telemetry.WebhookLag.WithLabelValues(subscription).Set(lag)
			telemetry.WebhookLagSeconds.Observe(lag)
			acknowledged = ref.Seq
		} else if err := a.st.ReplayDelivered(ctx, sub.ID, ref.Seq); err != nil {
			return i, nil, err
		}
	}
	if sub.StatusReason != "" {
		_, err = a.st.SetSubscriptionStatus(ctx, sub.ID, StatusActive, "")
	}
	return len(refs), nil, err
}

// WebhookDeadLetter puts an event aside after its last attempt, and moves the cursor past it.
func (a *Activities) WebhookDeadLetter(ctx context.Context, in DeadLetterInput) error {
	err := a.st.AddDeadLetter(ctx, in.SubscriptionID, DeadLetter{Seq: in.Event.Seq, EventID: in.Event.ID,
		Attempts: in.Attempts, Reason: in.Reason})
	if err == nil {
		telemetry.WebhookDeadLetters.WithLabelValues(strconv.FormatInt(in.SubscriptionID, 10)).Inc()
	}
	return err
}

// WebhookSetStatus sets a subscription's status and reason, unless it has ended.
func (a *Activities) WebhookSetStatus(ctx context.Context, in StatusInput) error {
	_, err := a.st.SetSubscriptionStatus(ctx, in.SubscriptionID, in.Status, in.Reason)
	return err
}
