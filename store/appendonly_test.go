package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store/storetest"
)

// The audit logs refuse every change but an insert, in the database itself, with an error naming the table,
// all through one trigger function.
func TestAuditLogsAreAppendOnly(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT DISTINCT p.proname FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
		WHERE t.tgrelid IN ('authorization_audit'::regclass, 'message_audit'::regclass) AND NOT t.tgisinternal`)
	require.NoError(t, err)
	functions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{"refuse_append_only_change"}, functions)

	inserts := map[string]string{
		"authorization_audit": `INSERT INTO authorization_audit (occurred_at, reportee_id, actor_name, actor_method, api_key_name,
			request_id, action, summary) VALUES (now(), 1, 'test', 'password', 'test', 'r1', 'DeleteRole', 'a row to change')`,
		"message_audit": `INSERT INTO message_audit (occurred_at, reportee_id, message_id, actor_name, actor_method, api_key_name,
			request_id, action, summary) VALUES (now(), 1, 'a3100115', 'test', 'password', 'test', 'r1', 'Delete', 'a row to change')`,
	}
	for table, insert := range inserts {
		_, err := pool.Exec(ctx, insert)
		require.NoError(t, err)
		var rows int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&rows))
		for op, statement := range map[string]string{
			"UPDATE":   `UPDATE ` + table + ` SET actor_name = 'someone else'`,
			"DELETE":   `DELETE FROM ` + table,
			"TRUNCATE": `TRUNCATE ` + table,
		} {
			_, err := pool.Exec(ctx, statement)
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "%s on %s: %v", op, table, err)
			assert.Equal(t, "42501", pgErr.Code)
			assert.Equal(t, table+" is append-only: "+op+" is not allowed", pgErr.Message)
		}
		var after int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&after))
		assert.Equal(t, rows, after)
	}
}
