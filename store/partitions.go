package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The tables partitioned by month (migration 036): events, and the audit logs. Rows leave them only when
// a whole month is dropped (package retention).
const (
	EventsTable             = "events"
	AuthorizationAuditTable = "authorization_audit"
	MessageAuditTable       = "message_audit"
	SubmissionLogTable      = "submission_log"
)

// MonthPartitioned lists the tables partitioned by month.
var MonthPartitioned = []string{EventsTable, AuthorizationAuditTable, MessageAuditTable, SubmissionLogTable}

// MonthsAhead is how many months past the current one keep a partition ready, so that the writes of a
// month never wait for the partition to be made, even when the retention schedule has not run for a while.
const MonthsAhead = 3

// partitionLockTimeout bounds the wait for a table's lock when a partition is made or dropped: both take
// the parent's lock for a moment, and a long wait would queue every writer behind it. A run that times
// out is retried.
const partitionLockTimeout = "5s"

// EnsureMonthPartitions makes, in each month-partitioned table, the partitions from the month of now to
// MonthsAhead months after it that are missing.
func EnsureMonthPartitions(ctx context.Context, db beginner, now time.Time) error {
	first := monthOf(now)
	last := first.AddDate(0, MonthsAhead, 0)
	for _, table := range MonthPartitioned {
		err := runTx(ctx, db, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+partitionLockTimeout+`'`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `SELECT ensure_month_partitions($1, $2, $3)`, table, first, last)
			return err
		})
		if err != nil {
			return fmt.Errorf("partitions of %s: %w", table, err)
		}
	}
	return nil
}

// DropMonthPartitionsBefore drops the month partitions of table whose month ended on or before the start
// of before's month, and returns their names.
func DropMonthPartitionsBefore(ctx context.Context, db beginner, table string, before time.Time) ([]string, error) {
	var dropped []string
	err := runTx(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+partitionLockTimeout+`'`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT drop_month_partitions_before($1, $2)`, table, monthOf(before))
		if err != nil {
			return err
		}
		dropped, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("drop partitions of %s: %w", table, err)
	}
	return dropped, nil
}

// monthOf is the first day of t's month, as a date.
func monthOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}
