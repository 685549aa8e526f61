package files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// postbox migrate on a database of a version that kept file bytes in PostgreSQL: the bytes move into the
// object store, each checked against its digest; a content whose bytes do not match stops the move
// before anything is dropped, and the next run goes on from where it stopped.
func TestMoveOutOfPostgres(t *testing.T) {
	ctx := context.Background()
	pool, err := store.Open(ctx, storetest.NewBlank(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	objects, err := files.Connect(server.Config("move"))
	require.NoError(t, err)
	require.NoError(t, objects.EnsureBucket(ctx))
	log := slog.New(slog.DiscardHandler)
	svc := files.New(pool, objects, log)

	shared := make([]byte, 300_000) // two chunks of the old 256 KiB
	archived := make([]byte, 600_000)
	rnd := rand.NewChaCha8([32]byte{7})
	_, _ = rnd.Read(shared)
	_, _ = rnd.Read(archived)
	sum := func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }
	pdf := []byte("%PDF-1.4 gammel utskrift")

	oldData := func(ctx context.Context, db store.DBTX) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO shared_attachment_chunks (sha256, seq, data) VALUES ($1, 0, $2), ($1, 1, $3)`, []any{sum(shared), shared[:262144], shared[262144:]}},
			{`INSERT INTO archived_blobs (sha256, data) VALUES ($1, $2)`, []any{sum(archived), archived}},
			{`INSERT INTO archived_blobs (sha256, data) VALUES ($1, 'ikke det digesten sier')`, []any{sum([]byte("noe annet"))}},
			{`INSERT INTO prints (document_digest, pdf) VALUES ('\x01', $1)`, []any{pdf}},
		} {
			if _, err := db.Exec(ctx, q.sql, q.args...); err != nil {
				return err
			}
		}
		return files.MoveOut(ctx, db, svc, log)
	}
	err = store.Migrate(ctx, pool, store.Step{Before: files.MoveOutBefore, Run: oldData})
	require.ErrorContains(t, err, "its rows say", "the damaged content stops the move")
	var version int32
	require.NoError(t, pool.QueryRow(ctx, `SELECT version FROM schema_version`).Scan(&version))
	assert.EqualValues(t, files.MoveOutBefore-1, version, "nothing is dropped")

	// Repaired (here: the damaged row removed), the next run goes on and the schema moves on.
	_, err = pool.Exec(ctx, `DELETE FROM archived_blobs WHERE sha256 = $1`, sum([]byte("noe annet")))
	require.NoError(t, err)
	require.NoError(t, store.Migrate(ctx, pool, store.Step{Before: files.MoveOutBefore, Run: func(ctx context.Context, db store.DBTX) error {
		return files.MoveOut(ctx, db, svc, log)
	}}))
	for _, want := range [][]byte{shared, archived, pdf} {
		got, err := svc.Bytes(ctx, sum(want))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got))
	}
	var printed []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT pdf_sha256 FROM prints WHERE document_digest = '\x01'`).Scan(&printed))
	assert.Equal(t, sum(pdf), printed)
	var left int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_name IN ('attachment_chunks', 'revision_attachment_chunks', 'shared_attachment_chunks', 'correspondence_upload_chunks', 'archived_blobs')`).Scan(&left))
	assert.Zero(t, left, "the tables of bytes are gone")
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'prints' AND column_name = 'pdf'`).Scan(&left))
	assert.Zero(t, left)
}
