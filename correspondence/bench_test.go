package correspondence_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// benchParties makes n organizations to send to (organization numbers from 800000001) and returns
// their numbers and party ids.
func benchParties(b *testing.B, pool *pgxpool.Pool, n int) ([]string, []int64) {
	b.Helper()
	rows, err := pool.Query(context.Background(), `INSERT INTO parties (kind, organization_number, name)
		SELECT 'Organization', (800000000 + g)::text, 'Mottaker ' || g FROM generate_series(1, $1) g
		RETURNING organization_number, id`, n)
	require.NoError(b, err)
	numbers, ids := make([]string, 0, n), make([]int64, 0, n)
	var (
		number string
		id     int64
	)
	_, err = pgx.ForEachRow(rows, []any{&number, &id}, func() error {
		numbers, ids = append(numbers, number), append(ids, id)
		return nil
	})
	require.NoError(b, err)
	return numbers, ids
}

// sendingStack is a dev server with a worker of the correspondence group and the service, over pool.
func sendingStack(b *testing.B, pool *pgxpool.Pool) (*correspondence.Service, client.Client) {
	b.Helper()
	dev, err := temporaltest.StartDevServer(context.Background(), "", "")
	require.NoError(b, err)
	b.Cleanup(func() { _ = dev.Stop() })
	eb := events.NewBuilder("http://postbox.test")
	w := worker.New(dev.Client(), &formtask.Activities{}, worker.Options{Queues: []string{config.QueueCorrespondence},
		Correspondence: &correspondence.Activities{Pool: pool, Events: eb}})
	require.NoError(b, w.Start())
	b.Cleanup(w.Stop)
	sends := correspondence.New(pool, storetest.FilesOf(pool), dev.Client(), eb, nil, nil)
	return sends, dev.Client()
}

// rssMB samples the process's resident set every 50 ms until stop is closed and returns its peak in MB.
func rssMB(stop <-chan struct{}) func() float64 {
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			peak.Store(max(peak.Load(), rssKB()))
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() float64 { <-done; return float64(peak.Load()) / 1024 }
}

func rssKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// One shipment to 100,000 recipients through the service and its workflow (one worker of the
// correspondence group, batches of correspondence.BatchSize, each message with its published event and
// its recipient's row marked), beside the bare way: the same 100,000 message rows inserted in batches of
// the same size, one transaction each, on the same pool and database. The API and the worker run in this
// one process: its peak RSS is both.
func BenchmarkShipment100k(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	pool := storetest.New(b)
	numbers, ids := benchParties(b, pool, n)
	sends, tc := sendingStack(b, pool)
	sends.MaxRecipients = n
	actor := correspondence.Actor{ServiceOwner: "FJE", ServiceOwnerName: "Fjordetaten"}
	for b.Loop() {
		// The bare insert first, its rows deleted again: the shipment then inserts into the same table with
		// the bare rows' dead index entries in it, which can only slow it down.
		bare := bareInsert(b, pool, ids)
		_, err := pool.Exec(ctx, `DELETE FROM messages WHERE id LIKE 'a9%'`)
		require.NoError(b, err)

		before := rssKB()
		stop := make(chan struct{})
		peak := rssMB(stop)
		start := time.Now()
		accepted, err := sends.Send(ctx, actor, correspondence.Send{ServiceCode: "7001", ServiceEdition: 1, Recipients: numbers,
			Subject: "Vedtak", Summary: "Kort", Body: "<p>Vedtaket ligger ved.</p>"})
		require.NoError(b, err)
		acceptedIn := time.Since(start)
		var progress correspondence.Progress
		require.NoError(b, tc.GetWorkflow(ctx, correspondence.WorkflowID(accepted.ShipmentID), "").Get(ctx, &progress))
		made := time.Since(start) - acceptedIn
		close(stop)
		rss := peak()
		require.Equal(b, n, progress.Created)

		rate, bareRate := n/made.Seconds(), n/bare.Seconds()
		b.ReportMetric(rate, "visible/s")
		b.ReportMetric(bareRate, "bare-rows/s")
		b.ReportMetric(rate/bareRate, "ratio")
		fmt.Printf("shipment of %d: accepted in %v, made visible in %v (%.0f/s); bare batched insert %v (%.0f/s); ratio %.2f; "+
			"RSS %.0f MB before, peak %.0f MB (API and worker in one process)\n",
			n, acceptedIn.Round(time.Millisecond), made.Round(time.Millisecond), rate, bare.Round(time.Millisecond), bareRate,
			rate/bareRate, float64(before)/1024, rss)
		_, err = pool.Exec(ctx, `DELETE FROM messages WHERE shipment_id = $1`, accepted.ShipmentID)
		require.NoError(b, err)
	}
}

// bareInsert inserts one message row of the same content per party, correspondence.BatchSize rows per
// transaction, and returns how long it took; the rows are ids a9… .
func bareInsert(b *testing.B, pool *pgxpool.Pool, parties []int64) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	now := clock.Now()
	for first := 0; first < len(parties); first += correspondence.BatchSize {
		batch := parties[first:min(first+correspondence.BatchSize, len(parties))]
		ids := make([]string, len(batch))
		for i := range batch {
			ids[i] = fmt.Sprintf("a9%09d", first+i)
		}
		_, err := pool.Exec(ctx, `INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status,
				created_date, last_changed, last_changed_by, message_sender, summary, body, language, is_confirmation_needed)
			SELECT r.id, r.party, 'Correspondence', '7001', 1, 'Vedtak', 'Ulest', $3, $3, 'Fjordetaten', 'Fjordetaten', 'Kort',
				'<p>Vedtaket ligger ved.</p>', 1044, false
			FROM unnest($1::text[], $2::bigint[]) AS r(id, party)`, ids, batch, now)
		require.NoError(b, err)
	}
	return time.Since(start)
}

// Ten shipments of 1,000 recipients each, all visible at the same instant a few seconds ahead: how long
// after its VisibleDateTime each message's correspondence.published event was written (the event's
// time is its transaction's start), p50/p99/max over the 10,000.
func BenchmarkPublishedAtVisibleDateTime(b *testing.B) {
	const shipments, each = 10, 1_000
	ctx := context.Background()
	pool := storetest.New(b)
	numbers, _ := benchParties(b, pool, each)
	sends, tc := sendingStack(b, pool)
	actor := correspondence.Actor{ServiceOwner: "FJE", ServiceOwnerName: "Fjordetaten"}
	for b.Loop() {
		visible := time.Now().Add(5 * time.Second).Truncate(time.Second)
		local := clock.Local(visible)
		var ids []string
		for range shipments {
			accepted, err := sends.Send(ctx, actor, correspondence.Send{ServiceCode: "7001", ServiceEdition: 1, Recipients: numbers,
				Subject: "Vedtak", Body: "<p>Vedtak</p>", VisibleAt: &local})
			require.NoError(b, err)
			ids = append(ids, accepted.ShipmentID)
		}
		for _, id := range ids {
			require.NoError(b, tc.GetWorkflow(ctx, correspondence.WorkflowID(id), "").Get(ctx, nil))
		}
		rows, err := pool.Query(ctx, `SELECT extract(epoch FROM e.time - $2::timestamptz) * 1000 FROM events e
			JOIN messages m ON m.id = e.message_id
			WHERE e.type = $1 AND m.shipment_id = ANY($3::uuid[])`, events.CorrespondencePublished, visible, ids)
		require.NoError(b, err)
		lags, err := pgx.CollectRows(rows, pgx.RowTo[float64])
		require.NoError(b, err)
		require.Len(b, lags, shipments*each)
		slices.Sort(lags)
		p := func(q float64) float64 { return lags[int(q*float64(len(lags)-1))] }
		b.ReportMetric(p(0.99), "p99-ms")
		fmt.Printf("%d messages visible at the same instant: published p50 %.0f ms, p99 %.0f ms, max %.0f ms after VisibleDateTime (target p99 ≤ 2000 ms)\n",
			len(lags), p(0.5), p(0.99), lags[len(lags)-1])
		_, err = pool.Exec(ctx, `DELETE FROM messages WHERE shipment_id = ANY($1::uuid[])`, ids)
		require.NoError(b, err)
	}
}
