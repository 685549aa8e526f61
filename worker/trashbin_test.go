package worker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/retention"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// The trashbin purge is a schedule in Temporal: created once, its retention updated by the next worker
// that starts, and a run of it purges what has been in a trashbin for longer than the retention.
func TestTrashbinPurgeSchedule(t *testing.T) {
	ctx := context.Background()
	c := devServer.Client()
	const old, recent = "a3100101", "a3100122" // correspondence
	now := clock.Now()
	// Two form tasks in progress in the trashbin, put there through their workflows.
	oldTask, recentTask := trashedTask(t, now.Add(-31*24*time.Hour)), trashedTask(t, now.Add(-29*24*time.Hour))
	for id, at := range map[string]time.Time{old: now.Add(-31 * 24 * time.Hour), recent: now.Add(-29 * 24 * time.Hour)} {
		_, err := shared.pool.Exec(ctx, `UPDATE messages SET deleted_at = $2, deleted_by = 'test' WHERE id = $1`, id, at)
		require.NoError(t, err)
	}

	require.NoError(t, worker.EnsureTrashbinPurgeSchedule(ctx, c, 48*time.Hour))
	require.NoError(t, worker.EnsureTrashbinPurgeSchedule(ctx, c, 30*24*time.Hour), "a second worker updates the schedule")
	handle, desc, action := scheduled(t, c, formtask.TrashbinPurgeScheduleID)
	assert.Equal(t, formtask.TrashbinPurgeWorkflow, action.Workflow)
	assert.Equal(t, formtask.TaskQueue, action.TaskQueue)
	require.Len(t, action.Args, 1)
	var in formtask.PurgeTrashbinInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(action.Args[0].(*commonpb.Payload), &in))
	assert.Equal(t, 30*24*time.Hour, in.Retention)
	assert.Equal(t, []client.ScheduleIntervalSpec{{Every: formtask.TrashbinPurgeInterval}}, desc.Schedule.Spec.Intervals)

	require.NoError(t, handle.Trigger(ctx, client.ScheduleTriggerOptions{}))
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, shared.pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE id = $1`, old).Scan(&n))
		return n == 0
	}, 30*time.Second, 100*time.Millisecond, "the scheduled run purges the message deleted 31 days ago")
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, shared.pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE id = $1`, oldTask).Scan(&n))
		return n == 0
	}, 30*time.Second, 100*time.Millisecond, "the scheduled run purges the task in progress deleted 31 days ago, through its workflow")
	for _, id := range []string{recent, recentTask} {
		var kept int
		require.NoError(t, shared.pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE id = $1 AND deleted_at IS NOT NULL`, id).Scan(&kept))
		assert.Equal(t, 1, kept, "a message deleted 29 days ago stays in the trashbin")
	}
	for _, id := range []string{old, oldTask} {
		var action2, actor string
		require.NoError(t, shared.pool.QueryRow(ctx, `SELECT action, actor_name FROM message_audit WHERE message_id = $1 AND action <> 'Delete'`, id).Scan(&action2, &actor))
		assert.Equal(t, store.AuditPurge, action2)
		assert.Equal(t, "Postbox", actor)
	}
	// The workflow ends once the purge activity it ran has returned, a moment after the row is gone.
	require.Eventually(t, func() bool {
		_, running := searchStatus(t, c, oldTask)
		return !running
	}, 30*time.Second, 50*time.Millisecond, "the purged task's workflow ends")
	_, running := searchStatus(t, c, recentTask)
	assert.True(t, running, "the task kept in the trashbin keeps its workflow")
}

// trashedTask creates a form task of O1 and moves it to the trashbin through its workflow, as deleted at at.
func trashedTask(t *testing.T, at time.Time) string {
	t.Helper()
	ctx := context.Background()
	q := store.New(shared.pool)
	svc, err := q.GetService(ctx, "4711", 2)
	require.NoError(t, err)
	var o1 int64
	require.NoError(t, shared.pool.QueryRow(ctx, `SELECT id FROM parties WHERE organization_number = '310123455'`).Scan(&o1))
	id, _, err := shared.tasks.Create(ctx, o1, svc, signer, formtask.Submission{Forms: formsOf(t, shared.pool, "a3101102")})
	require.NoError(t, err)
	task := load(t, shared.tasks, id)
	deleter := signer
	deleter.Delete = true
	res, err := shared.tasks.ChangePlace(ctx, task, formtask.UpdateTrash, formtask.PlaceInput{Caller: deleter,
		Audit: audit.Entry{At: at, ReporteeID: o1, ActorName: deleter.Name, Action: store.AuditDelete}})
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeTrashed, res.Outcome)
	return id
}

// The object store's sweep is a schedule on the archive workers' queue, like the purge: a run of it
// deletes a blob no row refers to once it is older than the grace period, and keeps one that is younger.
func TestFilesSweepSchedule(t *testing.T) {
	ctx := context.Background()
	c := devServer.Client()
	fs := storetest.FilesOf(shared.pool)
	loose, err := fs.SaveBytes(ctx, []byte(fmt.Sprintf("ingen viser til meg %d", time.Now().UnixNano())), "")
	require.NoError(t, err)
	young, err := fs.SaveBytes(ctx, []byte(fmt.Sprintf("nettopp lastet opp %d", time.Now().UnixNano())), "")
	require.NoError(t, err)
	_, err = shared.pool.Exec(ctx, `UPDATE blobs SET touched_at = now() - interval '2 days' WHERE sha256 = $1`, loose.SHA256)
	require.NoError(t, err)

	require.NoError(t, worker.EnsureFilesSweepSchedule(ctx, c, 48*time.Hour))
	require.NoError(t, worker.EnsureFilesSweepSchedule(ctx, c, 24*time.Hour), "a second worker updates the schedule")
	handle, _, action := scheduled(t, c, files.SweepScheduleID)
	assert.Equal(t, formtask.TaskQueueArchive, action.TaskQueue)
	var in files.SweepInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(action.Args[0].(*commonpb.Payload), &in))
	assert.Equal(t, 24*time.Hour, in.Grace)

	require.NoError(t, handle.Trigger(ctx, client.ScheduleTriggerOptions{}))
	require.Eventually(t, func() bool {
		_, err := fs.Open(ctx, loose.SHA256, 0, -1)
		return errors.Is(err, files.ErrMissing)
	}, 30*time.Second, 100*time.Millisecond, "the scheduled run sweeps the blob no row refers to")
	r, err := fs.Open(ctx, young.SHA256, 0, -1)
	require.NoError(t, err, "the young one stays")
	_ = r.Close()
}

// The retention is a schedule on the archive workers' queue too: a run of it drops the months of events
// older than their retention.
func TestRetentionSchedule(t *testing.T) {
	ctx := context.Background()
	c := devServer.Client()
	old := time.Now().UTC().AddDate(0, -20, 0)
	require.NoError(t, store.EnsureMonthPartitions(ctx, shared.pool, old))
	oldMonth := fmt.Sprintf("events_p%04d%02d", old.Year(), old.Month())
	monthExists := func() bool {
		var ok bool
		require.NoError(t, shared.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, oldMonth).Scan(&ok))
		return ok
	}
	require.True(t, monthExists())

	require.NoError(t, worker.EnsureRetentionSchedule(ctx, c, retention.Input{EventsMonths: 24, AuditMonths: 120}))
	require.NoError(t, worker.EnsureRetentionSchedule(ctx, c, retention.Input{EventsMonths: 13, AuditMonths: 120}),
		"a second worker updates the schedule")
	handle, _, action := scheduled(t, c, retention.ScheduleID)
	assert.Equal(t, formtask.TaskQueueArchive, action.TaskQueue)

	require.NoError(t, handle.Trigger(ctx, client.ScheduleTriggerOptions{}))
	require.Eventually(t, func() bool { return !monthExists() }, 30*time.Second, 100*time.Millisecond,
		"the scheduled run drops the month twenty months back")
}

// scheduled is the handle of schedule id, deleted when the test ends, its description and the workflow it
// starts.
func scheduled(t *testing.T, c client.Client, id string) (client.ScheduleHandle, *client.ScheduleDescription, *client.ScheduleWorkflowAction) {
	t.Helper()
	handle := c.ScheduleClient().GetHandle(context.Background(), id)
	t.Cleanup(func() { _ = handle.Delete(context.Background()) })
	desc, err := handle.Describe(context.Background())
	require.NoError(t, err)
	action, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	return handle, desc, action
}
