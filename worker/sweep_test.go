package worker_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// A running worker sweeps revisions no workflow took within StaleRevisionAge, from its start on: an old
// orphan goes; a fresh one (its Update may be under way) and a promoted one (the record of the content it
// wrote) stay.
func TestWorkerSweepsStaleRevisions(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	q := formtask.NewStore(store.New(pool))
	revision := func(messageID string) formtask.Revision {
		rev, err := q.CreateRevision(ctx, formtask.NewRevision{MessageID: messageID, Kind: formtask.RevisionKindReplace, Forms: formsOf(t, pool, messageID)})
		require.NoError(t, err)
		return rev
	}
	age := func(r formtask.Revision, by time.Duration) {
		_, err := pool.Exec(ctx, `UPDATE form_revisions SET created_at = now() - $2::interval WHERE id = $1`, r.ID, by)
		require.NoError(t, err)
	}
	exists := func(r formtask.Revision) bool {
		_, err := q.GetRevision(ctx, r.ID)
		if err != nil {
			require.ErrorIs(t, err, store.ErrNotFound)
		}
		return err == nil
	}
	orphan, fresh, promoted := revision("a3101102"), revision("a3101109"), revision("a3101151")
	age(orphan, worker.StaleRevisionAge+time.Minute)
	_, _, err := q.PromoteRevision(ctx, promoted.ID)
	require.NoError(t, err)
	age(promoted, worker.StaleRevisionAge+time.Minute)

	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(runCtx, &worker.Workers{}, pool, slog.New(slog.DiscardHandler)) }()
	require.Eventually(t, func() bool { return !exists(orphan) }, 30*time.Second, 20*time.Millisecond,
		"the old orphan is swept when the worker starts")
	stop()
	require.NoError(t, <-ran)
	assert.True(t, exists(fresh), "a fresh revision stays")
	assert.True(t, exists(promoted), "a promoted revision stays")
}

// A running worker also deletes the answers kept for Idempotency-Keys once they expire; live ones stay.
func TestWorkerSweepsExpiredIdempotentAnswers(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	q := store.New(pool)
	claim := func(key string) {
		_, _, ok, err := q.ClaimIdempotencyKey(ctx, store.IdempotencyScope{APIKey: []byte("k"), Caller: "c", Key: key}, time.Hour, time.Hour)
		require.NoError(t, err)
		require.True(t, ok)
	}
	claim("expired")
	claim("live")
	_, err := pool.Exec(ctx, `UPDATE idempotent_requests SET expires_at = now() - interval '1 minute' WHERE key = 'expired'`)
	require.NoError(t, err)
	keys := func() (out []string) {
		rows, err := pool.Query(ctx, `SELECT key FROM idempotent_requests ORDER BY key`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var k string
			require.NoError(t, rows.Scan(&k))
			out = append(out, k)
		}
		return out
	}

	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(runCtx, &worker.Workers{}, pool, slog.New(slog.DiscardHandler)) }()
	require.Eventually(t, func() bool { return len(keys()) == 1 }, 30*time.Second, 20*time.Millisecond)
	stop()
	require.NoError(t, <-ran)
	assert.Equal(t, []string{"live"}, keys())
}
