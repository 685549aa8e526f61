package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/internal/s3test"
)

// The object store of the test databases: a versitygw per test process, each over the same folder, and
// one bucket, in which every database keeps its objects under its own name. So a database copied from
// the template finds the template's objects (the template's name is their prefix), and a sweep of one
// database's objects never sees another's.
const testBucket = "postbox-test"

// objectsRoot is the folder the test processes' object stores serve: it outlives them, as the template
// database does.
func objectsRoot() string { return filepath.Join(os.TempDir(), "postbox-test-objects") }

var objectServer struct {
	once sync.Once
	srv  *s3test.Server
	err  error
}

// ObjectServer is this process's server of the test object store, started on first use.
func ObjectServer() (*s3test.Server, error) {
	objectServer.once.Do(func() {
		objectServer.srv, objectServer.err = s3test.Start(context.Background(), objectsRoot())
	})
	return objectServer.srv, objectServer.err
}

// FilesConfig is the object store configuration of test database name (for processes a test starts).
func FilesConfig(tb testing.TB, name string) files.Config {
	tb.Helper()
	srv, err := ObjectServer()
	require.NoError(tb, err, "the tests need versitygw (make bin/versitygw)")
	return filesConfig(srv, name)
}

func filesConfig(srv *s3test.Server, name string) files.Config {
	cfg := srv.Config(testBucket)
	cfg.Prefix = name + "/"
	return cfg
}

// Files is the files service of the test database pool is on.
func Files(tb testing.TB, pool *pgxpool.Pool) *files.Service {
	tb.Helper()
	fs, err := FilesFor(context.Background(), pool)
	require.NoError(tb, err, "the tests need versitygw (make bin/versitygw)")
	return fs
}

// FilesFor is Files outside of a test (a TestMain).
func FilesFor(ctx context.Context, pool *pgxpool.Pool) (*files.Service, error) {
	return filesFor(ctx, pool, pool.Config().ConnConfig.Database)
}

// filesFor opens the test object store for the database name.
func filesFor(ctx context.Context, pool *pgxpool.Pool, name string) (*files.Service, error) {
	srv, err := ObjectServer()
	if err != nil {
		return nil, err
	}
	objects, err := files.Connect(filesConfig(srv, name))
	if err == nil {
		err = objects.EnsureBucket(ctx)
	}
	if err != nil {
		return nil, err
	}
	return files.New(pool, objects, slog.New(slog.DiscardHandler)), nil
}

// objectsOf is the folder of the objects database name wrote.
func objectsOf(srv *s3test.Server, name string) string {
	return filepath.Join(srv.Dir, testBucket, name)
}

// FilesOf is Files for helpers that have no testing.TB; it panics when the test object store cannot
// start (versitygw is missing).
func FilesOf(pool *pgxpool.Pool) *files.Service {
	fs, err := FilesFor(context.Background(), pool)
	if err != nil {
		panic(fmt.Sprintf("the tests need versitygw (make bin/versitygw): %v", err))
	}
	return fs
}

// Blob saves data in the test object store of pool's database and returns its SHA-256, for rows a test
// writes itself that name a content.
func Blob(tb testing.TB, pool *pgxpool.Pool, data []byte) []byte {
	tb.Helper()
	f, err := Files(tb, pool).SaveBytes(context.Background(), data, "")
	require.NoError(tb, err)
	return f.SHA256
}
