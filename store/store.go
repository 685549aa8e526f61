// Package store is the PostgreSQL plumbing every room shares: the pool, DBTX and transactions,
// migrations, the OData lists' helpers, the coalescing message reader, and the rows several rooms read (a
// message, its place and audit, organizations, service definitions, the events outbox, API keys,
// idempotency keys, rate counts). Each room's own SQL is in the room, over a Queries (its Store). The
// dataset importer is its subpackage importer.
package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
)

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// NotFound is ErrNotFound for a query that found no row, and err as it is otherwise.
func NotFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// DBTX is what queries need, so the same code runs on a pool, a connection or a transaction.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Queries holds the statements of the store; New binds them to a pool or a transaction.
type Queries struct {
	db          DBTX
	listTimeout time.Duration // see WithListTimeout
	flat        bool          // see NewTx
}

// New returns the queries over db.
func New(db DBTX) *Queries { return &Queries{db: db} }

// DB is what q runs on, for a room's own statements beside q's.
func (q *Queries) DB() DBTX { return q.db }

// NewTx returns the queries over a transaction that its caller rolls back on any error they return. The
// methods that run in a transaction of their own, which New's queries over a transaction run in a
// savepoint, run in tx as they are: a savepoint costs two statements and only serves a caller that goes on
// after an error.
func NewTx(tx pgx.Tx) *Queries { return &Queries{db: tx, flat: true} }

// Option configures the pool Open and Connect build.
type Option func(*pgxpool.Config)

// WithTracer traces the pool's queries, e.g. as OpenTelemetry spans (otelpgx).
func WithTracer(t pgx.QueryTracer) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.Tracer = t }
}

// connectTimeout bounds a connection attempt, so that requests fail with a 503 instead of waiting while
// the database host does not answer at all.
const connectTimeout = 5 * time.Second

// Open connects a pool and checks that the database answers.
func Open(ctx context.Context, url string, opts ...Option) (*pgxpool.Pool, error) {
	pool, err := Connect(ctx, url, opts...)
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := Ping(pingCtx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// Connect returns a pool that connects on first use: a service can start while the database is away and
// wait for it (Ping), and meanwhile its queries fail as unavailable (IsUnavailable).
func Connect(ctx context.Context, url string, opts ...Option) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 { // the URL's connect_timeout, when given, wins
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return pool, nil
}

// Ping says whether the database of pool answers; the error names it without credentials.
func Ping(ctx context.Context, pool *pgxpool.Pool) error {
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("connect to database %s: %w", redactURL(pool.Config()), err)
	}
	return nil
}

func redactURL(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database)
}

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies every pending schema migration, and the steps in Go that some need before them. An
// advisory lock is held while it works, so replicas starting together migrate once.
func Migrate(ctx context.Context, pool *pgxpool.Pool, steps ...Step) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	m, err := migrate.NewMigrator(ctx, conn.Conn(), "schema_version")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := m.LoadMigrations(mustSub(migrations, "migrations")); err != nil {
		return fmt.Errorf("migrate: load: %w", err)
	}
	// Tern locks each of its runs; the steps between them need the whole to be one replica's.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('postbox_migrate'))`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('postbox_migrate'))`) //nolint:errcheck
	if err := dropFailedConcurrentIndexes(ctx, conn.Conn()); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, step := range steps {
		current, err := m.GetCurrentVersion(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if current >= step.Before {
			continue
		}
		if err := m.MigrateTo(ctx, step.Before-1); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if err := step.Run(ctx, conn.Conn()); err != nil {
			return fmt.Errorf("migrate: before %d: %w", step.Before, err)
		}
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// The retention schedule keeps the months ahead too; this covers a database that has been without it.
	if err := EnsureMonthPartitions(ctx, conn.Conn(), time.Now()); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// concurrentIndexPattern finds the indexes the migrations build with CREATE INDEX CONCURRENTLY.
var concurrentIndexPattern = regexp.MustCompile(`(?i)CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+(\w+)`)

// dropFailedConcurrentIndexes drops the invalid indexes that a migration's concurrent build left when it
// failed half-way: IF NOT EXISTS would skip them for good, so the migration, run again, builds them anew.
// Only the migrations' own indexes are looked at; an index an operator is building is not one of them.
func dropFailedConcurrentIndexes(ctx context.Context, conn *pgx.Conn) error {
	var names []string
	err := fs.WalkDir(migrations, "migrations", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		sql, err := migrations.ReadFile(path)
		for _, m := range concurrentIndexPattern.FindAllStringSubmatch(string(sql), -1) {
			names = append(names, m[1])
		}
		return err
	})
	if err != nil {
		return err
	}
	rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE NOT i.indisvalid AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)`, names)
	if err != nil {
		return err
	}
	invalid, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range invalid {
		if _, err := conn.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("drop the invalid index %s: %w", name, err)
		}
	}
	return nil
}

// Step is Go code that a migration needs run before it: it runs, on the migrating connection, when the
// schema is at version Before-1.
type Step struct {
	Before int32
	Run    func(ctx context.Context, db DBTX) error
}

// TxDB is a DBTX that can begin a transaction: a pool, or a transaction (whose Begin is a savepoint).
type TxDB interface {
	DBTX
	beginner
}

// InTx runs fn in one transaction on db (a savepoint in a transaction), committed only when fn returns nil.
func InTx(ctx context.Context, db TxDB, fn func(tx pgx.Tx) error) error {
	return runTx(ctx, db, fn)
}

// beginner is what can begin a transaction: a pool, a connection, or a transaction (as a savepoint).
type beginner interface {
	Begin(context.Context) (pgx.Tx, error)
}

func runTx(ctx context.Context, b beginner, fn func(tx pgx.Tx) error) error {
	tx, err := b.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// InTx runs fn in a transaction on q's connection: a new one on a pool or connection, a savepoint inside a
// transaction, and the caller's transaction itself for NewTx's queries.
func (q *Queries) InTx(ctx context.Context, fn func(*Queries) error) error {
	if q.flat {
		return fn(q)
	}
	b, ok := q.db.(beginner)
	if !ok {
		return fmt.Errorf("store: %T cannot begin a transaction", q.db)
	}
	return runTx(ctx, b, func(tx pgx.Tx) error { return fn(New(tx)) })
}
