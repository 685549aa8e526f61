package retention_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/postbox/postbox/retention"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

func partition(table string, t time.Time) string {
	return fmt.Sprintf("%s_p%04d%02d", table, t.Year(), t.Month())
}

func exists(t *testing.T, pool *pgxpool.Pool, relation string) bool {
	t.Helper()
	var ok bool
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT to_regclass($1) IS NOT NULL`, relation).Scan(&ok))
	return ok
}

// The retention, as its schedule runs it (a testsuite workflow over the real activity and database): as of
// the run's time it makes the months ahead, drops the events older than their retention with their rows,
// and keeps the audit logs, whose retention is longer.
func TestRetention(t *testing.T) {
	pool := storetest.NewEmpty(t)
	ctx := context.Background()
	now := time.Now().UTC()
	runAt := time.Date(now.Year(), now.Month(), now.Day(), 3, 0, 0, 0, time.UTC)
	ahead := runAt.AddDate(0, store.MonthsAhead, -runAt.Day()+1)
	_, err := pool.Exec(ctx, `DROP TABLE `+partition("events", ahead)) // as if the last run was a month ago
	require.NoError(t, err)
	// An event fifteen months before the run: older than its month and the thirteen whole months before it.
	old := time.Date(now.Year(), now.Month()-15, 10, 12, 0, 0, 0, time.UTC)
	require.NoError(t, store.EnsureMonthPartitions(ctx, pool, old))
	_, err = pool.Exec(ctx, `INSERT INTO events (seq, type, source, subject, data, reportee_id, time)
		VALUES (1, 'no.postbox.test', '/test', '/party/r1', '{}', 1, $1)`, old)
	require.NoError(t, err)

	var suite testsuite.WorkflowTestSuite
	run := func() retention.Result {
		env := suite.NewTestWorkflowEnvironment()
		env.SetStartTime(runAt)
		env.RegisterActivity((&retention.Activities{Pool: pool}).KeepPartitions)
		env.ExecuteWorkflow(retention.Retention, retention.Input{EventsMonths: 13, AuditMonths: 120})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		var res retention.Result
		require.NoError(t, env.GetWorkflowResult(&res))
		return res
	}
	res := run()
	assert.Contains(t, res.Dropped, partition("events", old), "fifteen months old")
	assert.NotContains(t, res.Dropped, partition("events", old.AddDate(0, 2, 0)), "thirteen months old")
	for _, name := range res.Dropped {
		assert.Regexp(t, `^events_p\d{6}$`, name, "the audit logs keep ten years")
	}
	var events int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&events))
	assert.Zero(t, events)
	for _, table := range store.MonthPartitioned {
		assert.True(t, exists(t, pool, partition(table, ahead)), "%s has the months ahead of the run", table)
		assert.True(t, exists(t, pool, table+"_default"), table)
	}
	assert.True(t, exists(t, pool, partition("message_audit", old)))
	assert.Empty(t, run().Dropped, "a second run finds nothing to drop")
}
