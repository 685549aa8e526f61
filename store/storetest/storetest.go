// Package storetest gives tests a database of their own: migrated, seeded with the demo dataset,
// and dropped when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/importer"
)

// DefaultURL is the server the tests use unless POSTBOX_TEST_DATABASE_URL names another.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DemoDataset is the path of the repository's copy of the demo dataset.
func DemoDataset() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "deploy", "demo", "demo.json")
}

// ServerURL is the admin URL of the test server.
func ServerURL() string {
	if u := os.Getenv("POSTBOX_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// New returns a pool on a new database holding the seeded demo dataset. Databases are copied from a
// template built once per schema and dataset version, so a test pays for a file copy, not an import.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url, _ := NewDatabase(t)
	pool, err := store.Open(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// NewDatabase creates a seeded database like New and returns its URL and name, for tests that start
// their own processes on it.
func NewDatabase(t testing.TB) (url, name string) {
	t.Helper()
	url, name, drop, err := Create(context.Background())
	require.NoError(t, err, "the tests need PostgreSQL at POSTBOX_TEST_DATABASE_URL (default %s)", DefaultURL)
	t.Cleanup(drop)
	return url, name
}

// Create makes a new seeded database outside of any one test (for a TestMain); drop removes it.
func Create(ctx context.Context) (url, name string, drop func(), err error) {
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		return "", "", nil, err
	}
	defer admin.Close(ctx)
	template, err := ensureTemplate(ctx, admin)
	if err != nil {
		return "", "", nil, err
	}
	dropAbandoned(ctx, admin)
	name = testDatabaseName()
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template)); err != nil {
		return "", "", nil, err
	}
	cfg := admin.Config()
	url = fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	return url, name, func() { dropDatabase(name) }, nil
}

// NewEmpty returns a pool on a new database that has the schema but no data.
func NewEmpty(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := store.Open(ctx, NewBlank(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, store.Migrate(ctx, pool))
	return pool
}

// NewBlank creates a database with neither schema nor data, as createdb leaves it, and returns its URL.
func NewBlank(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, ServerURL())
	require.NoError(t, err, "the tests need PostgreSQL at POSTBOX_TEST_DATABASE_URL (default %s)", DefaultURL)
	defer admin.Close(ctx)
	dropAbandoned(ctx, admin)
	name := testDatabaseName()
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() { dropDatabase(name) })
	return withDatabase(t, name)
}

func dropDatabase(name string) {
	c, err := pgx.Connect(context.Background(), ServerURL())
	if err != nil {
		return
	}
	defer c.Close(context.Background())
	_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	if srv, err := ObjectServer(); err == nil {
		_ = os.RemoveAll(objectsOf(srv, name)) // its objects go with it
	}
}

func withDatabase(t testing.TB, name string) string {
	cfg, err := pgx.ParseConfig(ServerURL())
	require.NoError(t, err)
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
}

// templatePrefix starts the name of a template database, which goes on with its version and the time it was
// built: postbox_template_<version>_<unix time>.
const templatePrefix = "postbox_template_"

// ensureTemplate builds the template database for the current migrations and dataset once, under an
// advisory lock so that test packages running in parallel build it once between them.
func ensureTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	version, err := contentVersion()
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(hashtext('postbox_template'))"); err != nil {
		return "", err
	}
	defer admin.Exec(ctx, "SELECT pg_advisory_unlock(hashtext('postbox_template'))") //nolint:errcheck

	rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY datname", templatePrefix+"%")
	if err != nil {
		return "", err
	}
	templates, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	srv, err := ObjectServer()
	if err != nil {
		return "", fmt.Errorf("the tests need versitygw (make bin/versitygw): %w", err)
	}
	for _, t := range templates {
		if v, _, _ := strings.Cut(strings.TrimPrefix(t, templatePrefix), "_"); v == version && !strings.HasSuffix(t, "_building") {
			if _, err := os.Stat(objectsOf(srv, t)); err == nil {
				return t, nil
			}
			// Its objects are gone (the temporary folder was emptied): build it again.
			if _, err := admin.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", pgx.Identifier{t}.Sanitize())); err != nil {
				return "", err
			}
		}
	}
	// Templates of other versions are of no further use once they are old: checkouts of other versions
	// (worktrees, branches) that test at the same time keep theirs, rather than drop each other's.
	for _, t := range templates {
		_, built, _ := strings.Cut(strings.TrimPrefix(t, templatePrefix), "_")
		built, _, _ = strings.Cut(built, "_") // also of a build that was killed: …_building
		if at, err := strconv.ParseInt(built, 10, 64); err == nil && time.Since(time.Unix(at, 0)) > abandonAfter {
			if _, err := admin.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", pgx.Identifier{t}.Sanitize())); err != nil {
				return "", err
			}
		}
	}
	template := fmt.Sprintf("%s%s_%d", templatePrefix, version, time.Now().Unix())
	building := template + "_building"
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s", building)); err != nil {
		return "", err
	}
	cfg := admin.Config()
	url := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, building)
	if err := buildTemplate(ctx, url, template); err != nil {
		_, _ = admin.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", building))
		return "", fmt.Errorf("build template database: %w", err)
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", building, template)); err != nil {
		return "", err
	}
	return template, nil
}

// buildTemplate migrates the database at url and imports the demo dataset, with its files' objects under
// the template's final name.
func buildTemplate(ctx context.Context, url, template string) error {
	pool, err := store.Open(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool); err != nil {
		return err
	}
	fs, err := filesFor(ctx, pool, template)
	if err != nil {
		return err
	}
	return importer.FromFile(ctx, pool, fs, DemoDataset())
}

// contentVersion hashes everything a template is built from: the migrations, the importer and the dataset.
func contentVersion() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	storeDir := filepath.Join(filepath.Dir(file), "..")
	h := sha256.New()
	sources := []string{filepath.Join(storeDir, "migrations"), filepath.Join(storeDir, "importer"), filepath.Dir(DemoDataset())}
	for _, dir := range sources {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d\n", filepath.Base(path), len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Test databases carry their creation time, so that those of killed runs can be found and dropped.
const testDatabasePrefix = "postbox_test_"

func testDatabaseName() string {
	return fmt.Sprintf("%s%d_%s", testDatabasePrefix, time.Now().Unix(), randomHex(4))
}

// abandonAfter is how old a test database must be before another run drops it: far longer than any run.
const abandonAfter = 3 * time.Hour

// dropAbandoned drops the test databases that runs which were killed left behind.
func dropAbandoned(ctx context.Context, admin *pgx.Conn) {
	rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1", testDatabasePrefix+"%")
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, n := range names {
		created, _, _ := strings.Cut(strings.TrimPrefix(n, testDatabasePrefix), "_")
		if at, err := strconv.ParseInt(created, 10, 64); err == nil && time.Since(time.Unix(at, 0)) > abandonAfter {
			_, _ = admin.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", pgx.Identifier{n}.Sanitize()))
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ReadWhileWriting calls read, which returns how many events it got, until the writers close done, and then
// until a read gets none: a reader polling a feed while writes commit, and catching up with the last ones.
func ReadWhileWriting(done <-chan struct{}, read func() int) {
	for writing := true; writing; {
		select {
		case <-done:
			writing = false
		default:
		}
		read()
	}
	for read() > 0 { // the writes that committed after the last poll
	}
}
