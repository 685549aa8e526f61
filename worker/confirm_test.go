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
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/postbox/postbox/activities"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/worker"
	"github.com/postbox/postbox/workflows"
)

// unconfirmed says whether the archive of a message is noted as unconfirmed.
func unconfirmed(t *testing.T, messageID string) bool {
	t.Helper()
	var n int
	require.NoError(t, shared.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM unconfirmed_archives WHERE message_id = $1`, messageID).Scan(&n))
	return n == 1
}

// A sign whose update Temporal lost after its CheckAndArchive committed (a restart between the local
// activity's commit and the workflow task's completion): the archive is in PostgreSQL and the workflow
// waits in Signering. The sweep tells the workflow, which ends archived, and confirms the archive; an
// archive whose workflow recorded it is confirmed without a word to its workflow. With
// POSTBOX_RECORD_HISTORY=<file> the told workflow's history is written there (workflows/testdata).
func TestConfirmArchivesTellsAWorkflowItsLostArchive(t *testing.T) {
	ctx := context.Background()
	c, q := devServer.Client(), store.New(shared.pool)
	ids := copyMessages(t, shared.pool, 902, 2)
	lost, recorded := ids[0], ids[1]

	res, err := shared.tasks.Submit(ctx, load(t, shared.tasks, lost), writer, submission(t, shared.pool, lost, true, false))
	require.NoError(t, err)
	require.Equal(t, workflows.OutcomeSentToSigning, res.Outcome)
	// The lost update's local activity, run outside any workflow.
	acts, err := activities.New(shared.pool)
	require.NoError(t, err)
	defer acts.Schemas.Close()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(acts.CheckAndArchive)
	task := readModel(t, shared.pool, lost)
	v, err := env.ExecuteActivity(acts.CheckAndArchive, workflows.CheckAndArchiveInput{
		Archive:     workflows.ArchiveInput{Content: workflows.ContentRef{MessageID: lost}, By: signer.Name, At: time.Now()},
		ServiceCode: task.ServiceCode, ServiceEdition: task.ServiceEdition})
	require.NoError(t, err)
	var archived workflows.CheckAndArchiveResult
	require.NoError(t, v.Get(&archived))
	require.NotEmpty(t, archived.Archive.ArchiveReference)
	status, running := searchStatus(t, c, lost)
	require.True(t, running)
	require.Equal(t, store.StatusSigning, status)

	res, err = shared.tasks.Submit(ctx, load(t, shared.tasks, recorded), signer, submission(t, shared.pool, recorded, true, true))
	require.NoError(t, err)
	require.Equal(t, workflows.OutcomeArchived, res.Outcome)
	require.True(t, unconfirmed(t, lost))
	require.True(t, unconfirmed(t, recorded))
	recordedEvents := len(history(t, c, recorded))

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	told, err := worker.ConfirmArchives(ctx, c, q, time.Hour, log)
	require.NoError(t, err)
	assert.Zero(t, told, "archives younger than the age are left")
	assert.True(t, unconfirmed(t, lost))

	told, err = worker.ConfirmArchives(ctx, c, q, 0, log)
	require.NoError(t, err)
	assert.Equal(t, 1, told)
	ended, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, c.GetWorkflow(ended, workflows.WorkflowID(lost), "").Get(ended, nil), "the told workflow ends")
	status, running = searchStatus(t, c, lost)
	assert.False(t, running)
	assert.Equal(t, store.StatusArchived, status)
	assert.False(t, unconfirmed(t, lost))
	assert.False(t, unconfirmed(t, recorded))
	assert.Len(t, history(t, c, recorded), recordedEvents, "a workflow that recorded its archive hears nothing")
	events := history(t, c, lost)
	assert.Contains(t, eventTypes(events), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED.String())

	told, err = worker.ConfirmArchives(ctx, c, q, 0, log)
	require.NoError(t, err)
	assert.Zero(t, told)

	if file := os.Getenv("POSTBOX_RECORD_HISTORY"); file != "" {
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: events})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, b, 0o644))
	}
}
