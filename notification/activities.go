package notification

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/heartbeat"
	"github.com/postbox/postbox/store"
)

// Activities are the order workflow's steps: deciding and sending a batch, and giving up on one.
type Activities struct {
	Pool   *pgxpool.Pool
	Events events.Builder
	// PublicURL is where the links in the messages point (config.PublicURL).
	PublicURL string
	Mailer    *Mailer     // nil: no e-mail channel on this worker
	SMS       *SMSGateway // nil: no SMS channel on this worker
}

// Steps are the activities to register, each under its method's name.
func (a *Activities) Steps() []any { return []any{a.SendBatch, a.GiveUp} }

// BatchInput names a batch: the recipients of order with an ordinal in (From, To], in round Round, of
// the workflow started at StartedAt.
type BatchInput struct {
	OrderID   string
	Round     int
	From, To  int
	StartedAt time.Time
}

// noOrderPatience is how long SendBatch waits for the order's row after its workflow started: the request
// commits it moments after the start, so a row missing for longer was never committed.
const noOrderPatience = time.Minute

// noOrderType is the type of the error that ends a workflow whose order was never stored.
const noOrderType = "NoOrder"

func isNoOrder(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == noOrderType
}

// BatchResult counts a batch's sends of its round by their state, across all its attempts.
type BatchResult struct{ Sent, Failed, Skipped int }

// errUndecided fails a batch some of whose sends met a temporary failure: the retry sends only those.
var errUndecided = errors.New("some notifications could not be sent yet")

// SendBatch decides every undecided send of the batch: skipped when the message is gone or (a reminder)
// no longer waits for its reader, failed when the recipient has no address for the channel, else
// recorded 'sending', sent, and recorded sent or failed with its event. A send that met a temporary
// failure stays 'sending' and fails the activity, whose retry sends it again under the same key.
func (a *Activities) SendBatch(ctx context.Context, in BatchInput) (BatchResult, error) {
	defer heartbeat.Start(ctx)()
	order, err := getOrderRow(ctx, a.Pool, in.OrderID)
	switch {
	case errors.Is(err, pgx.ErrNoRows) && time.Since(in.StartedAt) > noOrderPatience:
		return BatchResult{}, temporal.NewNonRetryableApplicationError("the order was never stored", noOrderType, err)
	case errors.Is(err, pgx.ErrNoRows): // its request has not committed it yet
		return BatchResult{}, errors.New("the order is not in the database yet")
	}
	if err != nil {
		return BatchResult{}, err
	}
	batch, err := loadBatch(ctx, a.Pool, in.OrderID, in.Round, in.From, in.To)
	if err != nil {
		return BatchResult{}, err
	}
	var res BatchResult
	var decided, begun []decision
	var outgoing []target
	for _, t := range batch {
		if t.State != "" && t.State != StateSending {
			continue
		}
		d := a.decide(order, in.Round, t)
		switch d.State {
		case StateSending:
			begun, outgoing = append(begun, d), append(outgoing, t)
			outgoing[len(outgoing)-1].Channel, outgoing[len(outgoing)-1].Address = d.Channel, d.Address
		default:
			decided = append(decided, d)
		}
	}
	// The sends about to go are recorded first: a crash from here on resends them with the same keys.
	if err := a.record(ctx, in, batch, append(decided, begun...), &res); err != nil {
		return res, err
	}
	outcomes := a.send(ctx, in, order, outgoing)
	var after []decision
	undecided := 0
	for i, t := range outgoing {
		var se *SendError
		switch err := outcomes[i]; {
		case err == nil:
			after = append(after, decision{Ordinal: t.Ordinal, State: StateSent, Channel: t.Channel})
		case errors.As(err, &se) && se.Permanent:
			after = append(after, decision{Ordinal: t.Ordinal, State: StateFailed, Channel: t.Channel, Reason: ReasonRejected + ": " + se.Reason})
		default:
			undecided++
		}
	}
	// The outcomes are recorded even when the context is done: what went must not be sent again.
	if err := a.record(context.WithoutCancel(ctx), in, batch, after, &res); err != nil {
		return res, err
	}
	if undecided > 0 {
		return res, fmt.Errorf("%w: %d of %d (%s)", errUndecided, undecided, len(outgoing), firstTemporary(outcomes))
	}
	return countBatch(ctx, a.Pool, in)
}

// firstTemporary is the reason of the first send that may go on a retry.
func firstTemporary(outcomes []error) string {
	for _, err := range outcomes {
		var se *SendError
		if err != nil && !(errors.As(err, &se) && se.Permanent) {
			return err.Error()
		}
	}
	return ""
}

// decide is the send of round to t before anything goes: skipped, failed, or 'sending' on a channel.
func (a *Activities) decide(order orderRow, round int, t target) decision {
	d := decision{Ordinal: t.Ordinal, State: StateSkipped}
	switch {
	case !t.Exists || t.Deleted:
		d.Reason = ReasonGone
		return d
	case round > 0 && t.Type == store.TypeCorrespondence && t.Confirm && t.Confirmed:
		d.Reason = ReasonConfirmed
		return d
	case round > 0 && t.Type == store.TypeCorrespondence && !t.Confirm && t.Read:
		d.Reason = ReasonRead
		return d
	case round > 0 && t.Type == store.TypeFormTask && store.ArchivedStatus(t.Status):
		d.Reason = ReasonSubmitted
		return d
	}
	if t.State == StateSending { // begun before a crash or a temporary failure: the same channel and address
		t.Addresses = Addresses{}
		switch t.Channel {
		case Email:
			t.Addresses.EmailAddress = t.Address
		case Sms:
			t.Addresses.MobileNumber = t.Address
		}
		order.Channel = t.Channel
	}
	reachable := t.Addresses
	if a.SMS == nil {
		reachable.MobileNumber = ""
	}
	if a.Mailer == nil {
		reachable.EmailAddress = ""
	}
	channel, address := route(order.Channel, reachable)
	if channel == "" {
		d.State, d.Reason = StateFailed, ReasonNoAddress
		if ch, _ := route(order.Channel, t.Addresses); ch != "" {
			d.Reason = ReasonUnavailable // an address there is, but this worker lacks its channel
		}
		return d
	}
	d.State, d.Channel, d.Address = StateSending, channel, address
	return d
}

// record writes ds in one transaction with the events of those it decided for good: notification.sent
// or notification.failed to the owner's feed (and the party's), naming the order, the round and the
// channel, never the address.
func (a *Activities) record(ctx context.Context, in BatchInput, batch []target, ds []decision, res *BatchResult) error {
	if len(ds) == 0 {
		return nil
	}
	byOrdinal := make(map[int]target, len(batch))
	for _, t := range batch {
		byOrdinal[t.Ordinal] = t
	}
	want := make(map[int]decision, len(ds))
	for _, d := range ds {
		want[d.Ordinal] = d
	}
	return store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		changed, err := writeDecisions(ctx, tx, in.OrderID, in.Round, ds, clock.Now())
		if err != nil {
			return err
		}
		var evs []store.Event
		for _, ordinal := range changed {
			d, t := want[ordinal], byOrdinal[ordinal]
			switch d.State {
			case StateSent:
				res.Sent++
				evs = append(evs, a.event(events.NotificationSent, in, t, d))
			case StateFailed:
				res.Failed++
				evs = append(evs, a.event(events.NotificationFailed, in, t, d))
			case StateSkipped:
				res.Skipped++
			}
		}
		return store.New(tx).AppendEvents(ctx, evs...)
	})
}

func (a *Activities) event(eventType string, in BatchInput, t target, d decision) store.Event {
	return a.Events.NotificationEvent(eventType, events.Notification{
		Message: events.Message{MessageID: t.MessageID, ReporteeID: t.PartyID, Type: t.Type, ServiceCode: t.Service.Code,
			ServiceEdition: t.Service.Edition, Status: t.Status},
		OrderID: in.OrderID, Round: in.Round, Channel: d.Channel, Reason: d.Reason})
}

// send sends the mails and SMS of outgoing (their Channel and Address decided), e-mails over the mailer's
// connections and SMS beside them, and returns one outcome per target.
func (a *Activities) send(ctx context.Context, in BatchInput, order orderRow, outgoing []target) []error {
	out := make([]error, len(outgoing))
	var mails []Mail
	var mailIdx, smsIdx []int
	for i, t := range outgoing {
		v := values{Name: t.Name, Subject: t.Subject, Link: a.link(t), DueAt: t.DueAt}
		key := fmt.Sprintf("%s.%d.%d", in.OrderID, t.Ordinal, in.Round)
		switch t.Channel {
		case Email:
			mails = append(mails, Mail{Key: key, To: t.Address, Subject: fill(order.EmailSubject, v, oneLine),
				Text: fill(order.EmailBody, v, plain), HTML: htmlBody(order.EmailBody, v)})
			mailIdx = append(mailIdx, i)
		case Sms:
			smsIdx = append(smsIdx, i)
		}
	}
	var wg sync.WaitGroup
	if len(smsIdx) > 0 {
		wg.Go(func() {
			for _, i := range smsIdx {
				t := outgoing[i]
				v := values{Name: t.Name, Subject: t.Subject, Link: a.link(t), DueAt: t.DueAt}
				out[i] = a.SMS.Send(ctx, fmt.Sprintf("%s.%d.%d", in.OrderID, t.Ordinal, in.Round), t.Address, fill(order.SmsText, v, plain))
			}
		})
	}
	if len(mails) > 0 {
		for j, err := range a.Mailer.Send(ctx, mails) {
			out[mailIdx[j]] = err
		}
	}
	wg.Wait()
	return out
}

// link is where the recipient reads its message: the message's page under the public URL.
func (a *Activities) link(t target) string {
	return strings.TrimRight(a.PublicURL, "/") + "/api/" + identity.ReporteeID(t.PartyID) + "/messages/" + t.MessageID + "/portalview"
}

// GiveUp decides every send of the batch still undecided as failed (gave-up: a dead letter), with its
// event, once SendBatch's retries are spent.
func (a *Activities) GiveUp(ctx context.Context, in BatchInput) (BatchResult, error) {
	batch, err := loadBatch(ctx, a.Pool, in.OrderID, in.Round, in.From, in.To)
	if err != nil {
		return BatchResult{}, err
	}
	var ds []decision
	for _, t := range batch {
		if t.State == "" || t.State == StateSending {
			ds = append(ds, decision{Ordinal: t.Ordinal, State: StateFailed, Channel: t.Channel, Address: t.Address, Reason: ReasonGaveUp})
		}
	}
	var res BatchResult
	if err := a.record(ctx, in, batch, ds, &res); err != nil {
		return res, err
	}
	return countBatch(ctx, a.Pool, in)
}

// NewActivities returns the activities over pool with the channels of smtp and sms (none where their
// address is empty); events name their resources under publicURL.
func NewActivities(pool *pgxpool.Pool, publicURL string, smtp SMTPConfig, sms SMSConfig) (*Activities, error) {
	a := &Activities{Pool: pool, Events: events.NewBuilder(publicURL), PublicURL: publicURL}
	if smtp.Addr != "" {
		m, err := NewMailer(smtp)
		if err != nil {
			return nil, err
		}
		a.Mailer = m
	}
	if sms.URL != "" {
		a.SMS = NewSMSGateway(sms)
	}
	return a, nil
}

// Configured says which channels a's worker sends on.
func (a *Activities) Configured() Configured {
	return Configured{Email: a.Mailer != nil, Sms: a.SMS != nil}
}
