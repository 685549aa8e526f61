// Package retention keeps the month-partitioned tables (events and the audit logs, store.MonthPartitioned)
// from growing for good. A Temporal schedule (ScheduleID, under Schedules in the Temporal UI) starts
// Retention every Interval on the archive workers' task queue: it makes the partitions of the months ahead
// and drops each table's months that are older than its retention. Rows leave these tables no other way.
package retention

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/store"
)

const (
	// ScheduleID is the id of the schedule, WorkflowID the id of the runs it starts.
	ScheduleID = "postbox-retention"
	WorkflowID = "retention"
	// WorkflowName is the registered name of Retention.
	WorkflowName = "Retention"
	Interval     = 24 * time.Hour
)

// Input is what a run is started with: how many whole months before the current one each kind of table
// keeps, 0 for good.
type Input struct {
	EventsMonths int // POSTBOX_EVENTS_RETENTION_MONTHS
	AuditMonths  int // POSTBOX_AUDIT_RETENTION_MONTHS: the audit logs are the archives' trail
}

// monthsOf is the retention of table.
func (in Input) monthsOf(table string) int {
	if table == store.EventsTable {
		return in.EventsMonths
	}
	return in.AuditMonths
}

// KeepInput is what the activity is given: the run's time, which decides the months.
type KeepInput struct {
	Input
	Now time.Time
}

// Result names the partitions a run dropped.
type Result struct {
	Dropped []string
}

// keepActivity takes each table's lock for a moment (store.partitionLockTimeout at most): a busy table
// makes an attempt fail, and a later one finds it free.
var keepActivity = workflow.ActivityOptions{
	StartToCloseTimeout:    5 * time.Minute,
	ScheduleToCloseTimeout: time.Hour,
	RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 10 * time.Second, MaximumInterval: 5 * time.Minute},
}

// Retention keeps the partitions as of the run's start.
func Retention(ctx workflow.Context, in Input) (Result, error) {
	ctx = workflow.WithActivityOptions(ctx, keepActivity)
	var a *Activities // activities by method value, run by the workers that registered them
	var res Result
	err := workflow.ExecuteActivity(ctx, a.KeepPartitions, KeepInput{Input: in, Now: workflow.Now(ctx)}).Get(ctx, &res)
	return res, err
}

// Activities holds the retention's activity.
type Activities struct {
	Pool *pgxpool.Pool
}

// Activities lists the activities, by method value (registered under their methods' names).
func (a *Activities) Activities() []any { return []any{a.KeepPartitions} }

// KeepPartitions makes the months ahead first, so that a failure to drop never leaves writes without a
// partition, then drops each table's months older than its retention. A retried attempt finds only what is
// left to do.
func (a *Activities) KeepPartitions(ctx context.Context, in KeepInput) (Result, error) {
	var res Result
	if err := store.EnsureMonthPartitions(ctx, a.Pool, in.Now); err != nil {
		return res, err
	}
	for _, table := range store.MonthPartitioned {
		months := in.monthsOf(table)
		if months == 0 {
			continue
		}
		dropped, err := store.DropMonthPartitionsBefore(ctx, a.Pool, table, in.Now.AddDate(0, -months, 0))
		res.Dropped = append(res.Dropped, dropped...)
		if err != nil {
			return res, err
		}
		if len(dropped) > 0 {
			activity.GetLogger(ctx).Info("dropped months past their retention", "table", table, "partitions", dropped)
		}
	}
	return res, nil
}
