package webhook

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

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
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listenOnce(ctx, pool)
		if ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "webhook listener lost its connection; deliveries poll until it is back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

func (l *Listener) listenOnce(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	for _, ch := range []string{store.ChannelEvents, store.ChannelWebhooks} {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			return err
		}
	}
	l.wake() // anything committed before the LISTEN took effect
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// The connection may be mid-wait; do not hand it back to the pool.
			_ = conn.Conn().Close(context.Background())
			return err
		}
		l.wake()
		if n.Channel == store.ChannelWebhooks {
			if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
				select {
				case l.Subscriptions <- id:
				default:
				}
			}
		}
	}
}
