package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// The outbox ordering trap: with seqs from an identity column, a transaction that took seq 7 can commit
// before the one holding seq 6, and a reader that continues after 7 never sees 6. Here writers hold their
// transactions open after appending (so a later seq could commit first, if it could be taken), a third
// of them roll back, and a reader polling meanwhile must see every committed event exactly once, each
// seq one above the last, and nothing rolled back.
func TestEventSequenceIsGapFreeInCommitOrderUnderConcurrentWriters(t *testing.T) {
	pool := storetest.NewEmpty(t)
	ctx := context.Background()
	const writers, txPerWriter = 8, 25

	type mark struct{ W, T, I int }
	var (
		mu        sync.Mutex
		committed = map[mark]bool{}
		wg        sync.WaitGroup
	)
	errRollback := errors.New("rolled back on purpose")
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for tx := range txPerWriter {
				n, rollback := 1+rng.IntN(3), rng.IntN(3) == 0
				var evs []store.Event
				var marks []mark
				for i := range n {
					m := mark{w, tx, i}
					data, _ := json.Marshal(m)
					evs = append(evs, store.Event{Type: "no.postbox.test.v1", Source: "http://x/test", Subject: "/party/r1",
						Data: data, ReporteeID: 1, MessageID: fmt.Sprintf("a%d", w), Service: store.ServiceKey{Code: "1", Edition: 1}})
					marks = append(marks, m)
				}
				err := store.InTx(ctx, pool, func(tx pgx.Tx) error {
					if err := store.New(tx).AppendEvents(ctx, evs...); err != nil {
						return err
					}
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
					if rollback {
						return errRollback
					}
					return nil
				})
				if rollback {
					assert.ErrorIs(t, err, errRollback)
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				for _, m := range marks {
					committed[m] = true
				}
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	seen := map[mark]bool{}
	var last int64
	storetest.ReadWhileWriting(done, func() int {
		evs, err := store.New(pool).EventsAfter(ctx, last, 7)
		require.NoError(t, err)
		for _, e := range evs {
			require.Equal(t, last+1, e.Seq, "a reader sees the sequence without a gap")
			last = e.Seq
			var m mark
			require.NoError(t, json.Unmarshal(e.Data, &m))
			require.False(t, seen[m], "event %v seen twice", m)
			seen[m] = true
			assert.NotEmpty(t, e.ID)
			assert.Equal(t, store.ServiceKey{Code: "1", Edition: 1}, e.Service)
		}
		return len(evs)
	})
	assert.Equal(t, committed, seen, "the reader saw exactly the committed events")
	var counter, rows int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT last_seq FROM event_sequence), (SELECT count(*) FROM events)`).Scan(&counter, &rows))
	assert.Equal(t, int64(len(committed)), counter, "rollbacks leave no gap in the counter")
	assert.Equal(t, counter, rows)
	assert.Equal(t, counter, last)
}

func TestAnEventIsNeverChanged(t *testing.T) {
	pool := storetest.NewEmpty(t)
	ctx := context.Background()
	require.NoError(t, store.New(pool).AppendEvents(ctx, store.Event{Type: "no.postbox.test.v1", Source: "http://x/r", Subject: "/party/r1",
		Data: json.RawMessage(`{}`), ReporteeID: 1}))
	_, err := pool.Exec(ctx, `UPDATE events SET type = 'other'`)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "events is append-only: UPDATE is not allowed", pgErr.Message, "the one append-only trigger function refuses it")
	evs, err := store.New(pool).EventsAfter(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "no.postbox.test.v1", evs[0].Type)
	assert.Equal(t, "application/json", evs[0].DataContentType)
	assert.Empty(t, evs[0].MessageID)
	assert.Zero(t, evs[0].Service, "an event of no message has no service")
}
