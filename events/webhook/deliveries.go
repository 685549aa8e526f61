package webhook

import (
	"context"
	"log/slog"
	"net/url"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Options are the delivery settings of an events worker (POSTBOX_WEBHOOK_*).
type Options struct {
	// AllowPrivate lets endpoints be http and private (local receivers only).
	AllowPrivate bool
	// PublicURL is Postbox's base URL; its host is the origin the handshake names.
	PublicURL string
	Policy    Policy
	// Sealer opens the subscriptions' secrets; nil: the demo key's (DemoSealer).
	Sealer *Sealer
	// Listen is the connection the listener LISTENs on (POSTBOX_DATABASE_LISTEN_URL); nil: one like the
	// pool's.
	Listen *pgx.ConnConfig
}

// Deliveries are what an events worker runs: the workflow and its activities, the listener, the
// dispatcher that wakes the workflows of new events' subscriptions, and the supervisor that starts them.
type Deliveries struct {
	pool       *pgxpool.Pool
	listen     *pgx.ConnConfig
	policy     Policy
	listener   *Listener
	activities *Activities
}

// NewDeliveries returns the deliveries over pool.
func NewDeliveries(pool *pgxpool.Pool, opts Options, log *slog.Logger) *Deliveries {
	origin := opts.PublicURL
	if u, err := url.Parse(opts.PublicURL); err == nil && u.Hostname() != "" {
		origin = u.Hostname()
	}
	if opts.Sealer == nil {
		opts.Sealer = DemoSealer()
	}
	q := store.New(pool)
	l := NewListener()
	sender := NewSender(Guard{AllowPrivate: opts.AllowPrivate}, opts.Policy.AttemptTimeout, origin)
	if opts.Listen == nil {
		opts.Listen = pool.Config().ConnConfig
	}
	return &Deliveries{pool: pool, listen: opts.Listen, policy: opts.Policy, listener: l,
		activities: NewActivities(NewStore(q), identity.NewRights(q, log), sender, opts.Sealer)}
}

// Register registers the workflow and the activities on an events worker.
func (d *Deliveries) Register(r worker.Registry) {
	r.RegisterWorkflowWithOptions(Deliver, workflow.RegisterOptions{Name: SubscriptionWorkflow})
	a := d.activities
	for name, fn := range map[string]any{
		ActivityHandshake:     a.WebhookHandshake,
		ActivityDeliverNext:   a.WebhookDeliverNext,
		ActivityDeliverEvents: a.WebhookDeliverEvents,
		ActivityDeadLetter:    a.WebhookDeadLetter,
		ActivitySetStatus:     a.WebhookSetStatus,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// Run listens, dispatches and supervises until ctx ends.
func (d *Deliveries) Run(ctx context.Context, c client.Client, log *slog.Logger) {
	var wg sync.WaitGroup
	wg.Go(func() { d.listener.Run(ctx, d.pool, d.listen, log) })
	wg.Go(func() { NewDispatcher(d.pool, c, log).Run(ctx, d.listener) })
	wg.Go(func() { Supervise(ctx, c, NewStore(store.New(d.pool)), d.listener, d.policy, log) })
	wg.Wait()
}
