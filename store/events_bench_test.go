package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// BenchmarkAppendEvent measures what its event costs a change: a message moved to or from the trashbin
// (lock, update, audit entry: one transaction) without its event, with it but without the NOTIFY trigger
// of the webhook deliveries, and with both, by one writer and by eight at once, each on messages of its
// own, so that only the outbox is shared. It reports each variant's time per change and the ratio to the
// same change without its event. Transactions that append events commit one after another (the counter's
// row lock, and PostgreSQL's lock on the notification queue), so with several writers the cost is mostly
// the commits (WAL flushes) that no longer share a flush.
func BenchmarkAppendEvent(b *testing.B) {
	pool := storetest.New(b)
	ctx := context.Background()
	type message struct {
		ID       string
		Reportee int64
		Code     string
		Edition  int
	}
	rows, err := pool.Query(ctx, `SELECT id, reportee_id, service_code, service_edition FROM messages
		WHERE type = 'Correspondence' AND deleted_at IS NULL ORDER BY id LIMIT 64`)
	require.NoError(b, err)
	messages, err := pgx.CollectRows(rows, pgx.RowToStructByPos[message])
	require.NoError(b, err)
	require.Len(b, messages, 64)

	change := func(m message, withEvent bool) error {
		return store.InTx(ctx, pool, func(tx pgx.Tx) error {
			q := store.New(tx)
			state, err := q.LockMessage(ctx, m.Reportee, m.ID)
			if err != nil {
				return err
			}
			at, action := clock.Now(), store.AuditDelete
			if state.InTrashbin {
				action, err = store.AuditRestore, q.RestoreFromTrashbin(ctx, m.ID)
			} else {
				err = q.MoveToTrashbin(ctx, m.ID, "bench", at)
			}
			if err != nil {
				return err
			}
			e := store.MessageAuditEntry{Entry: audit.Entry{At: at, ReporteeID: m.Reportee, ActorName: "bench",
				ActorMethod: "bench", RequestID: "bench", Action: action, Summary: "bench"}, MessageID: m.ID}
			if err := q.AppendMessageAudit(ctx, e); err != nil || !withEvent {
				return err
			}
			data, _ := json.Marshal(map[string]string{"MessageId": m.ID})
			return q.AppendEvents(ctx, store.Event{Type: "no.postbox.message.deleted.v1", Source: "http://bench/" + m.ID,
				Subject: fmt.Sprintf("/party/r%d", m.Reportee), Data: data, ReporteeID: m.Reportee, MessageID: m.ID,
				Service: store.ServiceKey{Code: m.Code, Edition: m.Edition}})
		})
	}
	// Serially, then by eight writers at once (parallelism × GOMAXPROCS goroutines), each on 8 messages of its own.
	for _, parallelism := range []int{0, (8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)} {
		name := "serial"
		if parallelism > 0 {
			name = fmt.Sprintf("writers=%d", parallelism*runtime.GOMAXPROCS(0))
		}
		var withoutNs float64
		for _, variant := range []string{"none", "event-without-notify", "event"} {
			withEvent := variant != "none"
			b.Run(fmt.Sprintf("%s/%s", name, variant), func(b *testing.B) {
				trigger := "ENABLE"
				if variant == "event-without-notify" {
					trigger = "DISABLE"
				}
				_, err := pool.Exec(ctx, `ALTER TABLE events `+trigger+` TRIGGER events_notify`)
				require.NoError(b, err)
				if parallelism == 0 {
					for i := 0; b.Loop(); i++ {
						if err := change(messages[i%8], withEvent); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					var writer atomic.Int64
					b.SetParallelism(parallelism)
					b.RunParallel(func(pb *testing.PB) {
						own := messages[(writer.Add(1)-1)*8%int64(len(messages)):][:8]
						for i := 0; pb.Next(); i++ {
							if err := change(own[i%len(own)], withEvent); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ns/1e3, "µs/change")
				if !withEvent {
					withoutNs = ns
				} else if withoutNs > 0 {
					b.ReportMetric(ns/withoutNs, "ratio-to-no-event")
				}
			})
		}
	}
}
