package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// statements counts the statements a pool sends, in all and those that look at the outbox's last seq.
type statements struct {
	mu           sync.Mutex
	all, lastSeq int
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all++
	if strings.Contains(data.SQL, "event_sequence") {
		s.lastSeq++
	}
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statements) take() (all, lastSeq int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, lastSeq = s.all, s.lastSeq
	s.all, s.lastSeq = 0, 0
	return all, lastSeq
}

// Idle subscriptions cost nothing while they wait: their workflows wait for the dispatcher's signal, and
// only the listener's one fallback poll looks at the outbox, every FallbackPoll. An event wakes the
// subscriptions it concerns and no other: another party's subscriptions do not look (their cursors stay).
// And the fallback is real: an event whose notification is lost (the NOTIFY trigger off) is still
// delivered to every subscription.
func TestIdleWebhookSubscriptionsWaitForTheDispatcher(t *testing.T) {
	const subscriptions, others = 50, 5
	ctx := context.Background()
	url, _ := storetest.NewDatabase(t)
	counted := &statements{}
	pool, err := store.Open(ctx, url, store.WithTracer(counted))
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	// The workflows' own hourly look is far beyond the test: only the dispatcher can wake them.
	log := slog.New(slog.DiscardHandler)
	deliveries := webhook.NewDeliveries(pool, webhook.Options{AllowPrivate: true, PublicURL: "http://postbox.test",
		Policy: webhook.Policy{Retries: []time.Duration{time.Second}, PauseAfter: time.Hour, AttemptTimeout: 2 * time.Second, IdleCheck: time.Hour}}, log)
	ws := worker.New(dial(t, devServer.FrontendHostPort(), nsWebhooks), nil,
		worker.Options{Queues: []string{config.QueueEvents}, Deliveries: deliveries, StopTimeout: 200 * time.Millisecond})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(runCtx, ws, pool, log) }()

	var mu sync.Mutex
	got := map[string]int{} // webhook-id → deliveries
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			w.Header().Set(webhook.HeaderAllowedOrigin, "*")
			return
		}
		mu.Lock()
		got[r.Header.Get(webhook.HeaderID)]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	q := store.New(pool)
	var party, other int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(id), max(id) FROM parties`).Scan(&party, &other))
	var ids, otherIDs []int64
	for i := range subscriptions + others {
		p := party
		if i >= subscriptions {
			p = other
		}
		sub, err := webhook.NewStore(store.New(pool)).CreateSubscription(ctx, webhook.Subscription{ReporteeID: p, Subscriber: store.Subject{PartyID: p},
			EndPoint: srv.URL, Secret: sealedSecret(t, webhook.NewSecret())}, 0)
		require.NoError(t, err)
		if p == party {
			ids = append(ids, sub.ID)
		} else {
			otherIDs = append(otherIDs, sub.ID)
		}
	}
	cursors := func(ids []int64) []int64 {
		rows, err := pool.Query(ctx, `SELECT cursor FROM webhook_subscriptions WHERE id = ANY($1) ORDER BY id`, ids)
		require.NoError(t, err)
		c, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		return c
	}
	t.Cleanup(func() {
		for _, id := range append(ids, otherIDs...) { // their workflows end at once, and none is left in the namespace
			_ = webhook.NewStore(store.New(pool)).EndSubscription(ctx, id)
		}
		stop()
		<-ran
		srv.Close()
	})
	// A start that fails on a loaded machine is tried again at the supervisor's next sweep: wait past one.
	require.Eventually(t, func() bool {
		var active int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_subscriptions WHERE status = 'active'`).Scan(&active)
		return err == nil && active == subscriptions+others
	}, 2*webhook.SweepInterval+10*time.Second, 50*time.Millisecond)
	// Every workflow has looked once and waits: a FallbackPoll passes with no statement but the shared poll's.
	require.Eventually(t, func() bool {
		counted.take()
		time.Sleep(webhook.FallbackPoll)
		all, _ := counted.take()
		return all <= 1
	}, time.Minute, time.Millisecond)
	began := time.Now()
	time.Sleep(3 * webhook.FallbackPoll)
	all, lastSeq := counted.take()
	took := time.Since(began)
	t.Logf("%d idle subscriptions over %v: %d statements, %d looks at the outbox's last seq (%.1f/s)",
		subscriptions, took.Round(time.Millisecond), all, lastSeq, float64(lastSeq)/took.Seconds())
	assert.LessOrEqual(t, lastSeq, int(took/webhook.FallbackPoll)+2, "one look per FallbackPoll for all the waiting subscriptions")
	assert.LessOrEqual(t, all, int(took/webhook.FallbackPoll)+2, "waiting costs no statement but the shared poll's")
	othersBefore := cursors(otherIDs)

	// An event whose notification is lost: the trigger that NOTIFYs is off while it commits.
	_, err = pool.Exec(ctx, `ALTER TABLE events DISABLE TRIGGER events_notify`)
	require.NoError(t, err)
	e := events.NewBuilder("http://postbox.test").MessageEvent(events.CorrespondenceRead, events.Message{MessageID: "a8000001",
		ReporteeID: party, Type: "Correspondence", ServiceCode: "7001", ServiceEdition: 1, Status: "Lest"})
	require.NoError(t, q.AppendEvents(ctx, e))
	_, err = pool.Exec(ctx, `ALTER TABLE events ENABLE TRIGGER events_notify`)
	require.NoError(t, err)
	var id string
	require.NoError(t, pool.QueryRow(ctx, `SELECT id::text FROM events ORDER BY seq DESC LIMIT 1`).Scan(&id))
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[id] >= subscriptions
	}, time.Minute, 50*time.Millisecond, fmt.Sprintf("the event reaches all %d subscriptions without its NOTIFY", subscriptions))
	assert.Equal(t, othersBefore, cursors(otherIDs), "the other party's subscriptions were not woken: they did not look")

	// The other party's event wakes its subscriptions, which look and move past both events.
	e = events.NewBuilder("http://postbox.test").MessageEvent(events.CorrespondenceRead, events.Message{MessageID: "a8000002",
		ReporteeID: other, Type: "Correspondence", ServiceCode: "7001", ServiceEdition: 1, Status: "Lest"})
	require.NoError(t, q.AppendEvents(ctx, e))
	require.NoError(t, pool.QueryRow(ctx, `SELECT id::text FROM events ORDER BY seq DESC LIMIT 1`).Scan(&id))
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[id] >= others
	}, time.Minute, 50*time.Millisecond, "the other party's event reaches its subscriptions")
}
