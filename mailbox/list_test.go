package mailbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// connOfOwn returns a database of the test's own, O1's party id there and a connection of its own to it.
func connOfOwn(t *testing.T) (*pgxpool.Pool, int64, *pgx.Conn) {
	pool := storetest.New(t)
	conn, err := pgx.Connect(context.Background(), pool.Config().ConnString())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return pool, storetest.PartyID(t, pool, o1), conn
}

// TestListTimeout: a list statement PostgreSQL cuts off at the list timeout is a *TooBroadError, the
// timeout ends with the statement, and a request that ends first is not mistaken for one. A lock held on
// messages makes the list wait however fast the machine is.
func TestListTimeout(t *testing.T) {
	ctx := context.Background()
	pool, org, conn := connOfOwn(t)

	lq := store.ListQuery{Page: store.Page{Limit: 50}}
	bounded := store.New(conn).WithListTimeout(200 * time.Millisecond)
	// Once first: statements are prepared (and the lock taken to parse them) before the batch runs.
	_, _, err := mailbox.NewLists(bounded).Messages(ctx, org, store.Visibility{All: true}, lq, search(t, "skatt"))
	require.NoError(t, err)

	lock, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer lock.Rollback(ctx) //nolint:errcheck
	_, err = lock.Exec(ctx, "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	_, _, err = mailbox.NewLists(bounded).Messages(ctx, org, store.Visibility{All: true}, lq, search(t, "skatt"))
	var broad *store.TooBroadError
	require.ErrorAs(t, err, &broad)
	assert.Equal(t, 200*time.Millisecond, broad.Timeout)
	assert.EqualError(t, err, "the list took longer than 200ms to find")

	var setting string
	require.NoError(t, conn.QueryRow(ctx, "SHOW statement_timeout").Scan(&setting))
	assert.Equal(t, "0", setting, "the timeout is local to the list statement")

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, _, err = mailbox.NewLists(store.New(pool).WithListTimeout(time.Minute)).Messages(short, org, store.Visibility{All: true}, lq, mailbox.Search{})
	require.Error(t, err)
	assert.NotErrorAs(t, err, &broad, "the request ended, the query was not too broad")

	require.NoError(t, lock.Rollback(ctx))
	page, _, err := mailbox.NewLists(store.New(conn).WithListTimeout(10*time.Second)).Messages(ctx, org, store.Visibility{All: true}, lq, mailbox.Search{})
	require.NoError(t, err)
	assert.Len(t, page, 50)
}

// List statements are planned for their parameters however often they run: a connection that would use
// the cached statement's generic plan (as PostgreSQL may choose after five runs) still gets custom plans,
// with a list timeout and without.
func TestListStatementsGetCustomPlans(t *testing.T) {
	ctx := context.Background()
	_, org, conn := connOfOwn(t)
	_, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)

	lq := store.ListQuery{Page: store.Page{Limit: 50}}
	words := search(t, "skatt")
	for _, q := range []*store.Queries{store.New(conn), store.New(conn).WithListTimeout(time.Minute)} {
		for range 7 {
			_, _, err := mailbox.NewLists(q).Messages(ctx, org, store.Visibility{All: true}, lq, words)
			require.NoError(t, err)
		}
	}
	resolved, err := mailbox.ResolveSearch(ctx, conn, words)
	require.NoError(t, err)
	sql, _, err := mailbox.ListMessagesSQL(org, store.Visibility{All: true}, lq, resolved)
	require.NoError(t, err)
	var generic, custom int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, sql).
		Scan(&generic, &custom))
	assert.Zero(t, generic)
	assert.Equal(t, int64(14), custom)
}
