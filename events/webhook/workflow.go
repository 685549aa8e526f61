package webhook

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Delivery runs as one workflow per subscription (id SubscriptionWorkflowID), on its own task queue, so an
// operator finds a subscription's deliveries, attempts and failures in the Temporal UI and scales delivery
// apart from the form tasks. The workflow holds no cursor and no event: PostgreSQL does (the
// subscription's cursor, the outbox, the dead letters), so a lost or reset workflow starts again where
// deliveries stopped, and history stays small (continue-as-new when the server suggests it).
//
// The loop: handshake until the endpoint allows deliveries; then DeliverNext sends, in order, the replays
// asked for and the events after the cursor that the subscriber may see, stopping at the first failure,
// and returns at once. With nothing more to send the workflow waits for a WakeSignal, which the Dispatcher
// of the events workers sends when committed events concern the subscription (or Supervise, for a replay),
// or for Policy.IdleCheck: an idle subscription holds no worker slot, no poll and no heartbeat, only a
// timer. A failed event is tried again (DeliverEvents) after each interval of Policy.Retries, then
// dead-lettered, and delivery goes on with the next one. An endpoint that fails for Policy.PauseAfter
// pauses the subscription. Events are delivered in outbox order, so in order per subject; at least once:
// an attempt cut short (a worker dies) is sent again with the same webhook-id.
const (
	// TaskQueue is the task queue of the delivery workflows and their activities (queue group "events").
	TaskQueue = "postbox-events"
	// SubscriptionWorkflow is the registered name of Subscription.
	SubscriptionWorkflow = "WebhookSubscription"
	// SubscriptionWorkflowIDPrefix starts the id of every subscription's workflow: "subscription/<id>".
	SubscriptionWorkflowIDPrefix = "subscription/"
	// WakeSignal tells an idle subscription's workflow that there may be something to deliver.
	WakeSignal = "wake"
)

// SubscriptionWorkflowID is the id of the delivery workflow of a subscription.
func SubscriptionWorkflowID(id int64) string {
	return SubscriptionWorkflowIDPrefix + strconv.FormatInt(id, 10)
}

// Activity names; the methods of Activities carry the same names.
const (
	ActivityHandshake     = "WebhookHandshake"
	ActivityDeliverNext   = "WebhookDeliverNext"
	ActivityDeliverEvents = "WebhookDeliverEvents"
	ActivityDeadLetter    = "WebhookDeadLetter"
	ActivitySetStatus     = "WebhookSetStatus"
)

// ErrEndpointFailed is the type of the (non-retryable) activity error of an endpoint's refusal or
// failure; its message is the reason the subscriber is shown. Other activity errors are Postbox's own
// (the database away) and are retried by the activity's retry policy, not counted against the endpoint.
const ErrEndpointFailed = "EndpointFailed"

// Policy is how a subscription's workflow retries and when it gives up; tests run it in milliseconds.
type Policy struct {
	// Retries are the waits before each further attempt of a failed delivery (or handshake).
	Retries []time.Duration
	// PauseAfter pauses a subscription whose endpoint has failed for this long without a success.
	PauseAfter time.Duration
	// AttemptTimeout cuts one request to the endpoint.
	AttemptTimeout time.Duration
	// IdleCheck is how long an idle workflow waits for a WakeSignal before it looks anyway: the net under
	// a wake lost with a dispatcher that died between its commit and its signals.
	IdleCheck time.Duration
}

// IdleCheck is Policy.IdleCheck in production: an idle subscription costs one look an hour.
const IdleCheck = time.Hour

// SubscriptionInput starts a subscription's workflow and is carried over continue-as-new.
type SubscriptionInput struct {
	SubscriptionID int64
	Policy         Policy
	// Validated is set once the endpoint has passed the handshake.
	Validated bool
	// FailingSince is when the endpoint began failing (zero while it succeeds).
	FailingSince time.Time
}

// Subscription statuses, as stored and shown.
const (
	StatusPending = "pending" // the endpoint has not passed the handshake yet; Reason says why
	StatusActive  = "active"
	StatusPaused  = "paused" // the endpoint failed for Policy.PauseAfter; a replay resumes it
	StatusEnded   = "ended"  // DELETE ended it
)

// EventRef is one event to deliver: its outbox sequence and id; Replay marks a dead letter sent again.
type EventRef struct {
	Seq    int64
	ID     string
	Replay bool
}

// NextResult is what DeliverNext did: the subscription's status (a workflow of a subscription no longer
// active ends), the events delivered, in order, and the one the endpoint failed next, with why.
type NextResult struct {
	Status    string
	Delivered []EventRef
	Failed    *EventRef
	Reason    string
}

// DeliverInput asks DeliverEvents to send events in order (a failed one's further attempts), stopping at
// the first failure.
type DeliverInput struct {
	SubscriptionID int64
	Events         []EventRef
}

// DeliverResult says how many of the events were delivered (the rest were not tried after a failure) and
// whether the subscription ended meanwhile.
type DeliverResult struct {
	Delivered int
	Ended     bool
}

// DeadLetterInput puts one event aside after its last attempt failed.
type DeadLetterInput struct {
	SubscriptionID int64
	Event          EventRef
	Attempts       int
	Reason         string
}

// StatusInput sets a subscription's status and reason (pending with the handshake's failure, active,
// paused with the endpoint's).
type StatusInput struct {
	SubscriptionID int64
	Status         string
	Reason         string
}

var (
	// Activities that only touch PostgreSQL are retried until it answers.
	storeRetry = &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}
	// An endpoint's failure is not retried by Temporal: the workflow waits out Policy.Retries itself.
	endpointRetry = &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		NonRetryableErrorTypes: []string{ErrEndpointFailed}}
)

func storeOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: TaskQueue,
		StartToCloseTimeout: 30 * time.Second, RetryPolicy: storeRetry})
}

// endpointOptions are those of the activities that call the endpoint: a wait of up to wait, then n
// requests, each cut at the policy's timeout; a worker that dies in one is noticed by the heartbeat.
func endpointOptions(ctx workflow.Context, wait time.Duration, p Policy, n int) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: TaskQueue,
		StartToCloseTimeout: wait + time.Duration(n)*(p.AttemptTimeout+time.Second) + 10*time.Second,
		HeartbeatTimeout:    p.AttemptTimeout + 10*time.Second, RetryPolicy: endpointRetry})
}

// endpointFailure is the reason of an endpoint's failure, or "" when err is something else.
func endpointFailure(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == ErrEndpointFailed {
		return app.Message()
	}
	return ""
}

// Deliver is the delivery workflow of one subscription (registered as SubscriptionWorkflow).
func Deliver(ctx workflow.Context, in SubscriptionInput) error {
	w := &subscriptionRun{in: in}
	return w.run(ctx)
}

type subscriptionRun struct {
	in SubscriptionInput
}

// errStop ends the run: the subscription ended or was paused.
var errStop = errors.New("stop")

func (w *subscriptionRun) run(ctx workflow.Context) error {
	for {
		if err := w.handshake(ctx); err != nil || !w.in.Validated {
			return stopped(err)
		}
		if err := w.deliver(ctx); err != nil || w.in.Validated {
			return stopped(err)
		}
		// The subscription is pending again (its handshake is to be done anew): shake hands first.
	}
}

// handshake asks the endpoint until it allows deliveries; Validated stays false when the subscription
// ended meanwhile.
func (w *subscriptionRun) handshake(ctx workflow.Context) error {
	for attempt := 0; !w.in.Validated; attempt++ {
		err := workflow.ExecuteActivity(endpointOptions(ctx, 0, w.in.Policy, 1), ActivityHandshake, w.in.SubscriptionID).Get(ctx, &w.in.Validated)
		if reason := endpointFailure(err); reason != "" {
			if err := w.failed(ctx, attempt, reason); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if !w.in.Validated { // the subscription ended meanwhile, unless a wake says it changed since
			if woken(ctx) {
				attempt = -1
				continue
			}
			return nil
		}
		w.in.FailingSince = time.Time{}
	}
	return nil
}

// deliver delivers until the subscription is no longer active: it returns with Validated still set when
// it ended or was paused, and with Validated cleared when it is pending again.
func (w *subscriptionRun) deliver(ctx workflow.Context) error {
	for {
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			woken(ctx) // the new run looks first, which serves them
			return workflow.NewContinueAsNewError(ctx, Deliver, w.in)
		}
		var next NextResult
		err := workflow.ExecuteActivity(endpointOptions(ctx, 0, w.in.Policy, MaxPerActivity), ActivityDeliverNext,
			w.in.SubscriptionID).Get(ctx, &next)
		if err != nil {
			return err
		}
		if next.Status == StatusPending {
			w.in.Validated = false
			return nil
		}
		if next.Status != StatusActive {
			// A wake that came meanwhile may say the subscription is active again (a replay resumed it,
			// its start met this run still ending): look once more rather than end and leave it without a
			// run. A wake arriving as this run ends makes Temporal retry the ending with the wake in view.
			if woken(ctx) {
				continue
			}
			return nil
		}
		if len(next.Delivered) > 0 {
			w.in.FailingSince = time.Time{}
		}
		switch {
		case next.Failed != nil:
			if err := w.retry(ctx, *next.Failed, next.Reason); err != nil {
				return err
			}
		case len(next.Delivered) < MaxPerActivity: // all there was: wait for more
			w.idle(ctx)
		}
	}
}

// woken takes the wakes that came and tells whether there were any.
func woken(ctx workflow.Context) bool {
	got := false
	for workflow.GetSignalChannel(ctx, WakeSignal).ReceiveAsync(nil) {
		got = true
	}
	return got
}

// idle waits for a WakeSignal or Policy.IdleCheck, then takes every wake that came meanwhile: the next
// look serves them all.
func (w *subscriptionRun) idle(ctx workflow.Context) {
	wake := workflow.GetSignalChannel(ctx, WakeSignal)
	timerCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(wake, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.AddFuture(workflow.NewTimer(timerCtx, w.in.Policy.IdleCheck), func(workflow.Future) {})
	sel.Select(ctx)
	woken(ctx)
}

func stopped(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// retry tries a failed event again after each interval of the retry schedule, and dead-letters it when
// the last attempt fails; the events after it wait.
func (w *subscriptionRun) retry(ctx workflow.Context, event EventRef, reason string) error {
	for attempts := 1; ; attempts++ {
		if attempts > len(w.in.Policy.Retries) {
			return workflow.ExecuteActivity(storeOptions(ctx), ActivityDeadLetter, DeadLetterInput{
				SubscriptionID: w.in.SubscriptionID, Event: event, Attempts: attempts, Reason: reason}).Get(ctx, nil)
		}
		if err := w.failed(ctx, attempts-1, reason); err != nil {
			return err
		}
		var res DeliverResult
		err := workflow.ExecuteActivity(endpointOptions(ctx, 0, w.in.Policy, 1), ActivityDeliverEvents,
			DeliverInput{SubscriptionID: w.in.SubscriptionID, Events: []EventRef{event}}).Get(ctx, &res)
		if res.Ended {
			return errStop
		}
		if err == nil {
			w.in.FailingSince = time.Time{}
			return nil
		}
		if reason = endpointFailure(err); reason == "" {
			return err
		}
	}
}

// failed notes a failure of the endpoint and waits the retry interval of attempt, or pauses the
// subscription (errStop) when the endpoint has failed for too long.
func (w *subscriptionRun) failed(ctx workflow.Context, attempt int, reason string) error {
	now := workflow.Now(ctx)
	if w.in.FailingSince.IsZero() {
		w.in.FailingSince = now
	}
	if now.Sub(w.in.FailingSince) >= w.in.Policy.PauseAfter {
		reason = fmt.Sprintf("paused: the endpoint has failed since %s; last: %s", w.in.FailingSince.UTC().Format(time.RFC3339), reason)
		if err := workflow.ExecuteActivity(storeOptions(ctx), ActivitySetStatus,
			StatusInput{SubscriptionID: w.in.SubscriptionID, Status: StatusPaused, Reason: reason}).Get(ctx, nil); err != nil {
			return err
		}
		return errStop
	}
	retries := w.in.Policy.Retries
	return workflow.Sleep(ctx, retries[min(attempt, len(retries)-1)])
}
