package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ListenHandler is told what a Listen connection sees: Connected once its LISTENs have taken effect (what
// was notified before may have been missed), Notified for each notification, Lost when the connection
// failed (Listen connects again).
type ListenHandler struct {
	Connected func()
	Notified  func(*pgconn.Notification)
	Lost      func(error)
}

// Listen keeps a connection to pool's database LISTENing on channels until ctx ends, connecting again
// after a failure (after 100 ms, doubling up to 10 s). The connection is its own, not one of pool's: a
// listener holds it for good, and a pool of four would serve requests with three.
func Listen(ctx context.Context, pool *pgxpool.Pool, channels []string, h ListenHandler) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := listenOnce(ctx, pool, channels, h)
		if ctx.Err() != nil {
			return
		}
		h.Lost(err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

func listenOnce(ctx context.Context, pool *pgxpool.Pool, channels []string, h ListenHandler) error {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			return err
		}
	}
	h.Connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		h.Notified(n)
	}
}
