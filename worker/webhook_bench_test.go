package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// arrivals is a receiver that answers every handshake (counting them) and notes when each webhook-id
// first arrived.
type arrivals struct {
	handshakes atomic.Int64
	mu         sync.Mutex
	at         map[string]time.Time
	want       int
	done       chan struct{}
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		a.handshakes.Add(1)
		w.Header().Set(webhook.HeaderAllowedOrigin, "*")
		return
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, seen := a.at[r.Header.Get(webhook.HeaderID)]; !seen {
		a.at[r.Header.Get(webhook.HeaderID)] = now
		if a.done != nil && len(a.at) == a.want {
			close(a.done)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// expect resets the receiver to wait for n more distinct deliveries.
func (a *arrivals) expect(n int) {
	a.mu.Lock()
	a.want, a.done = len(a.at)+n, make(chan struct{})
	a.mu.Unlock()
}

// arrival is when id first arrived; zero while it has not.
func (a *arrivals) arrival(id string) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.at[id]
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkWebhookDelivery measures webhook delivery end to end (commit of an event → the workflow's
// long poll wakes → a signed POST arrives at a local receiver) against a bare loop of the same signed
// POSTs to the same receiver: events delivered per second for a burst of events committed in
// transaction of 50 each, and commit-to-delivery latency, in the burst (with queueing) and paced (one event
// at a time, the idle path).
func BenchmarkWebhookDelivery(b *testing.B) {
	const burst, paced = 500, 50
	ctx := context.Background()
	pool := storetest.New(b)
	log := slog.New(slog.DiscardHandler)
	c := dial(b, devServer.FrontendHostPort(), nsBench)
	deliveries := webhook.NewDeliveries(pool, webhook.Options{AllowPrivate: true, PublicURL: "http://postbox.test",
		Policy: webhook.Policy{Retries: []time.Duration{time.Second}, PauseAfter: time.Hour, AttemptTimeout: 5 * time.Second, IdleCheck: time.Hour}}, log)
	ws := worker.New(c, nil, worker.Options{Queues: []string{config.QueueEvents}, Deliveries: deliveries, StopTimeout: time.Second})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(runCtx, ws, pool, log) }()
	defer func() { stop(); <-ran }()

	rcv := &arrivals{at: map[string]time.Time{}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	q := store.New(pool)
	var party int64
	require.NoError(b, pool.QueryRow(ctx, `SELECT min(id) FROM parties`).Scan(&party))
	secret := webhook.NewSecret()
	sub, err := webhook.NewStore(store.New(pool)).CreateSubscription(ctx, webhook.Subscription{ReporteeID: party, Subscriber: store.Subject{PartyID: party},
		EndPoint: srv.URL, Secret: sealedSecret(b, secret)}, 0)
	require.NoError(b, err)
	require.Eventually(b, func() bool {
		s, err := webhook.NewStore(store.New(pool)).GetSubscription(ctx, sub.ID)
		return err == nil && s.Status == webhook.StatusActive
	}, time.Minute, 10*time.Millisecond)

	builder := events.NewBuilder("http://postbox.test")
	// commit commits n events in one transaction and returns their ids and the time of the commit.
	commit := func(first, n int) ([]string, time.Time) {
		evs := make([]store.Event, n)
		for i := range evs {
			evs[i] = builder.MessageEvent(events.CorrespondenceRead, events.Message{MessageID: fmt.Sprintf("a%d", 8000000+first+i),
				ReporteeID: party, Type: "Correspondence", ServiceCode: "7001", ServiceEdition: 1, Status: "Lest"})
		}
		require.NoError(b, q.AppendEvents(ctx, evs...))
		committed := time.Now()
		rows, err := pool.Query(ctx, `SELECT id::text FROM events ORDER BY seq DESC LIMIT $1`, n)
		require.NoError(b, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(b, err)
		slices.Reverse(ids)
		return ids, committed
	}

	// The paced events: one at a time, each delivered before the next is committed.
	var pacedLat []time.Duration
	for i := range paced {
		rcv.expect(1)
		ids, committed := commit(i, 1)
		<-rcv.done
		pacedLat = append(pacedLat, rcv.arrival(ids[0]).Sub(committed))
	}

	// The burst: committed back to back, 50 to a transaction, delivered as they come.
	rcv.expect(burst)
	var ids []string
	var commits []time.Time
	for i := 0; i < burst; i += 50 {
		batch, committed := commit(paced+i, 50)
		for _, id := range batch {
			ids, commits = append(ids, id), append(commits, committed)
		}
	}
	select {
	case <-rcv.done:
	case <-time.After(5 * time.Minute):
		b.Fatal("the burst was not delivered")
	}
	var burstLat []time.Duration
	last := commits[0]
	for i, id := range ids {
		at := rcv.arrival(id)
		burstLat = append(burstLat, at.Sub(commits[i]))
		if at.After(last) {
			last = at
		}
	}
	deliveredRate := float64(burst) / last.Sub(commits[0]).Seconds()

	// The baseline: the same signed POSTs of the same events, in a loop, to the same receiver.
	sender := webhook.NewSender(webhook.Guard{AllowPrivate: true}, 5*time.Second, "postbox.test")
	stored, err := q.EventsAfter(ctx, 0, burst)
	require.NoError(b, err)
	var bareLat []time.Duration
	began := time.Now()
	for _, e := range stored {
		body := []byte(fmt.Sprintf(`{"specversion":"1.0","id":%q,"data":%s}`, "bare-"+e.ID, e.Data))
		t0 := time.Now()
		require.NoError(b, sender.Deliver(ctx, srv.URL, []string{secret}, "bare-"+e.ID, body))
		bareLat = append(bareLat, time.Since(t0))
	}
	bareRate := float64(len(stored)) / time.Since(began).Seconds()

	b.ReportMetric(deliveredRate, "events/s")
	b.ReportMetric(bareRate, "bare-posts/s")
	b.ReportMetric(deliveredRate/bareRate, "ratio")
	b.ReportMetric(float64(percentile(pacedLat, 0.5).Microseconds())/1000, "paced-p50-ms")
	b.ReportMetric(float64(percentile(pacedLat, 0.99).Microseconds())/1000, "paced-p99-ms")
	b.Logf("delivered %.0f events/s (burst of %d) vs a bare loop of signed POSTs %.0f/s: ratio %.3f", deliveredRate, burst, bareRate, deliveredRate/bareRate)
	b.Logf("commit-to-delivery latency: paced p50 %v p99 %v; in the burst p50 %v p99 %v; a bare POST p50 %v p99 %v (paced p50 ratio %.0fx)",
		percentile(pacedLat, 0.5).Round(time.Microsecond), percentile(pacedLat, 0.99).Round(time.Microsecond),
		percentile(burstLat, 0.5).Round(time.Millisecond), percentile(burstLat, 0.99).Round(time.Millisecond),
		percentile(bareLat, 0.5).Round(time.Microsecond), percentile(bareLat, 0.99).Round(time.Microsecond),
		float64(percentile(pacedLat, 0.5))/float64(percentile(bareLat, 0.5)))
}

// sealedSecret is secret as the API stores it: sealed with the demo key, which the deliveries open.
func sealedSecret(tb testing.TB, secret string) string {
	sealed, err := webhook.DemoSealer().Seal(secret)
	require.NoError(tb, err)
	return sealed
}
