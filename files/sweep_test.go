package files_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/store/storetest"
)

// The sweep, as its schedule runs it (a testsuite workflow over the real activities, store and
// database): what no row refers to goes once it is older than the grace period; what a row refers to,
// above all an archive, stays.
func TestSweep(t *testing.T) {
	pool := storetest.NewEmpty(t)
	ctx := context.Background()
	const bucket = "sweep"
	objects, err := files.Connect(server.Config(bucket))
	require.NoError(t, err)
	require.NoError(t, objects.EnsureBucket(ctx))
	svc := files.New(pool, objects, slog.New(slog.DiscardHandler))
	save := func(s string) files.File {
		f, err := svc.SaveBytes(ctx, []byte(s), "")
		require.NoError(t, err)
		return f
	}
	printed, archived, loose, recent := save("%PDF-1.7 print"), save("arkivert vedlegg"), save("ingen viser til meg"), save("nettopp lastet opp")
	_, err = pool.Exec(ctx, `INSERT INTO prints (document_digest, pdf_sha256) VALUES ('\x01', $1)`, printed.SHA256)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest)
		VALUES ('AR1', 'a1', now(), 'test', '[]', '[]', '\x01')`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO archive_blobs (archive_reference, sha256) VALUES ('AR1', $1)`, archived.SHA256)
	require.NoError(t, err)
	// Everything but the recent upload was last saved two days ago.
	_, err = pool.Exec(ctx, `UPDATE blobs SET touched_at = now() - interval '2 days' WHERE sha256 <> $1`, recent.SHA256)
	require.NoError(t, err)
	// An object no blob names: an upload cut between its put and its row.
	stray, err := os.Create(filepath.Join(server.Dir, bucket, "stray-object"))
	require.NoError(t, err)
	_, _ = stray.WriteString("cut")
	require.NoError(t, stray.Close())
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(server.Dir, bucket, "stray-object"), old, old))

	var env testsuite.WorkflowTestSuite
	run := func() files.SweepResult {
		e := env.NewTestWorkflowEnvironment()
		sweeper := &files.Sweeper{Pool: pool, Objects: objects, Log: slog.New(slog.DiscardHandler)}
		for _, fn := range sweeper.Activities() {
			e.RegisterActivity(fn)
		}
		e.ExecuteWorkflow(files.Sweep, files.SweepInput{Grace: 24 * time.Hour})
		require.True(t, e.IsWorkflowCompleted())
		require.NoError(t, e.GetWorkflowError())
		var res files.SweepResult
		require.NoError(t, e.GetWorkflowResult(&res))
		return res
	}
	assert.Equal(t, files.SweepResult{Blobs: 1, Objects: 1}, run(), "the loose blob and the stray object")
	assert.Equal(t, files.SweepResult{}, run(), "a second run finds nothing")

	_, err = svc.Open(ctx, loose.SHA256, 0, -1)
	assert.ErrorIs(t, err, files.ErrMissing)
	_, err = os.Stat(filepath.Join(server.Dir, bucket, "stray-object"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	for _, kept := range []files.File{printed, archived, recent} {
		r, err := svc.Open(ctx, kept.SHA256, 0, -1)
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		_ = r.Close()
		assert.Equal(t, kept.Size, int64(len(got)))
	}
	n, _ := objectsOnDisk(t, bucket)
	assert.Equal(t, 3, n, "the print's, the archive's and the recent upload's objects")

	// An archive's blob cannot be deleted while the archive refers to it, whatever deletes it.
	_, err = pool.Exec(ctx, `DELETE FROM blobs WHERE sha256 = $1`, archived.SHA256)
	assert.ErrorContains(t, err, "archive_blobs")
	// Saving a content again keeps its one object and shields it for another grace period.
	again := save("ingen viser til meg")
	assert.True(t, bytes.Equal(loose.SHA256, again.SHA256))
	assert.Equal(t, files.SweepResult{}, run())
}
