package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// BenchmarkWebhookFanOut measures delivery at many subscriptions: N subscriptions, each of its own party,
// all handshaken and idle, then a steady stream of events (one a commit, 20 a second for 15 s), each for one
// of the parties, spread over all of them. It reports the commit-to-delivery lag (p50, p99), the CPU per
// delivered event (this process with the events worker, the Temporal dev server and PostgreSQL) and the CPU
// the idle subscriptions cost per second before the stream. The baseline is the same stream with N = 10.
// N: POSTBOX_BENCH_SUBSCRIPTIONS (comma-separated; default 10,10000).
func BenchmarkWebhookFanOut(b *testing.B) {
	counts := []int{10, 10000}
	if v := os.Getenv("POSTBOX_BENCH_SUBSCRIPTIONS"); v != "" {
		counts = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(b, err)
			counts = append(counts, n)
		}
	}
	for _, n := range counts {
		b.Run(fmt.Sprintf("subscriptions=%d", n), func(b *testing.B) {
			for range b.N {
				fanOut(b, n)
			}
		})
	}
}

func fanOut(b *testing.B, n int) {
	const rate, seconds = 20, 15
	b.StopTimer()
	ctx := context.Background()
	url, _ := storetest.NewDatabase(b)
	counted := &statements{}
	pool, err := store.Open(ctx, url, store.WithTracer(counted))
	require.NoError(b, err)
	b.Cleanup(pool.Close)
	rcv := &arrivals{at: map[string]time.Time{}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()

	// n parties, each with one active subscription; ids far apart per n, so the workflow ids of one
	// count's run never meet another's on the shared dev server.
	rows, err := pool.Query(ctx, `INSERT INTO parties (kind, organization_number, name)
		SELECT 'Organization', 'fanout-'||g, 'Fan-out '||g FROM generate_series(1, $1) g RETURNING id`, n)
	require.NoError(b, err)
	var parties []int64
	for rows.Next() {
		var id int64
		require.NoError(b, rows.Scan(&id))
		parties = append(parties, id)
	}
	require.NoError(b, rows.Err())
	_, err = pool.Exec(ctx, `INSERT INTO webhook_subscriptions (id, reportee_id, subject_party_id, endpoint, secret, status, cursor)
		OVERRIDING SYSTEM VALUE
		SELECT $1 + ordinality, p, p, $2, $3, 'active', (SELECT last_seq FROM event_sequence)
		FROM unnest($4::bigint[]) WITH ORDINALITY p`, int64(n)*100_000_000+time.Now().Unix()%1000*100_000, srv.URL,
		sealedSecret(b, webhook.NewSecret()), parties)
	require.NoError(b, err)

	log := slog.New(slog.DiscardHandler)
	c := dial(b, devServer.FrontendHostPort(), nsBench)
	deliveries := webhook.NewDeliveries(pool, webhook.Options{AllowPrivate: true, PublicURL: "http://postbox.test",
		Policy: webhook.Policy{Retries: []time.Duration{time.Second}, PauseAfter: time.Hour, AttemptTimeout: 5 * time.Second,
			IdleCheck: webhook.IdleCheck}}, log)
	ws := worker.New(c, nil, worker.Options{Queues: []string{config.QueueEvents}, Deliveries: deliveries,
		StopTimeout: time.Second, MaxConcurrentActivities: 64})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(runCtx, ws, pool, log) }()
	defer func() { stop(); <-ran }()

	began := time.Now()
	require.Eventually(b, func() bool { return rcv.handshakes.Load() >= int64(n) }, 10*time.Minute, 100*time.Millisecond,
		"every subscription's handshake")
	ready := time.Since(began)
	// Every workflow has made its first look and waits: a FallbackPoll passes with no statement but the
	// listener's own poll.
	require.Eventually(b, func() bool {
		counted.take()
		time.Sleep(webhook.FallbackPoll)
		all, _ := counted.take()
		return all <= 2
	}, 10*time.Minute, time.Millisecond, "the workflows settle into waiting")
	idleFrom := cpuNow(b, pool)
	const idle = 10 * time.Second
	time.Sleep(idle)
	idleCPU := cpuNow(b, pool).since(idleFrom)

	q := store.New(pool)
	builder := events.NewBuilder("http://postbox.test")
	type sent struct {
		id string
		at time.Time
	}
	var stream []sent
	cpuFrom := cpuNow(b, pool)
	b.StartTimer()
	tick := time.NewTicker(time.Second / rate)
	for i := range rate * seconds {
		<-tick.C
		party := parties[(i*7919)%len(parties)]
		e := builder.MessageEvent(events.CorrespondenceRead, events.Message{MessageID: fmt.Sprintf("a%d", 7000000+i),
			ReporteeID: party, Type: "Correspondence", ServiceCode: "7001", ServiceEdition: 1, Status: "Lest"})
		require.NoError(b, q.AppendEvents(ctx, e))
		at := time.Now()
		var id string
		require.NoError(b, pool.QueryRow(ctx, `SELECT id::text FROM events ORDER BY seq DESC LIMIT 1`).Scan(&id))
		stream = append(stream, sent{id, at})
	}
	tick.Stop()
	var lags []time.Duration
	require.Eventually(b, func() bool {
		lags = lags[:0]
		for _, s := range stream {
			at := rcv.arrival(s.id)
			if at.IsZero() {
				return false
			}
			lags = append(lags, at.Sub(s.at))
		}
		return true
	}, 10*time.Minute, 50*time.Millisecond, "every event delivered")
	b.StopTimer()
	cpu := cpuNow(b, pool).since(cpuFrom)

	perEvent, process, dev, pg := cpu.perTask(float64(len(stream)))
	idlePerSecond, _, _, _ := idleCPU.perTask(idle.Seconds())
	b.ReportMetric(float64(percentile(lags, 0.5).Microseconds())/1000, "lag-p50-ms")
	b.ReportMetric(float64(percentile(lags, 0.99).Microseconds())/1000, "lag-p99-ms")
	b.ReportMetric(perEvent, "cpu-ms/event")
	b.ReportMetric(idlePerSecond, "idle-cpu-ms/s")
	b.Logf("%d subscriptions (all handshaken in %v): %d events at %d/s, lag p50 %v p99 %v; CPU per delivered event %.1f ms (worker %.1f, dev server %.1f, PostgreSQL %.1f); idle: %.0f ms of CPU a second",
		n, ready.Round(time.Second), len(stream), rate, percentile(lags, 0.5).Round(time.Millisecond), percentile(lags, 0.99).Round(time.Millisecond),
		perEvent, process, dev, pg, idlePerSecond)
	b.Logf("baseline: the same stream at 10 subscriptions (subscriptions=10)")
}
