package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// A listener hears what is notified on its own connection: it holds none of the pool's, which serves
// queries with all of them.
func TestListenHoldsNoConnectionOfThePool(t *testing.T) {
	pool := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	connected, notified := make(chan struct{}, 1), make(chan string, 1)
	go func() {
		defer close(done)
		store.Listen(ctx, pool.Config().ConnConfig, []string{"postbox_listen_test"}, store.ListenHandler{
			Connected: func() { connected <- struct{}{} },
			Notified:  func(n *pgconn.Notification) { notified <- n.Payload },
			Lost:      func(error) {},
		})
	}()
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not connect")
	}
	assert.Zero(t, pool.Stat().AcquiredConns(), "the listener holds none of the pool's connections")
	_, err := pool.Exec(ctx, `SELECT pg_notify('postbox_listen_test', 'hello')`)
	require.NoError(t, err)
	select {
	case payload := <-notified:
		assert.Equal(t, "hello", payload)
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
}
