package webhook

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/store"
)

// Listener keeps one connection LISTENing for committed events and changed subscriptions, wakes the long
// polls of DeliverNext on either and hands the changed subscriptions' ids to Supervise. It only shortens
// waits: a poll looks at the outbox every FallbackPoll anyway, and Supervise sweeps every SweepInterval.
type Listener struct {
	mu      sync.Mutex
	changed chan struct{}
	// Subscriptions carries the ids of subscriptions made, ended or asked to replay; when it is full an id
	// is dropped (the sweep starts its workflow).
	Subscriptions chan int64
}

// NewListener returns a listener; Run makes it listen.
func NewListener() *Listener {
	return &Listener{changed: make(chan struct{}), Subscriptions: make(chan int64, 256)}
}

// Changed is closed at the next notification: take it before looking, then wait on it.
func (l *Listener) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

func (l *Listener) wake() {
	l.mu.Lock()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// Run listens until ctx ends, reconnecting after failures.
func (l *Listener) Run(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) {
	store.Listen(ctx, pool, []string{store.ChannelEvents, store.ChannelWebhooks}, store.ListenHandler{
		Connected: l.wake, // anything committed before the LISTEN took effect
		Notified: func(n *pgconn.Notification) {
			l.wake()
			if n.Channel != store.ChannelWebhooks {
				return
			}
			if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
				select {
				case l.Subscriptions <- id:
				default:
				}
			}
		},
		Lost: func(err error) {
			log.WarnContext(ctx, "webhook listener lost its connection; deliveries poll until it is back", "err", err)
		},
	})
}
