package webhook

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/postbox/postbox/store"
)

// SweepInterval is how often Supervise starts the workflows of the running subscriptions it has not
// started yet, beside those the listener names: a subscription made while Temporal was away gets its
// workflow within it. Every FullSweepEvery sweeps, and each time the listener connects, it starts them all
// (a start of a running workflow is no change), for a workflow someone ended by hand.
const (
	SweepInterval  = time.Minute
	FullSweepEvery = 30
)

// startConcurrency bounds the starts of a sweep at once.
const startConcurrency = 8

// Supervise keeps a workflow running for every pending or active subscription until ctx ends. The API
// only writes subscriptions (it never talks to Temporal for them), so creating one works while Temporal is
// away; every events worker supervises, and a start of a workflow that runs is no change. A subscription
// the listener names (made, ended, or asked to replay) is started, or woken, at once; a sweep's start also
// wakes a workflow that runs.
func Supervise(ctx context.Context, c client.Client, st Store, l *Listener, policy Policy, log *slog.Logger) {
	options := func(id int64) client.StartWorkflowOptions {
		return client.StartWorkflowOptions{ID: SubscriptionWorkflowID(id), TaskQueue: TaskQueue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}
	}
	var mu sync.Mutex
	started := map[int64]bool{} // started by this process: an incremental sweep passes them over
	// start starts the subscription's workflow or, when it runs, wakes it: it looks once, so a workflow
	// that waits for a wake it missed, or whose subscription changed, catches up.
	start := func(id int64) {
		_, err := c.SignalWithStartWorkflow(ctx, SubscriptionWorkflowID(id), WakeSignal, nil, options(id),
			SubscriptionWorkflow, SubscriptionInput{SubscriptionID: id, Policy: policy})
		mu.Lock()
		started[id] = err == nil
		mu.Unlock()
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "starting a subscription's delivery workflow failed; the next sweep tries again", "subscription", id, "err", err)
		}
	}
	sweeps := 0
	startAll := func(full bool) {
		ids, err := st.RunningSubscriptions(ctx)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "listing the running subscriptions failed", "err", err)
		}
		mu.Lock()
		running := make(map[int64]bool, len(ids))
		for _, id := range ids {
			running[id] = true
		}
		maps.DeleteFunc(started, func(id int64, _ bool) bool { return !running[id] }) // ended or paused since
		mu.Unlock()
		var g errgroup.Group
		g.SetLimit(startConcurrency)
		for _, id := range ids {
			mu.Lock()
			skip := !full && started[id]
			mu.Unlock()
			if !skip {
				g.Go(func() error { start(id); return nil })
			}
		}
		_ = g.Wait()
	}
	sweep := time.NewTicker(SweepInterval)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.connected: // the first time, and after each reconnection: what was made meanwhile went unannounced
			startAll(true)
		case <-sweep.C:
			sweeps++
			startAll(sweeps%FullSweepEvery == 0)
		case id := <-l.Subscriptions:
			sub, err := st.GetSubscription(ctx, id)
			switch {
			case err == nil && (sub.Status == StatusPending || sub.Status == StatusActive):
				start(id)
			case err == nil || errors.Is(err, store.ErrNotFound):
				// Ended or paused: a running workflow looks once and ends now, not at its IdleCheck.
				if err := Wake(ctx, c, id); err != nil && ctx.Err() == nil {
					log.WarnContext(ctx, "waking an ended subscription's workflow failed; it ends at its next look", "subscription", id, "err", err)
				}
			}
		}
	}
}
