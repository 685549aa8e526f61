package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// Two events workers' dispatchers that see the same commit take turns on the dispatch mark: together they
// signal each concerned subscription once, and the mark ends at the last event.
func TestDispatchersTakeTurns(t *testing.T) {
	const subscriptions = 20
	ctx := context.Background()
	pool := storetest.New(t)
	q := store.New(pool)
	var party int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(id) FROM parties`).Scan(&party))
	_, err := pool.Exec(ctx, `INSERT INTO webhook_subscriptions (reportee_id, subject_party_id, endpoint, secret, status, cursor)
		SELECT $1, $1, 'https://example.org/hook', 's', 'active', 0 FROM generate_series(1, $2)`, party, subscriptions)
	require.NoError(t, err)

	counted := newCalls()
	c, err := client.Dial(client.Options{HostPort: devServer.FrontendHostPort(), Namespace: nsWebhooks, Logger: quietLogger(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(counted.interceptor)}}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	for i := range 3 {
		require.NoError(t, q.AppendEvents(ctx, events.NewBuilder("http://postbox.test").MessageEvent(events.CorrespondenceRead,
			events.Message{MessageID: fmt.Sprintf("a%d", 8000001+i), ReporteeID: party, Type: "Correspondence",
				ServiceCode: "7001", ServiceEdition: 1, Status: "Lest"})))
	}

	// No workflow runs for these subscriptions: each signal is sent, answered "not found" and passed over.
	log := slog.New(slog.DiscardHandler)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { assert.NoError(t, webhook.NewDispatcher(pool, c, log).Dispatch(ctx)) })
	}
	wg.Wait()
	counted.mu.Lock()
	signals := counted.rpcs["SignalWorkflowExecution"]
	counted.mu.Unlock()
	assert.Equal(t, subscriptions, signals, "each subscription woken once for the three events, by one of the two")
	var mark, head int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT seq FROM webhook_dispatch), (SELECT last_seq FROM event_sequence)`).Scan(&mark, &head))
	assert.Equal(t, head, mark)
}
