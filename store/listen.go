package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ListenHandler is told what a Listen connection sees: Connected once its LISTENs have taken effect (what
// was notified before may have been missed), Notified for each notification, Lost when the connection
// failed (Listen connects again).
type ListenHandler struct {
	Connected func()
	Notified  func(*pgconn.Notification)
	Lost      func(error)
}

// Listen keeps a connection made from conn LISTENing on channels until ctx ends, connecting again after a
// failure (after 100 ms, doubling up to 10 s). The connection is its own, not one of a pool's: a listener
// holds it for good, and a pool of four would serve requests with three. conn must reach PostgreSQL
// itself or a session-mode pooler: behind a transaction-mode pooler a LISTEN is accepted and then hears
// nothing (config's POSTBOX_DATABASE_LISTEN_URL).
func Listen(ctx context.Context, conn *pgx.ConnConfig, channels []string, h ListenHandler) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := listenOnce(ctx, conn, channels, h)
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

func listenOnce(ctx context.Context, config *pgx.ConnConfig, channels []string, h ListenHandler) error {
	conn, err := pgx.ConnectConfig(ctx, config.Copy())
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
