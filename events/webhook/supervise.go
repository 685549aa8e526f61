package webhook

import (
	"context"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/store"
)

// SweepInterval is how often Supervise starts the workflows of all running subscriptions, beside those the
// listener names and the sweep each time the listener connects: a subscription made while Temporal was
// away gets its workflow within it.
const SweepInterval = time.Minute

// Supervise keeps a workflow running for every pending or active subscription until ctx ends. The API
// only writes subscriptions (it never talks to Temporal for them), so creating one works while Temporal is
// away; every events worker supervises, and a start of a workflow that runs is no change.
func Supervise(ctx context.Context, c client.Client, q *store.Queries, l *Listener, policy Policy, log *slog.Logger) {
	start := func(id int64) {
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: SubscriptionWorkflowID(id), TaskQueue: TaskQueue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING},
			SubscriptionWorkflow, SubscriptionInput{SubscriptionID: id, Policy: policy})
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "starting a subscription's delivery workflow failed; the next sweep tries again", "subscription", id, "err", err)
		}
	}
	startAll := func() {
		ids, err := q.RunningSubscriptions(ctx)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "listing the running subscriptions failed", "err", err)
		}
		for _, id := range ids {
			start(id)
		}
	}
	sweep := time.NewTicker(SweepInterval)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.connected: // the first time, and after each reconnection: what was made meanwhile went unannounced
			startAll()
		case <-sweep.C:
			startAll()
		case id := <-l.Subscriptions:
			if sub, err := q.GetSubscription(ctx, id); err == nil && (sub.Status == StatusPending || sub.Status == StatusActive) {
				start(id)
			}
		}
	}
}
