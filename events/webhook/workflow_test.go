package webhook_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/internal/temporaltest"
)

// endpoint stands in for the activities: an outbox of events, an endpoint that fails a number of times, and
// a record of what was delivered, dead-lettered and set.
type endpoint struct {
	mu        sync.Mutex
	outbox    []webhook.EventRef
	next      int
	failures  map[int64]int // seq → attempts to fail
	handshake int           // handshakes to fail
	delivered []string
	dead      []string
	statuses  []string
	polls     int
	// open keeps the subscription active once the outbox is drained (else it ends then).
	open bool
	// pendingAt makes the subscription pending (to shake hands anew) at the look of that number.
	pendingAt  int
	handshakes int
	// pausedAt answers the look of that number with a paused subscription.
	pausedAt int
	// attempts are the workflow clock's times of the attempts of each event.
	attempts map[string][]time.Time
	env      *testsuite.TestWorkflowEnvironment
}

func (e *endpoint) register(env *testsuite.TestWorkflowEnvironment) {
	e.env, e.attempts = env, map[string][]time.Time{}
	reg := func(fn any, name string) { env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	reg(func(ctx context.Context, id int64) (bool, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.handshakes++
		if e.handshake > 0 {
			e.handshake--
			return false, temporal.NewNonRetryableApplicationError("handshake: no", webhook.ErrEndpointFailed, nil)
		}
		return true, nil
	}, webhook.ActivityHandshake)
	reg(func(ctx context.Context, id int64) (webhook.NextResult, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.polls++
		if e.polls == e.pendingAt {
			return webhook.NextResult{Status: webhook.StatusPending}, nil
		}
		if e.polls == e.pausedAt {
			return webhook.NextResult{Status: webhook.StatusPaused}, nil
		}
		if e.next >= len(e.outbox) {
			if e.open {
				return webhook.NextResult{Status: webhook.StatusActive}, nil
			}
			return webhook.NextResult{Status: webhook.StatusEnded}, nil
		}
		batch := e.outbox[e.next:min(e.next+3, len(e.outbox))]
		n, failed := e.send(batch)
		e.next += len(batch)
		res := webhook.NextResult{Status: webhook.StatusActive, Delivered: batch[:n]}
		if failed {
			res.Failed, res.Reason = &batch[n], "the endpoint answered 500"
			e.next -= len(batch) - n - 1 // the workflow retries it; the rest is fetched again
		}
		return res, nil
	}, webhook.ActivityDeliverNext)
	reg(func(ctx context.Context, in webhook.DeliverInput) (webhook.DeliverResult, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		n, failed := e.send(in.Events)
		if failed {
			return webhook.DeliverResult{Delivered: n}, temporal.NewNonRetryableApplicationError("the endpoint answered 500",
				webhook.ErrEndpointFailed, nil, webhook.DeliverResult{Delivered: n})
		}
		return webhook.DeliverResult{Delivered: n}, nil
	}, webhook.ActivityDeliverEvents)
	reg(func(ctx context.Context, in webhook.DeadLetterInput) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.dead = append(e.dead, fmt.Sprintf("%s after %d: %s", in.Event.ID, in.Attempts, in.Reason))
		return nil
	}, webhook.ActivityDeadLetter)
	reg(func(ctx context.Context, in webhook.StatusInput) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.statuses = append(e.statuses, in.Status+": "+in.Reason)
		return nil
	}, webhook.ActivitySetStatus)
}

// arrive adds events to the outbox, as a commit would; open says whether the subscription stays active
// once they are delivered.
func (e *endpoint) arrive(open bool, more ...webhook.EventRef) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.outbox = append(e.outbox, more...)
	e.open = open
}

// send delivers events in order up to the first that fails.
func (e *endpoint) send(events []webhook.EventRef) (delivered int, failed bool) {
	for i, ev := range events {
		e.attempts[ev.ID] = append(e.attempts[ev.ID], e.env.Now())
		if e.failures[ev.Seq] > 0 {
			e.failures[ev.Seq]--
			return i, true
		}
		e.delivered = append(e.delivered, ev.ID)
	}
	return len(events), false
}

func events(n int) []webhook.EventRef {
	out := make([]webhook.EventRef, n)
	for i := range out {
		out[i] = webhook.EventRef{Seq: int64(i + 1), ID: fmt.Sprintf("e%d", i+1)}
	}
	return out
}

var testPolicy = webhook.Policy{Retries: []time.Duration{10 * time.Second, 30 * time.Second, time.Minute},
	PauseAfter: 24 * time.Hour, AttemptTimeout: time.Second, IdleCheck: time.Hour}

func run(t *testing.T, e *endpoint, in webhook.SubscriptionInput, callbacks ...func(env *testsuite.TestWorkflowEnvironment)) (*testsuite.TestWorkflowEnvironment, error) {
	var s testsuite.WorkflowTestSuite
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	env.RegisterWorkflowWithOptions(webhook.Deliver, workflow.RegisterOptions{Name: webhook.SubscriptionWorkflow})
	e.register(env)
	for _, cb := range callbacks {
		cb(env)
	}
	env.ExecuteWorkflow(webhook.SubscriptionWorkflow, in)
	require.True(t, env.IsWorkflowCompleted())
	return env, env.GetWorkflowError()
}

func TestDeliversEveryEventInOrder(t *testing.T) {
	e := &endpoint{outbox: events(7)}
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: testPolicy})
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"}, e.delivered)
	assert.Empty(t, e.dead)
}

// A failing event is retried on the schedule, alone, and the events after it wait: order holds.
func TestRetriesOnTheScheduleThenDeadLetters(t *testing.T) {
	e := &endpoint{outbox: events(5), failures: map[int64]int{2: 2, 4: 10}}
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: testPolicy})
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2", "e3", "e5"}, e.delivered, "e2 went through on its third attempt; e4 never")
	assert.Equal(t, []string{"e4 after 4: the endpoint answered 500"}, e.dead, "four attempts: the first and one per retry")
	// The workflow's clock shows the schedule: 10 s, then 30 s, then 1 min after each failure.
	gaps := func(id string) []time.Duration {
		var out []time.Duration
		for i := 1; i < len(e.attempts[id]); i++ {
			out = append(out, e.attempts[id][i].Sub(e.attempts[id][i-1]))
		}
		return out
	}
	assert.Equal(t, []time.Duration{10 * time.Second, 30 * time.Second}, gaps("e2"))
	assert.Equal(t, []time.Duration{10 * time.Second, 30 * time.Second, time.Minute}, gaps("e4"))
}

func TestAnEndpointFailingTooLongPausesTheSubscription(t *testing.T) {
	e := &endpoint{outbox: events(3), failures: map[int64]int{1: 1000, 2: 1000, 3: 1000}}
	policy := testPolicy
	policy.PauseAfter = 2 * time.Minute
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: policy})
	require.NoError(t, err)
	assert.Empty(t, e.delivered)
	require.Len(t, e.statuses, 1)
	assert.Contains(t, e.statuses[0], "paused: the endpoint has failed since")
	assert.Contains(t, e.statuses[0], "the endpoint answered 500")
	assert.Equal(t, []string{"e1 after 4: the endpoint answered 500"}, e.dead, "e1 was dead-lettered after 1m40s; e2 failed on until 2 min")
}

func TestTheHandshakeIsRetriedBeforeTheFirstDelivery(t *testing.T) {
	e := &endpoint{outbox: events(2), handshake: 5}
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: testPolicy})
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2"}, e.delivered)
	assert.Zero(t, e.handshake)
}

// An idle subscription waits for a wake, without looking meanwhile: new events are delivered when it comes.
func TestAnIdleSubscriptionWaitsForAWake(t *testing.T) {
	e := &endpoint{outbox: events(2), open: true}
	more := events(4)[2:]
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: testPolicy}, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			e.arrive(true, more...)
			env.SignalWorkflow(webhook.WakeSignal, nil)
		}, 10*time.Minute)
		env.RegisterDelayedCallback(func() {
			e.arrive(false)
			env.SignalWorkflow(webhook.WakeSignal, nil)
		}, 20*time.Minute)
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2", "e3", "e4"}, e.delivered)
	assert.Equal(t, 10*time.Minute, e.attempts["e3"][0].Sub(e.attempts["e1"][0]), "delivered when the wake came")
	assert.Equal(t, 3, e.polls, "one look at the start, one at each wake: none while idle")
}

// A wake that never comes (a dispatcher died between its commit and its signals) is covered by the idle
// workflow's own look after Policy.IdleCheck.
func TestAnIdleSubscriptionLooksAfterIdleCheck(t *testing.T) {
	e := &endpoint{outbox: events(1), open: true}
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: testPolicy}, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() { e.arrive(false, events(2)[1]) }, 10*time.Minute)
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2"}, e.delivered)
	assert.Equal(t, testPolicy.IdleCheck, e.attempts["e2"][0].Sub(e.attempts["e1"][0]), "found at the hourly look")
}

// A subscription found pending again is not left without a workflow: the run shakes hands anew and goes
// on delivering.
func TestAPendingSubscriptionShakesHandsAgain(t *testing.T) {
	e := &endpoint{outbox: events(4), pendingAt: 2}
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: testPolicy})
	require.NoError(t, err)
	assert.Equal(t, 2, e.handshakes)
	assert.Equal(t, []string{"e1", "e2", "e3", "e4"}, e.delivered)
}

// A run that finds its subscription paused while a wake is waiting looks once more instead of ending: the
// wake may say it is active again (a replay resumed it), and no run would be left to deliver.
func TestAWakeThatCameMeanwhileIsLookedAt(t *testing.T) {
	e := &endpoint{outbox: events(1), open: true, pausedAt: 2}
	_, err := run(t, e, webhook.SubscriptionInput{SubscriptionID: 1, Policy: testPolicy}, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			e.arrive(false, events(2)[1])
			env.SignalWorkflow(webhook.WakeSignal, nil) // the look that finds it paused
			env.SignalWorkflow(webhook.WakeSignal, nil) // the replay's, while that look runs
		}, 10*time.Minute)
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2"}, e.delivered)
	assert.Equal(t, 10*time.Minute, e.attempts["e2"][0].Sub(e.attempts["e1"][0]), "delivered at once, not at the hourly look")
}
