package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

func TestIsUnavailableBySQLState(t *testing.T) {
	cases := []struct {
		code string
		want bool
	}{
		{"08006", true},  // connection_failure
		{"08001", true},  // sqlclient_unable_to_establish_sqlconnection
		{"57P01", true},  // admin_shutdown
		{"57P02", true},  // crash_shutdown
		{"57P03", true},  // cannot_connect_now (starting up)
		{"53300", true},  // too_many_connections
		{"40001", true},  // serialization_failure
		{"40P01", true},  // deadlock_detected
		{"23505", false}, // unique_violation: the statement's doing
		{"22021", false}, // character_not_in_repertoire (a NUL byte)
		{"42P01", false}, // undefined_table: a bug
		{"57014", false}, // query_canceled
	}
	for _, tc := range cases {
		err := fmt.Errorf("list messages: %w", &pgconn.PgError{Code: tc.code})
		assert.Equal(t, tc.want, store.IsUnavailable(err), tc.code)
	}
	assert.False(t, store.IsUnavailable(nil))
	assert.False(t, store.IsUnavailable(store.ErrNotFound))
	assert.False(t, store.IsUnavailable(errors.New("something else")))
	assert.False(t, store.IsUnavailable(fmt.Errorf("gone: %w", context.Canceled)), "a client that left is not an outage")
	assert.True(t, store.IsUnavailable(fmt.Errorf("acquire: %w", context.DeadlineExceeded)))
}

// The errors a real server gives when it goes away, is unreachable or refuses connections.
func TestIsUnavailableOnRealOutages(t *testing.T) {
	ctx := context.Background()

	t.Run("nothing listens", func(t *testing.T) {
		err := storetest.Unreachable(t).Ping(ctx)
		require.Error(t, err)
		assert.True(t, store.IsUnavailable(err), err.Error())
	})

	t.Run("connections terminated and refused", func(t *testing.T) {
		pool := storetest.New(t)
		conn, err := pool.Acquire(ctx) // held across the outage: its next query meets the termination
		require.NoError(t, err)
		defer conn.Release()
		storetest.TakeDown(t, pool)

		_, err = conn.Exec(ctx, "SELECT 1")
		require.Error(t, err)
		assert.True(t, store.IsUnavailable(err), err.Error())

		_, err = store.New(pool).GetMessage(ctx, 1, "a1")
		require.Error(t, err)
		assert.True(t, store.IsUnavailable(err), err.Error())
	})
}
