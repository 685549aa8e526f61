package worker_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// history returns the events of the current run of a task's workflow.
func history(t *testing.T, c client.Client, messageID string) []*historypb.HistoryEvent {
	t.Helper()
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(context.Background(), formtask.WorkflowID(messageID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		events = append(events, e)
	}
	return events
}

func eventTypes(events []*historypb.HistoryEvent) []string {
	var types []string
	for _, e := range events {
		types = append(types, e.GetEventType().String())
	}
	return types
}

// A submission to the archive as the first update of its task's run, as in BenchmarkSubmitEndToEnd: each
// event of its history is work of the Temporal server.
func TestSubmissionHistoryIsShort(t *testing.T) {
	ctx := context.Background()
	id := copyMessages(t, shared.pool, 900, 1)[0]
	res, err := shared.tasks.Submit(ctx, load(t, shared.tasks, id), signer, submission(t, shared.pool, "a3101102", true, true))
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeArchived, res.Outcome)
	events := history(t, devServer.Client(), id)
	// The bare workflow of BenchmarkSubmitEndToEnd has 13 events: started, its first workflow task (three),
	// the update accepted, the activity (three), a second workflow task (three), the update completed and
	// the run completed. A submission has one workflow task, the checks and archive in its local activity's
	// marker, and beside it the status search attribute: 9.
	assert.LessOrEqual(t, len(events), 9, eventTypes(events))
}

// The life of a task in one run of the current code, for formtask/testdata/formtask-baseline.json (its replay test): with
// POSTBOX_RECORD_HISTORY=<file> the history is written there.
func TestLifeOfATask(t *testing.T) {
	ctx := context.Background()
	pool, ft := shared.pool, shared.tasks
	id := copyMessages(t, pool, 901, 1)[0]
	var reportee int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT reportee_id FROM messages WHERE id = $1`, id).Scan(&reportee))
	deleter := signer
	deleter.Delete = true
	place := func(change, action string, want formtask.Outcome) {
		res, err := ft.ChangePlace(ctx, load(t, ft, id), change, formtask.PlaceInput{Caller: deleter,
			Audit: audit.Entry{At: clock.Now(), ReporteeID: reportee, ActorName: deleter.Name, Action: action}})
		require.NoError(t, err)
		require.Equal(t, want, res.Outcome)
	}

	v, err := ft.Validate(ctx, load(t, ft, id), writer)
	require.NoError(t, err)
	require.True(t, v.Success)
	res, err := ft.Submit(ctx, load(t, ft, id), writer, submission(t, pool, "a3101102", false, true))
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeSaved, res.Outcome)
	res, err = ft.AddAttachment(ctx, load(t, ft, id), writer, formtask.RevisionAttachment{Name: "Beretning", FileName: "beretning.pdf", AttachmentType: "Revisjonsberetning", Data: []byte("%PDF-1.4")}, nil)
	require.NoError(t, err)
	_, err = ft.AddAttachment(ctx, load(t, ft, id), writer, formtask.RevisionAttachment{Name: "Beretning", FileName: "anim.gif", AttachmentType: "Revisjonsberetning", Data: []byte("GIF89a")}, nil)
	require.Equal(t, formtask.Invalid, kind(t, err))
	_, err = ft.DeleteAttachment(ctx, load(t, ft, id), writer, res.AttachmentID, nil, nil)
	require.NoError(t, err)
	_, err = ft.Print(ctx, load(t, ft, id), writer)
	require.NoError(t, err)
	place(formtask.UpdateTrash, store.AuditDelete, formtask.OutcomeTrashed)
	place(formtask.UpdateRestore, store.AuditRestore, formtask.OutcomeRestored)
	res, err = ft.Submit(ctx, load(t, ft, id), signer, submission(t, pool, "a3101221", true, true))
	require.Equal(t, formtask.Invalid, kind(t, err))
	require.Equal(t, formtask.OutcomeInvalid, res.Outcome)
	res, err = ft.Submit(ctx, load(t, ft, id), writer, submission(t, pool, "a3101102", true, false))
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeSentToSigning, res.Outcome)
	res, err = ft.Submit(ctx, load(t, ft, id), signer, formtask.Submission{Complete: true, Sign: true})
	require.NoError(t, err)
	require.Equal(t, formtask.OutcomeArchived, res.Outcome)

	if file := os.Getenv("POSTBOX_RECORD_HISTORY"); file != "" {
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: history(t, devServer.Client(), id)})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, b, 0o644))
	}
}
