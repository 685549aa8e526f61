package webhook

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/internal/every"
	"github.com/postbox/postbox/store"
)

// FallbackPoll is how often the listener looks at the outbox without a notification, so a lost
// notification delays a delivery by at most this.
const FallbackPoll = 2 * time.Second

// Listener keeps one connection LISTENing for committed events and changed subscriptions, tells the
// Dispatcher of either (Changed) and hands the changed subscriptions' ids to Supervise. Beside it, one
// fallback poll looks at the outbox every FallbackPoll and tells the Dispatcher when it moved, so a
// notification lost delays a delivery by at most FallbackPoll. Supervise sweeps every SweepInterval anyway.
type Listener struct {
	mu      sync.Mutex
	changed chan struct{}
	// Subscriptions carries the ids of subscriptions made, ended or asked to replay; when it is full an id
	// is dropped (the sweep starts its workflow).
	Subscriptions chan int64
	// connected is signalled each time the LISTEN takes effect: a subscription made before, while nobody
	// listened, went unannounced, so Supervise sweeps.
	connected chan struct{}
}

// NewListener returns a listener; Run makes it listen.
func NewListener() *Listener {
	return &Listener{changed: make(chan struct{}), Subscriptions: make(chan int64, 256), connected: make(chan struct{}, 1)}
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

// Run listens and polls until ctx ends, reconnecting after failures.
func (l *Listener) Run(ctx context.Context, pool *pgxpool.Pool, conn *pgx.ConnConfig, log *slog.Logger) {
	var wg sync.WaitGroup
	wg.Go(func() { l.poll(ctx, NewStore(store.New(pool)), log) })
	store.Listen(ctx, conn, []string{ChannelEvents, ChannelWebhooks}, store.ListenHandler{
		Connected: func() { // anything committed before the LISTEN took effect
			l.wake()
			select {
			case l.connected <- struct{}{}:
			default: // a sweep is due already
			}
		},
		Notified: func(n *pgconn.Notification) {
			l.wake()
			if n.Channel != ChannelWebhooks {
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
	wg.Wait()
}

// poll is the fallback of the notifications: each FallbackPoll it reads the outbox's mark (one statement)
// and tells the Dispatcher when it moved since the last look, also for what a notification announced
// already, so a commit costs at most one dispatch pass more (one that finds nothing after its mark).
func (l *Listener) poll(ctx context.Context, st Store, log *slog.Logger) {
	var seen OutboxMark
	failing := false
	every.Tick(ctx, FallbackPoll, func() bool {
		mark, err := st.CurrentOutboxMark(ctx)
		if err != nil {
			if !failing && ctx.Err() == nil {
				log.WarnContext(ctx, "the webhook fallback poll cannot read the outbox; it tries again every poll", "err", err)
			}
			failing = true
			return true
		}
		failing = false
		if mark != seen {
			seen = mark
			l.wake()
		}
		return true
	})
}
