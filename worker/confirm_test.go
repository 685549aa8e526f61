package worker_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// lose runs a local activity of an update outside any workflow, as when Temporal lost the update after the
// activity committed (a restart between its commit and the workflow task's completion), and decodes its
// result into out.
func lose(t *testing.T, out any, activity func(*formtask.Activities) any, arg any) {
	t.Helper()
	acts, err := formtask.NewActivities(shared.pool, storetest.FilesOf(shared.pool))
	require.NoError(t, err)
	defer acts.Schemas.Close()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	fn := activity(acts)
	env.RegisterActivity(fn)
	v, err := env.ExecuteActivity(fn, arg)
	require.NoError(t, err)
	require.NoError(t, v.Get(out))
}

// savedTask is a copy of a3101102 (batch) saved once through formtask, so its workflow runs, as the read
// model has it.
func savedTask(t *testing.T, batch int) formtask.Task {
	t.Helper()
	id := copyMessages(t, shared.pool, batch, 1)[0]
	res, err := shared.tasks.Submit(context.Background(), load(t, shared.tasks, id), writer, submission(t, shared.pool, id, false, false))
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeSaved, res.Outcome)
	return readModel(t, shared.pool, id)
}

// loseProjection stores a new revision of a task's current forms and loses the update that checked it
// and projected it with status (CheckAndProject outside the workflow); it returns the revision's id.
func loseProjection(t *testing.T, task formtask.Task, status string) int64 {
	t.Helper()
	ctx := context.Background()
	rev, err := formtask.NewStore(store.New(shared.pool)).CreateRevision(ctx, formtask.NewRevision{MessageID: task.MessageID, Kind: formtask.RevisionKindReplace,
		Forms: formsOf(t, shared.pool, task.MessageID)})
	require.NoError(t, err)
	content := formtask.ContentRef{MessageID: task.MessageID, Revision: formtask.RevisionRef{ID: rev.ID, Digest: rev.DigestHex()}}
	var out formtask.CheckAndProjectResult
	lose(t, &out, func(a *formtask.Activities) any { return a.CheckAndProject }, formtask.CheckAndProjectInput{
		Content: content, Forms: true, Attachments: true, ServiceCode: task.ServiceCode, ServiceEdition: task.ServiceEdition,
		Final: status == taskstatus.Signing, Project: &formtask.ProjectInput{Content: content, Status: status, By: writer.Name, At: time.Now()}})
	require.Empty(t, out.Findings.Errors)
	return rev.ID
}

// loseArchive loses the update that signed a task as it is (CheckAndArchive outside the workflow) and
// returns the archive's reference.
func loseArchive(t *testing.T, task formtask.Task) string {
	t.Helper()
	var out formtask.CheckAndArchiveResult
	lose(t, &out, func(a *formtask.Activities) any { return a.CheckAndArchive }, formtask.CheckAndArchiveInput{
		Archive:     formtask.ArchiveInput{Content: formtask.ContentRef{MessageID: task.MessageID}, By: signer.Name, At: time.Now()},
		ServiceCode: task.ServiceCode, ServiceEdition: task.ServiceEdition})
	require.NotEmpty(t, out.Archive.ArchiveReference)
	return out.Archive.ArchiveReference
}

// unconfirmed says whether the archive of a message is noted as unconfirmed.
func unconfirmed(t *testing.T, messageID string) bool {
	t.Helper()
	var n int
	require.NoError(t, shared.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM unconfirmed_archives WHERE message_id = $1`, messageID).Scan(&n))
	return n == 1
}

// A sign whose update Temporal lost after its CheckAndArchive committed: the archive is in PostgreSQL and
// the workflow waits in Signering. The sweep makes the workflow take the read model's state, which ends it
// archived, and confirms the archive; an archive whose workflow recorded it is confirmed without a word to
// its workflow.
func TestConfirmArchivesResyncsAWorkflowThatLostItsArchive(t *testing.T) {
	ctx := context.Background()
	c, q := devServer.Client(), formtask.NewStore(store.New(shared.pool))
	ids := copyMessages(t, shared.pool, 902, 2)
	lost, recorded := ids[0], ids[1]

	res, err := shared.tasks.Submit(ctx, load(t, shared.tasks, lost), writer, submission(t, shared.pool, lost, true, false))
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeSentToSigning, res.Outcome)
	loseArchive(t, readModel(t, shared.pool, lost))
	status, running := searchStatus(t, c, lost)
	require.True(t, running)
	require.Equal(t, taskstatus.Signing, status)

	res, err = shared.tasks.Submit(ctx, load(t, shared.tasks, recorded), signer, submission(t, shared.pool, recorded, true, true))
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeArchived, res.Outcome)
	require.True(t, unconfirmed(t, lost))
	require.True(t, unconfirmed(t, recorded))
	recordedEvents := len(history(t, c, recorded))

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	told, err := formtask.ConfirmArchives(ctx, c, q, time.Hour, log)
	require.NoError(t, err)
	assert.Zero(t, told, "archives younger than the age are left")
	assert.True(t, unconfirmed(t, lost))

	told, err = formtask.ConfirmArchives(ctx, c, q, 0, log)
	require.NoError(t, err)
	assert.Equal(t, 1, told)
	ended, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, c.GetWorkflow(ended, formtask.WorkflowID(lost), "").Get(ended, nil), "the told workflow ends")
	status, running = searchStatus(t, c, lost)
	assert.False(t, running)
	assert.Equal(t, taskstatus.Archived, status)
	assert.False(t, unconfirmed(t, lost))
	assert.False(t, unconfirmed(t, recorded))
	assert.Len(t, history(t, c, recorded), recordedEvents, "a workflow that recorded its archive hears nothing")
	assert.Contains(t, eventTypes(history(t, c, lost)), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED.String())

	told, err = formtask.ConfirmArchives(ctx, c, q, 0, log)
	require.NoError(t, err)
	assert.Zero(t, told)
}

// Updates Temporal lost after their local activities committed leave the read model ahead of the run: a
// save (a conditional change then fails the run's check of the revision), a move to the trashbin (the
// run refuses the restore) and a move to signing (the run refuses a signature without content). Each time
// formtask, as the API calls it, finds the run behind the read model, makes it take the read model's
// state (formtask.UpdateResync) and sends the change again, which succeeds. With
// POSTBOX_RECORD_HISTORY=<file> the task's history is written there (formtask/testdata).
func TestLostUpdatesAreResynced(t *testing.T) {
	ctx := context.Background()
	ft, c := shared.tasks, devServer.Client()
	task := savedTask(t, 903)
	id := task.MessageID
	project := func(status string) {
		require.Equal(t, loseProjection(t, task, status), readModel(t, shared.pool, id).Revision)
	}
	deleter := signer
	deleter.Delete = true
	var reportee int64
	require.NoError(t, shared.pool.QueryRow(ctx, `SELECT reportee_id FROM messages WHERE id = $1`, id).Scan(&reportee))
	audit := func(action string) audit.Entry {
		return audit.Entry{At: clock.Now(), ReporteeID: reportee, ActorName: deleter.Name, Action: action}
	}

	// A save, lost; then a save under If-Match, whose ETag the API checked against the read model.
	project(taskstatus.Filling)
	loaded := load(t, ft, id)
	sub := submission(t, shared.pool, id, false, false)
	sub.Expect = &formtask.Expectation{Revision: loaded.Revision, Status: loaded.Status}
	res, err := ft.Submit(ctx, loaded, writer, sub)
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeSaved, res.Outcome)

	// To the trashbin, lost; then restored.
	var placed formtask.ChangePlaceResult
	lose(t, &placed, func(a *formtask.Activities) any { return a.ChangePlace },
		formtask.ChangePlaceInput{MessageID: id, Change: formtask.UpdateTrash, Audit: audit(store.AuditDelete)})
	require.True(t, placed.Changed)
	res, err = ft.ChangePlace(ctx, load(t, ft, id), formtask.UpdateRestore, formtask.PlaceInput{Caller: deleter, Audit: audit(store.AuditRestore)})
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeRestored, res.Outcome)

	// To signing, lost; then signed as it is.
	project(taskstatus.Signing)
	res, err = ft.Submit(ctx, load(t, ft, id), signer, formtask.Submission{Complete: true, Sign: true})
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)
	status, running := searchStatus(t, c, id)
	assert.False(t, running)
	assert.Equal(t, taskstatus.Archived, status)

	events := history(t, c, id)
	resyncs := 0
	for _, e := range events {
		if e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName() == formtask.UpdateResync {
			resyncs++
		}
	}
	assert.Equal(t, 3, resyncs)
	if file := os.Getenv("POSTBOX_RECORD_HISTORY"); file != "" {
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: events})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, b, 0o644))
	}
}

// A resync that ends the run (its archive was lost too) answers the change from the archive instead of
// sending it again, which would start a new run for an archived task: a task whose move to signing and
// archive were both lost, signed by a caller who loaded it in between.
func TestAResyncThatEndsTheRunStartsNoOther(t *testing.T) {
	ctx := context.Background()
	ft, c := shared.tasks, devServer.Client()
	task := savedTask(t, 904)
	id := task.MessageID
	loseProjection(t, task, taskstatus.Signing)
	loaded := load(t, ft, id)
	require.Equal(t, taskstatus.Signing, loaded.Status)
	ref := loseArchive(t, task)

	res, err := ft.Submit(ctx, loaded, signer, formtask.Submission{Complete: true, Sign: true})
	require.NoError(t, err, "a repeated signing is answered as the archive")
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)
	assert.Equal(t, ref, res.ArchiveReference)
	runs, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = '" + formtask.WorkflowID(id) + "'"})
	require.NoError(t, err)
	require.Len(t, runs.Executions, 1, "no second run")
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, runs.Executions[0].GetStatus())
}
