package worker_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// A subscription made while the events worker's listener was not listening goes unannounced; when the
// listener connects again the worker sweeps, and the subscription gets its delivery workflow at once, not
// at the next SweepInterval.
func TestUnannouncedSubscriptionStartsWhenTheListenerReconnects(t *testing.T) {
	ctx := context.Background()
	url, _ := storetest.NewDatabase(t)
	pool, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			w.Header().Set(webhook.HeaderAllowedOrigin, "*")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	log := slog.New(slog.DiscardHandler)
	deliveries := webhook.NewDeliveries(pool, webhook.Options{AllowPrivate: true, PublicURL: "http://postbox.test",
		Policy: webhook.Policy{Retries: []time.Duration{time.Second}, PauseAfter: time.Hour, AttemptTimeout: 2 * time.Second, IdleCheck: time.Hour}}, log)
	ws := worker.New(dial(t, devServer.FrontendHostPort(), nsWebhooks), nil,
		worker.Options{Queues: []string{config.QueueEvents}, Deliveries: deliveries, StopTimeout: 200 * time.Millisecond})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(runCtx, ws, pool, log) }()

	// The listener's backend, once its LISTEN took effect.
	var listener int32
	require.Eventually(t, func() bool {
		return pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'
			ORDER BY backend_start DESC LIMIT 1`).Scan(&listener) == nil
	}, 30*time.Second, 20*time.Millisecond)

	// Made without its notification, as while nobody listened.
	var party, id int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(id) FROM parties`).Scan(&party))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO webhook_subscriptions (reportee_id, subject_party_id, endpoint, secret, cursor)
		VALUES ($1, $1, $2, $3, (SELECT last_seq FROM event_sequence)) RETURNING id`, party, srv.URL, webhook.NewSecret()).Scan(&id))
	t.Cleanup(func() {
		_ = webhook.NewStore(store.New(pool)).EndSubscription(ctx, id) // its workflow ends at once, and none is left in the namespace
		stop()
		<-ran
	})
	var terminated bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, listener).Scan(&terminated))
	require.True(t, terminated)

	require.Eventually(t, func() bool {
		var status string
		err := pool.QueryRow(ctx, `SELECT status FROM webhook_subscriptions WHERE id = $1`, id).Scan(&status)
		return err == nil && status == webhook.StatusActive
	}, webhook.SweepInterval/3, 50*time.Millisecond, "the subscription's workflow starts when the listener is back")
}
