package storetest

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// TakeDown makes the database of pool unavailable as a failing server would: its connections are
// terminated (their next use fails with 57P01) and new ones are refused. Connections are allowed
// again when the test ends.
func TakeDown(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	name := pgx.Identifier{pool.Config().ConnConfig.Database}.Sanitize()
	admin, err := pgx.Connect(ctx, ServerURL())
	require.NoError(t, err)
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS false", name))
	require.NoError(t, err)
	t.Cleanup(func() {
		if c, err := pgx.Connect(ctx, ServerURL()); err == nil {
			_, _ = c.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS true", name))
			_ = c.Close(ctx)
		}
	})
	_, err = admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
		pool.Config().ConnConfig.Database)
	require.NoError(t, err)
}

// UnusedAddr returns a local address where nothing listens, to stand for a server that is down.
func UnusedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// Unreachable returns a pool on a port where nothing listens: every query fails to connect.
func Unreachable(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@"+UnusedAddr(t)+"/nothing?sslmode=disable")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}
