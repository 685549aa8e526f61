package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// monthPartition is the partition of table that holds t's month.
func monthPartition(table string, t time.Time) string {
	return fmt.Sprintf("%s_p%04d%02d", table, t.Year(), t.Month())
}

func addMessageAudit(t *testing.T, pool *pgxpool.Pool, at time.Time) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `INSERT INTO message_audit (occurred_at, reportee_id, message_id, actor_name,
		actor_method, api_key_name, request_id, action, summary) VALUES ($1, 1, 'a3100115', 'test', 'password', 'test', 'r1', 'Delete', 'x')`, at)
	require.NoError(t, err)
}

// partitionOf is the partition that holds the message_audit rows at at, "" when there are none.
func partitionOf(t *testing.T, pool *pgxpool.Pool, at time.Time) string {
	t.Helper()
	var name string
	err := pool.QueryRow(context.Background(), `SELECT COALESCE(min(tableoid::regclass::text), '') FROM message_audit WHERE occurred_at = $1`, at).Scan(&name)
	require.NoError(t, err)
	return name
}

// Months are made ahead of time, rows go to their month's partition (or to the default one when their month
// has none), and a month is dropped whole once it ended before the cut-off; the default partition is never
// dropped.
func TestMonthPartitions(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	now := time.Now().UTC()
	require.NoError(t, store.EnsureMonthPartitions(ctx, pool, now))
	for _, table := range store.MonthPartitioned {
		for m := 0; m <= store.MonthsAhead; m++ {
			var exists bool
			require.NoError(t, pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, monthPartition(table, now.AddDate(0, m, -now.Day()+1))).Scan(&exists))
			assert.True(t, exists, "%s, %d months ahead", table, m)
		}
	}

	old := time.Date(now.Year()-2, now.Month(), 15, 12, 0, 0, 0, time.UTC)
	require.NoError(t, store.EnsureMonthPartitions(ctx, pool, old)) // the months of old to three after it
	farOff := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	current := time.Date(now.Year(), now.Month(), 15, 12, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{old, old.AddDate(0, 1, 0), old.AddDate(0, 2, 0), farOff, current} {
		addMessageAudit(t, pool, at)
	}
	assert.Equal(t, monthPartition("message_audit", old), partitionOf(t, pool, old))
	assert.Equal(t, "message_audit_default", partitionOf(t, pool, farOff))

	// A cut-off in the month after old's next one drops old's month and the next, not the one after.
	dropped, err := store.DropMonthPartitionsBefore(ctx, pool, store.MessageAuditTable, old.AddDate(0, 2, 0))
	require.NoError(t, err)
	assert.Equal(t, []string{monthPartition("message_audit", old), monthPartition("message_audit", old.AddDate(0, 1, 0))}, dropped)
	assert.Empty(t, partitionOf(t, pool, old))
	assert.Empty(t, partitionOf(t, pool, old.AddDate(0, 1, 0)))
	assert.Equal(t, monthPartition("message_audit", old.AddDate(0, 2, 0)), partitionOf(t, pool, old.AddDate(0, 2, 0)))
	assert.Equal(t, "message_audit_default", partitionOf(t, pool, farOff))
	assert.Equal(t, monthPartition("message_audit", current), partitionOf(t, pool, current))

	again, err := store.DropMonthPartitionsBefore(ctx, pool, store.MessageAuditTable, old.AddDate(0, 2, 0))
	require.NoError(t, err)
	assert.Empty(t, again, "a second run finds nothing left to drop")

	// Whoever calls it, the database keeps a year of the audit logs and the current and last month of the
	// events, and drops nothing from other tables.
	for table, before := range map[string]time.Time{store.MessageAuditTable: now.AddDate(0, -11, 0),
		store.EventsTable: now, "messages": old} {
		_, err := store.DropMonthPartitionsBefore(ctx, pool, table, before)
		assert.Error(t, err, table)
	}
	assert.Equal(t, monthPartition("message_audit", current), partitionOf(t, pool, current))
}

// A month's partition of an audit log is append-only like the log: its TRUNCATE trigger is not inherited,
// so each partition gets its own.
func TestMonthPartitionsOfTheAuditLogsRefuseTruncate(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	now := time.Now().UTC()
	require.NoError(t, store.EnsureMonthPartitions(ctx, pool, now))
	at := time.Date(now.Year(), now.Month(), 15, 12, 0, 0, 0, time.UTC)
	addMessageAudit(t, pool, at)
	for _, table := range []string{store.AuthorizationAuditTable, store.MessageAuditTable, store.SubmissionLogTable} {
		for _, part := range []string{monthPartition(table, now), table + "_default"} {
			_, err := pool.Exec(ctx, `TRUNCATE `+part)
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "TRUNCATE %s: %v", part, err)
			assert.Equal(t, table+" is append-only: TRUNCATE is not allowed", pgErr.Message, part)
		}
	}
	assert.Equal(t, monthPartition("message_audit", now), partitionOf(t, pool, at), "the row is still there")
}
