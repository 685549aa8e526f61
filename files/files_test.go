package files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/internal/s3test"
	"github.com/postbox/postbox/store/storetest"
)

var server *s3test.Server

func TestMain(m *testing.M) {
	var err error
	server, err = s3test.Start(context.Background(), "")
	if err != nil {
		slog.Error("the files tests need versitygw (make bin/versitygw)", "error", err)
		os.Exit(1)
	}
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// newService is the files service over a new database and a bucket of its own on the test server, named
// after the test.
func newService(t *testing.T) (svc *files.Service, pool *pgxpool.Pool, bucket string) {
	t.Helper()
	pool = storetest.NewEmpty(t)
	bucket = strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	objects, err := files.Connect(server.Config(bucket))
	require.NoError(t, err)
	require.NoError(t, objects.EnsureBucket(context.Background()))
	return files.New(pool, objects, slog.New(slog.DiscardHandler)), pool, bucket
}

// objectsOnDisk counts the objects the server keeps in a bucket (its folder's files).
func objectsOnDisk(t *testing.T, bucket string) (n int, bytes int64) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(server.Dir, bucket))
	require.NoError(t, err)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n++
			bytes += info.Size()
		}
	}
	return n, bytes
}

func TestSaveStoresEachContentOnce(t *testing.T) {
	svc, _, bucket := newService(t)
	ctx := context.Background()
	phrase := []byte("Søknad om byggetillatelse. ")
	content := bytes.Repeat(phrase, 500_000) // 14 MB: three parts of 5 MiB
	sum := sha256.Sum256(content)

	f, err := svc.Save(ctx, bytes.NewReader(content), -1, "text/plain")
	require.NoError(t, err)
	assert.Equal(t, sum[:], f.SHA256)
	assert.Equal(t, int64(len(content)), f.Size)
	assert.Equal(t, content[:files.HeadBytes], f.Head)

	again, err := svc.Save(ctx, iotest.HalfReader(bytes.NewReader(content)), -1, "text/plain")
	require.NoError(t, err)
	assert.Equal(t, f, again)
	n, size := objectsOnDisk(t, bucket)
	assert.Equal(t, 1, n, "the second upload of the same content deleted its own object")
	assert.Equal(t, int64(len(content)), size)

	r, err := svc.Open(ctx, f.SHA256, 0, -1)
	require.NoError(t, err)
	back, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.True(t, bytes.Equal(content, back))

	// A range reads only what it asks for.
	r, err = svc.Open(ctx, f.SHA256, int64(len(phrase)), 10)
	require.NoError(t, err)
	part, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "Søknad o", string(part[:9]), "ø is two bytes")
	assert.Len(t, part, 10)
}

// An upload past its limit, or whose body fails, keeps nothing: no blob, no object, no unfinished
// multipart upload.
func TestFailedSaveKeepsNothing(t *testing.T) {
	svc, pool, bucket := newService(t)
	ctx := context.Background()
	content := bytes.Repeat([]byte{7}, 12<<20)

	_, err := svc.Save(ctx, bytes.NewReader(content), 11<<20, "")
	require.ErrorIs(t, err, files.ErrTooLarge)

	cut := errors.New("the client went away")
	_, err = svc.Save(ctx, io.MultiReader(bytes.NewReader(content[:7<<20]), iotest.ErrReader(cut)), -1, "")
	require.ErrorIs(t, err, cut)
	var unavailable interface{ Unavailable() bool }
	assert.False(t, errors.As(err, &unavailable), "a body that failed is not the store's outage")
	// A connection cut short reads as io.ErrUnexpectedEOF, which is no end of the file either.
	_, err = svc.Save(ctx, io.MultiReader(bytes.NewReader(content[:1000]), iotest.ErrReader(io.ErrUnexpectedEOF)), -1, "")
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)

	var blobs int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM blobs`).Scan(&blobs))
	assert.Zero(t, blobs)
	n, _ := objectsOnDisk(t, bucket)
	assert.Zero(t, n)
	uploads, err := os.ReadDir(filepath.Join(server.Dir, bucket, ".sgwtmp", "multipart"))
	if err == nil {
		assert.Empty(t, uploads, "the multipart uploads were aborted")
	}

	// The empty content is a content too.
	f, err := svc.Save(ctx, bytes.NewReader(nil), 0, "")
	require.NoError(t, err)
	assert.Zero(t, f.Size)
	empty := sha256.Sum256(nil)
	assert.Equal(t, empty[:], f.SHA256)
}

func TestOpenAndPresign(t *testing.T) {
	svc, _, _ := newService(t)
	ctx := context.Background()
	_, err := svc.Open(ctx, make([]byte, 32), 0, -1)
	require.ErrorIs(t, err, files.ErrMissing)

	f, err := svc.SaveBytes(ctx, []byte("%PDF-1.7 kvittering"), "application/pdf")
	require.NoError(t, err)
	u, err := svc.Presign(ctx, f.SHA256, time.Minute, "kvittering.pdf", "application/pdf")
	require.NoError(t, err)
	resp, err := http.Get(u.String())
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "%PDF-1.7 kvittering", string(body))
	assert.Equal(t, `attachment; filename="kvittering.pdf"`, resp.Header.Get("Content-Disposition"))

	// Without its signature the same object is refused.
	u.RawQuery = ""
	resp2, err := http.Get(u.String())
	require.NoError(t, err)
	_ = resp2.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp2.StatusCode)
}

// A store that is down is an error the API answers 503, on writes and on reads.
func TestStoreOutageIsUnavailable(t *testing.T) {
	down, err := s3test.Start(context.Background(), "")
	require.NoError(t, err)
	pool := storetest.NewEmpty(t)
	objects, err := files.Connect(down.Config("outage"))
	require.NoError(t, err)
	require.NoError(t, objects.EnsureBucket(context.Background()))
	svc := files.New(pool, objects, slog.New(slog.DiscardHandler))
	f, err := svc.SaveBytes(context.Background(), []byte("før"), "")
	require.NoError(t, err)
	down.Stop()

	var unavailable interface{ Unavailable() bool }
	_, err = svc.SaveBytes(context.Background(), []byte("etter"), "")
	require.True(t, errors.As(err, &unavailable), "%v", err)
	_, err = svc.Open(context.Background(), f.SHA256, 0, -1)
	require.True(t, errors.As(err, &unavailable), "%v", err)
	require.True(t, errors.As(objects.Ping(context.Background()), &unavailable))
}
