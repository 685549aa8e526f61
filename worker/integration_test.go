package worker_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

var (
	// P1 acting for O1: every right there; password login (level 1).
	signer = formtask.Caller{Name: "Ingrid Fjellheim", ID: "login-1", Write: true, Sign: true, SecurityLevel: 1}
	// P3 on O1: REGNA gives Read and Write, no Sign.
	writer = formtask.Caller{Name: "Sigrid Haugland", ID: "login-3", Write: true, SecurityLevel: 1}
)

func formsOf(t testing.TB, pool *pgxpool.Pool, messageID string) []formtask.RevisionForm {
	t.Helper()
	forms, _, err := formtask.NewStore(store.New(pool)).MessageContent(context.Background(), messageID)
	require.NoError(t, err)
	var out []formtask.RevisionForm
	for _, f := range forms {
		out = append(out, formtask.RevisionForm{Type: f.Type, DataFormatID: f.DataFormatID, DataFormatVersion: f.DataFormatVersion, Name: f.Name, FormData: f.FormData})
	}
	return out
}

func submission(t testing.TB, pool *pgxpool.Pool, messageID string, complete, sign bool) formtask.Submission {
	return formtask.Submission{Complete: complete, Sign: sign, Forms: formsOf(t, pool, messageID)}
}

// kind is why the service refused a change; api's TestFormTaskProblems holds the HTTP status of each.
func kind(t *testing.T, err error) formtask.Kind {
	t.Helper()
	var e *formtask.Error
	require.True(t, errors.As(err, &e), "want a refusal, got %v", err)
	return e.Kind
}

// load returns a form task as a caller of the service has it loaded.
func load(t testing.TB, ft *formtask.Service, messageID string) formtask.Task {
	t.Helper()
	task, err := ft.Load(context.Background(), messageID)
	require.NoError(t, err)
	return task
}

func readModel(t *testing.T, pool *pgxpool.Pool, messageID string) formtask.Task {
	t.Helper()
	task, err := formtask.NewStore(store.New(pool)).GetFormTask(context.Background(), messageID)
	require.NoError(t, err)
	return task
}

// searchStatus returns the FormTaskStatus search attribute of a task's workflow and whether it still runs.
func searchStatus(t *testing.T, c client.Client, messageID string) (string, bool) {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), formtask.WorkflowID(messageID), "")
	require.NoError(t, err)
	info := d.GetWorkflowExecutionInfo()
	var s string
	p := info.GetSearchAttributes().GetIndexedFields()[formtask.SearchStatus.GetName()]
	require.NotNil(t, p, "FormTaskStatus is set")
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &s))
	return s, info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

func TestSubmitSignsAndArchives(t *testing.T) {
	ctx := context.Background()
	pool, ft := shared.pool, shared.tasks

	res, err := ft.Submit(ctx, load(t, ft, "a3101102"), signer, submission(t, pool, "a3101102", true, true))
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)
	assert.Equal(t, taskstatus.Archived, res.Status)
	assert.Regexp(t, `^AR\d+$`, res.ArchiveReference)

	task := readModel(t, pool, "a3101102")
	assert.Equal(t, taskstatus.Archived, task.Status)
	assert.Equal(t, res.ArchiveReference, task.ArchiveReference)
	h, err := formtask.NewStore(store.New(pool)).GetPrintHeader(ctx, "a3101102")
	require.NoError(t, err)
	assert.Equal(t, "Ingrid Fjellheim", h.LastChangedBy)
	pdf, err := ft.Print(ctx, load(t, ft, "a3101102"), signer)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(pdf), "%PDF-"))

	s, running := searchStatus(t, devServer.Client(), "a3101102")
	assert.Equal(t, taskstatus.Archived, s)
	assert.False(t, running, "the workflow of an archived task ends")

	_, err = ft.Submit(ctx, load(t, ft, "a3101102"), signer, submission(t, pool, "a3101102", false, true))
	assert.Equal(t, formtask.Conflict, kind(t, err), "an archived task refuses")
	var pending int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM form_revisions WHERE message_id = 'a3101102' AND promoted_at IS NULL`).Scan(&pending))
	assert.Zero(t, pending, "the refused revision is gone")
}

func TestSigning(t *testing.T) {
	ctx := context.Background()
	pool, ft := shared.pool, shared.tasks

	res, err := ft.Submit(ctx, load(t, ft, "a3101109"), signer, submission(t, pool, "a3101109", true, false))
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeSentToSigning, res.Outcome)
	assert.Equal(t, taskstatus.Signing, readModel(t, pool, "a3101109").Status)

	_, err = ft.Validate(ctx, load(t, ft, "a3101109"), signer)
	assert.Equal(t, formtask.Conflict, kind(t, err), "validation only in Utfylling")

	res, err = ft.Submit(ctx, load(t, ft, "a3101109"), writer, formtask.Submission{Complete: true, Sign: true})
	assert.Equal(t, formtask.SignRefused, kind(t, err))
	assert.Equal(t, formtask.OutcomeSignRefused, res.Outcome)
	assert.Equal(t, taskstatus.Signing, readModel(t, pool, "a3101109").Status)

	res, err = ft.Submit(ctx, load(t, ft, "a3101109"), signer, formtask.Submission{Complete: true, Sign: true})
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)

	// A task the dataset left in Signering (5302/1, main form and sub-form).
	res, err = ft.Submit(ctx, load(t, ft, "a3100941"), signer, submission(t, pool, "a3100941", true, true))
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)
	ar, err := formtask.NewStore(store.New(pool)).GetArchive(ctx, "a3100941")
	require.NoError(t, err)
	assert.Len(t, ar.Forms, 2)
}

func TestRightsAndLevel(t *testing.T) {
	ctx := context.Background()
	pool, ft := shared.pool, shared.tasks
	// O2's 4711/1 needs security level 3; a password login has 1.
	_, err := ft.Submit(ctx, load(t, ft, "a3101081"), signer, submission(t, pool, "a3101081", false, true))
	assert.Equal(t, formtask.Forbidden, kind(t, err))
	level3 := signer
	level3.SecurityLevel = 3
	res, err := ft.Submit(ctx, load(t, ft, "a3101081"), level3, submission(t, pool, "a3101081", false, true))
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeSaved, res.Outcome)

	reader := writer
	reader.Write = false
	_, err = ft.Submit(ctx, load(t, ft, "a3101130"), reader, submission(t, pool, "a3101130", false, true))
	assert.Equal(t, formtask.Forbidden, kind(t, err))
	_, err = ft.Load(ctx, "nosuch")
	assert.Equal(t, formtask.NotFound, kind(t, err))
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func TestInvalidFormKeepsNothing(t *testing.T) {
	ctx := context.Background()
	pool, ft := shared.pool, shared.tasks

	v, err := ft.Validate(ctx, load(t, ft, "a3101221"), writer)
	require.NoError(t, err)
	assert.False(t, v.Success)
	var paths []string
	for _, e := range v.ValidationErrors {
		paths = append(paths, e.FieldXPath)
	}
	assert.Equal(t, []string{"/Skjema/AntallAnsatte", "/Skjema/Naeringstype"}, paths)

	before := formsOf(t, pool, "a3101221")
	changed := submission(t, pool, "a3101221", true, true)
	changed.Forms[0].FormData = strings.Replace(changed.Forms[0].FormData, "<Regnskapsaar>2024", "<Regnskapsaar>1999", 1)
	res, err := ft.Submit(ctx, load(t, ft, "a3101221"), signer, changed)
	assert.Equal(t, formtask.Invalid, kind(t, err))
	assert.Equal(t, formtask.OutcomeInvalid, res.Outcome)
	require.NotNil(t, res.Validation)
	assert.Len(t, res.Validation.ValidationErrors, 3)
	assert.Equal(t, before, formsOf(t, pool, "a3101221"), "nothing of the revision is kept")
	assert.Equal(t, taskstatus.Filling, readModel(t, pool, "a3101221").Status)
	var revisions int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM form_revisions WHERE message_id = 'a3101221'`).Scan(&revisions))
	assert.Zero(t, revisions)

	two := submission(t, pool, "a3101263", false, true)
	two.Forms = append(two.Forms, two.Forms[0])
	_, err = ft.Submit(ctx, load(t, ft, "a3101263"), signer, two)
	assert.Equal(t, formtask.BadInput, kind(t, err), "exactly one MainForm")

	// A signing PUT without content on a task in Utfylling says what to do, not that a MainForm is missing.
	_, err = ft.Submit(ctx, load(t, ft, "a3101263"), signer, formtask.Submission{Complete: true, Sign: true})
	require.Equal(t, formtask.BadInput, kind(t, err))
	assert.Contains(t, err.Error(), "a PUT without content signs only a task in Signering")
	assert.Contains(t, err.Error(), "?sign=false")
}

func TestAttachmentsAndSubForms(t *testing.T) {
	ctx := context.Background()
	pool, ft := shared.pool, shared.tasks

	res, err := ft.AddAttachment(ctx, load(t, ft, "a3101067"), writer, formtask.RevisionAttachment{Name: "Bilde", FileName: "Kvittering.PNG", AttachmentType: "Bilde", Data: []byte("\x89PNG\r\n\x1a\n")}, nil)
	require.NoError(t, err)
	require.NotZero(t, res.AttachmentID)
	_, atts, err := formtask.NewStore(store.New(pool)).MessageContent(ctx, "a3101067")
	require.NoError(t, err)
	require.Len(t, atts, 1)
	assert.Equal(t, res.AttachmentID, atts[0].ID)

	res, err = ft.AddAttachment(ctx, load(t, ft, "a3101067"), writer, formtask.RevisionAttachment{Name: "Bilde", FileName: "anim.gif", AttachmentType: "Bilde", Data: []byte("GIF89a")}, nil)
	assert.Equal(t, formtask.Invalid, kind(t, err))
	assert.Equal(t, "anim.gif", res.Validation.ValidationErrors[0].FieldName)
	_, err = ft.AddAttachment(ctx, load(t, ft, "a3101067"), writer, formtask.RevisionAttachment{Name: "X", FileName: "x.pdf", AttachmentType: "Ukjent", Data: []byte("%PDF")}, nil)
	assert.Equal(t, formtask.Invalid, kind(t, err), "unknown attachment type")

	// P1's own 5302/1: change the sub-form, then add another.
	forms, _, err := formtask.NewStore(store.New(pool)).MessageContent(ctx, "a3101116")
	require.NoError(t, err)
	sub := formtask.RevisionForm{Type: "SubForm", DataFormatID: forms[1].DataFormatID, DataFormatVersion: forms[1].DataFormatVersion, Name: forms[1].Name, FormData: forms[1].FormData}
	res, err = ft.PutSubForm(ctx, load(t, ft, "a3101116"), signer, forms[1].ID, sub, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, forms[1].ID, res.FormID)
	res, err = ft.PutSubForm(ctx, load(t, ft, "a3101116"), signer, 0, sub, nil, nil)
	require.NoError(t, err)
	assert.NotEqual(t, forms[1].ID, res.FormID)
	assert.Len(t, formsOf(t, pool, "a3101116"), 3)
	_, err = ft.PutSubForm(ctx, load(t, ft, "a3101116"), signer, forms[0].ID, sub, nil, nil)
	assert.Equal(t, formtask.Invalid, kind(t, err), "the main form is not a sub-form")
}

// Two submissions at once: each update's activities run after the other's have ended.
func TestConcurrentSubmitsDoNotInterleave(t *testing.T) {
	ctx := context.Background()
	pool, ft := shared.pool, shared.tasks
	var wg sync.WaitGroup
	errs := make([]error, 2)
	task, sub := load(t, ft, "a3101179"), submission(t, pool, "a3101179", false, true)
	for i := range 2 {
		wg.Go(func() {
			_, errs[i] = ft.Submit(ctx, task, signer, sub)
		})
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])

	events := shared.log.of("a3101179")
	first, last := map[int64]int{}, map[int64]int{}
	for i, e := range events {
		if _, ok := first[e.revision]; !ok {
			first[e.revision] = i
		}
		last[e.revision] = i
	}
	require.Len(t, first, 2, "%v", events)
	var spans [][2]int
	for r := range first {
		spans = append(spans, [2]int{first[r], last[r]})
	}
	assert.True(t, spans[0][1] < spans[1][0] || spans[1][1] < spans[0][0], "updates interleaved: %v", events)
}

// A task edited many times keeps a small history: runs continue as new.
func TestManyUpdatesKeepHistorySmall(t *testing.T) {
	ctx := context.Background()
	ft, c := shared.tasks, devServer.Client()
	for range 100 {
		_, err := ft.Validate(ctx, load(t, ft, "a3101186"), writer)
		require.NoError(t, err)
	}
	d, err := c.DescribeWorkflowExecution(ctx, formtask.WorkflowID("a3101186"), "")
	require.NoError(t, err)
	info := d.GetWorkflowExecutionInfo()
	assert.NotEqual(t, info.GetExecution().GetRunId(), info.GetFirstRunId(), "continued as new")
	assert.Less(t, info.GetHistoryLength(), int64(500))
	res, err := ft.Submit(ctx, load(t, ft, "a3101186"), signer, submission(t, shared.pool, "a3101186", true, true))
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)
}

// The worker dies after the archive committed but before its workflow task completed: the new worker runs
// the local activity again, which finds the archive, so the task is archived once, with one
// ArchiveReference and one PDF.
func TestWorkerDiesDuringArchive(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	c := dial(t, devServer.FrontendHostPort(), nsDurability)
	committed := make(chan string, 1)
	stop := startWorker(t, c, pool, func(w sdkworker.Registry, a *formtask.Activities) {
		w.RegisterActivityWithOptions(func(ctx context.Context, in formtask.CheckAndArchiveInput) (formtask.CheckAndArchiveResult, error) {
			res, err := a.CheckAndArchive(ctx, in)
			if err != nil {
				return res, err
			}
			committed <- res.Archive.ArchiveReference
			<-ctx.Done() // never reports: the worker is stopped
			return formtask.CheckAndArchiveResult{}, ctx.Err()
		}, activity.RegisterOptions{Name: "CheckAndArchive", DisableAlreadyRegisteredCheck: true})
	})
	ft := formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)})

	type outcome struct {
		res formtask.Result
		err error
	}
	done := make(chan outcome, 1)
	task, sub := load(t, ft, "a3101214"), submission(t, pool, "a3101214", true, true)
	go func() {
		res, err := ft.Submit(ctx, task, signer, sub)
		done <- outcome{res, err}
	}()
	var first string
	select {
	case first = <-committed:
	case <-time.After(30 * time.Second):
		t.Fatal("Archive did not run")
	}
	stop()
	startWorker(t, c, pool, nil)
	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the submission did not finish on the new worker")
	}
	require.NoError(t, o.err)
	assert.Equal(t, formtask.OutcomeArchived, o.res.Outcome)
	assert.Equal(t, first, o.res.ArchiveReference)

	var archives, prints int
	var ref string
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM archives), (SELECT count(*) FROM prints),
		(SELECT archive_reference FROM messages WHERE id = 'a3101214')`).Scan(&archives, &prints, &ref))
	assert.Equal(t, 1, archives)
	assert.Equal(t, 1, prints)
	assert.Equal(t, first, ref)
}

// The dev server restarts on its database file with tasks in every state: nothing is lost, the search
// attributes match the read model, and the tasks go on.
func TestDevServerRestart(t *testing.T) {
	ctx := context.Background()
	hostPort := freeHostPort(t)
	dbFile := filepath.Join(t.TempDir(), "temporal.db")
	srv, err := startDevServer(ctx, hostPort, dbFile)
	require.NoError(t, err)
	pool := storetest.New(t)
	c := dial(t, hostPort, "default")
	stop := startWorker(t, c, pool, nil)
	ft := formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)})

	states := map[string]string{
		"a3101102": taskstatus.Filling,  // a draft saved
		"a3101109": taskstatus.Signing,  // sent to signing
		"a3101151": taskstatus.Archived, // signed and archived
	}
	for id, want := range states {
		res, err := ft.Submit(ctx, load(t, ft, id), signer, submission(t, pool, id, want != taskstatus.Filling, want == taskstatus.Archived))
		require.NoError(t, err)
		require.Equal(t, want, res.Status)
	}
	stop()
	require.NoError(t, srv.Stop())

	srv, err = startDevServer(ctx, hostPort, dbFile)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	c = dial(t, hostPort, "default")
	startWorker(t, c, pool, nil)
	ft = formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)})
	for id, want := range states {
		s, running := searchStatus(t, c, id)
		assert.Equal(t, want, s, id)
		assert.Equal(t, want, readModel(t, pool, id).Status, id)
		assert.Equal(t, want != taskstatus.Archived, running, id)
	}

	res, err := ft.Submit(ctx, load(t, ft, "a3101109"), signer, formtask.Submission{Complete: true, Sign: true})
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)
	res, err = ft.Submit(ctx, load(t, ft, "a3101102"), signer, submission(t, pool, "a3101102", true, true))
	require.NoError(t, err)
	assert.Equal(t, formtask.OutcomeArchived, res.Outcome)
	_, err = ft.Submit(ctx, load(t, ft, "a3101151"), signer, submission(t, pool, "a3101151", false, false))
	assert.Equal(t, formtask.Conflict, kind(t, err), "an archived task takes no draft")
	res, err = ft.Submit(ctx, load(t, ft, "a3101151"), signer, submission(t, pool, "a3101151", true, true))
	require.NoError(t, err, "its signing repeated is answered as it was")
	assert.Equal(t, readModel(t, pool, "a3101151").ArchiveReference, res.ArchiveReference)
	var archives int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM archives`).Scan(&archives))
	assert.Equal(t, 3, archives, fmt.Sprint(states))
}
