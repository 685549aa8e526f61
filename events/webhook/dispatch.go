package webhook

import (
	"context"
	"errors"
	"log/slog"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/store"
)

// DispatchChunk bounds the events one dispatch pass looks at, so a long outage's backlog is woken for in
// passes of bounded work and transactions of bounded length.
const DispatchChunk = 10_000

// wakeConcurrency bounds the signals a pass sends at once.
const wakeConcurrency = 32

// Dispatcher wakes the delivery workflows of the subscriptions that committed events concern. It reads the
// outbox once per commit for all subscriptions (SubscriptionsWithEvents: from the new events to their
// subscriptions, by index) and signals only those, so an idle subscription costs nothing and an event costs
// the subscriptions it concerns, not all of them. Every events worker runs one; the dispatch mark's row lock
// makes them take turns, so each event wakes its subscriptions once.
type Dispatcher struct {
	pool   *pgxpool.Pool
	client client.Client
	log    *slog.Logger
}

// NewDispatcher returns the dispatcher over pool, signalling through c.
func NewDispatcher(pool *pgxpool.Pool, c client.Client, log *slog.Logger) *Dispatcher {
	return &Dispatcher{pool: pool, client: c, log: log}
}

// Run dispatches each time the listener says the outbox may have moved, until ctx ends.
func (d *Dispatcher) Run(ctx context.Context, l *Listener) {
	failing := false
	for {
		changed := l.Changed()
		if err := d.Dispatch(ctx); err != nil && ctx.Err() == nil {
			if !failing {
				d.log.WarnContext(ctx, "waking the subscriptions of new events failed; the next change or fallback poll tries again", "err", err)
			}
			failing = true
		} else {
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// Dispatch wakes the subscriptions of every event committed after the mark, in passes of at most
// DispatchChunk events. A pass holds the mark's row lock while it signals and moves the mark only once all
// its signals went out: a pass cut short is done again (a wake more does no harm), never skipped.
func (d *Dispatcher) Dispatch(ctx context.Context) error {
	for {
		var done bool
		err := store.InTx(ctx, d.pool, func(tx pgx.Tx) error {
			st := NewStore(store.New(tx))
			mark, err := st.LockDispatchMark(ctx)
			if err != nil {
				return err
			}
			head, err := st.LastEventSeq(ctx)
			if err != nil || head <= mark {
				done = true
				return err
			}
			through := min(head, mark+DispatchChunk)
			ids, err := st.SubscriptionsWithEvents(ctx, mark, through)
			if err != nil {
				return err
			}
			if err := d.wake(ctx, ids); err != nil {
				return err
			}
			done = through == head
			return st.SetDispatchMark(ctx, through)
		})
		if err != nil || done {
			return err
		}
	}
}

// wake signals the workflows of the subscriptions ids (Wake).
func (d *Dispatcher) wake(ctx context.Context, ids []int64) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(wakeConcurrency)
	for _, id := range ids {
		g.Go(func() error { return Wake(gctx, d.client, id) })
	}
	return g.Wait()
}

// Wake signals the workflow of subscription id to look. One that does not run (paused, ended, or not
// started yet) is left alone: Supervise starts those that should run, and a new run looks before it waits.
func Wake(ctx context.Context, c client.Client, id int64) error {
	err := c.SignalWorkflow(ctx, SubscriptionWorkflowID(id), "", WakeSignal, nil)
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return nil
	}
	return err
}
