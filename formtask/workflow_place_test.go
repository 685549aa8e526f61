package formtask_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

var deleter = formtask.Caller{Name: "Per Storvik", ID: "l4", Write: true, Delete: true, SecurityLevel: 1, RequiredLevel: 1}

// placeEnv is newEnv with ChangePlace, which answers what found says (Changed unless told otherwise).
func placeEnv(t *testing.T, found formtask.ChangePlaceResult) (*testsuite.TestWorkflowEnvironment, *fakeActivities) {
	env, f := newEnv(t)
	env.RegisterActivityWithOptions(func(in formtask.ChangePlaceInput) (formtask.ChangePlaceResult, error) {
		f.record("ChangePlace"+"("+in.Change+")", 0)
		return found, nil
	}, activity.RegisterOptions{Name: "ChangePlace"})
	return env, f
}

func place(c formtask.Caller) formtask.PlaceInput {
	return formtask.PlaceInput{Caller: c, Audit: audit.Entry{ReporteeID: 50001, ActorName: c.Name, Action: store.AuditDelete}}
}

// detail is the status a refusal carries.
func detail(t *testing.T, err error) string {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	var status string
	require.NoError(t, appErr.Details(&status))
	return status
}

// A task in the trashbin keeps its status and takes no change of its content until it is restored; then
// it goes on where it was. Deleted for good, its workflow ends.
func TestTrashRestorePurge(t *testing.T) {
	env, f := placeEnv(t, formtask.ChangePlaceResult{Changed: true})
	trash := send(env, time.Minute, formtask.UpdateTrash, place(deleter))
	put := send(env, 2*time.Minute, formtask.UpdateSubmit, submit(signer, false, true, rev))
	sub := send(env, 2*time.Minute, formtask.UpdateSubForm, formtask.SubFormInput{Caller: signer, Revision: rev,
		Form: formtask.FormRef{Type: "SubForm", DataFormatID: "5571", DataFormatVersion: 41234}})
	val := send(env, 2*time.Minute, formtask.UpdateValidate, formtask.ReadInput{Caller: signer})
	again := send(env, 3*time.Minute, formtask.UpdateTrash, place(deleter))
	restore := send(env, 4*time.Minute, formtask.UpdateRestore, place(deleter))
	draft := send(env, 5*time.Minute, formtask.UpdateSubmit, submit(signer, true, false, formtask.RevisionRef{ID: 2, Digest: rev.Digest}))
	trash2 := send(env, 6*time.Minute, formtask.UpdateTrash, place(deleter))
	purge := send(env, 7*time.Minute, formtask.UpdatePurge, place(deleter))
	behind := send(env, 7*time.Minute, formtask.UpdateRestore, place(deleter)) // accepted, waits for the purge
	run(env, taskstatus.Filling)

	require.NoError(t, trash.err)
	assert.Equal(t, formtask.OutcomeTrashed, trash.res.Outcome)
	assert.Equal(t, taskstatus.Filling, trash.res.Status, "it keeps its status")
	for _, o := range []*outcome{put, sub, val, again} {
		require.True(t, o.rejected, "refused by the validator")
		assert.Equal(t, formtask.ErrInTrashbin, errType(o.err))
		assert.Equal(t, taskstatus.Filling, detail(t, o.err))
	}
	require.NoError(t, restore.err)
	assert.Equal(t, formtask.OutcomeRestored, restore.res.Outcome)
	require.NoError(t, draft.err)
	assert.Equal(t, taskstatus.Signing, draft.res.Status)
	require.NoError(t, trash2.err)
	assert.Equal(t, taskstatus.Signing, trash2.res.Status)
	require.NoError(t, purge.err)
	assert.Equal(t, formtask.OutcomePurged, purge.res.Outcome)
	assert.False(t, behind.rejected)
	assert.Equal(t, formtask.ErrPurged, errType(behind.err), "nothing after the delete for good")
	require.NoError(t, env.GetWorkflowError(), "the run ends when its task is deleted for good")
	assert.Equal(t, []string{"ChangePlace(trash) 0", "ChangePlace(restore) 0", "ValidateForms 2", "CheckAttachments 2",
		"ProjectState(Signering) 2", "ChangePlace(trash) 0", "ChangePlace(purge) 0"}, sortChecks(f.Calls()))
}

// sortChecks orders the two checks that run together as ValidateForms, CheckAttachments.
func sortChecks(calls []string) []string {
	for i := 0; i+1 < len(calls); i++ {
		if strings.HasPrefix(calls[i], "CheckAttachments") && strings.HasPrefix(calls[i+1], "ValidateForms") {
			calls[i], calls[i+1] = calls[i+1], calls[i]
		}
	}
	return calls
}

func TestPlaceValidators(t *testing.T) {
	noDelete := deleter
	noDelete.Delete = false
	stale := place(deleter)
	stale.Expect = &formtask.Expectation{Revision: 7, Status: taskstatus.Filling}
	cases := []struct {
		name, from, update string
		in                 formtask.PlaceInput
		want               string
	}{
		{"trash without Delete", taskstatus.Filling, formtask.UpdateTrash, place(noDelete), formtask.ErrForbidden},
		{"restore of a task in the mailbox", taskstatus.Filling, formtask.UpdateRestore, place(deleter), formtask.ErrNotInTrashbin},
		{"purge of a task in the mailbox", taskstatus.Signing, formtask.UpdatePurge, place(deleter), formtask.ErrNotInTrashbin},
		{"trash of an archived task", taskstatus.Archived, formtask.UpdateTrash, place(deleter), formtask.ErrTaskArchived},
		{"trash under a stale If-Match", taskstatus.Filling, formtask.UpdateTrash, stale, formtask.ErrPrecondition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := placeEnv(t, formtask.ChangePlaceResult{Changed: true})
			o := send(env, at(tc.from), tc.update, tc.in)
			run(env, tc.from)
			require.True(t, o.rejected)
			assert.Equal(t, tc.want, errType(o.err), o.err)
			assert.Empty(t, f.Calls(), "a rejected update runs nothing")
		})
	}
}

// A submission accepted while the task was going to the trashbin waits for the mutex, then finds the task
// in the trashbin: refused, its revision discarded.
func TestSubmissionBehindTheTrashIsRefused(t *testing.T) {
	env, f := placeEnv(t, formtask.ChangePlaceResult{Changed: true})
	f.slow = 20 * time.Millisecond
	trash := send(env, time.Minute, formtask.UpdateTrash, place(deleter))
	put := send(env, time.Minute, formtask.UpdateSubmit, submit(signer, false, true, rev))
	run(env, taskstatus.Filling)

	require.NoError(t, trash.err)
	assert.False(t, put.rejected, "accepted before the trash was made")
	assert.Equal(t, formtask.ErrInTrashbin, errType(put.err))
	assert.Equal(t, []string{"ChangePlace(trash) 0", "DiscardRevision 1"}, f.Calls())
}

// The scheduled purge keeps a task that went to the trashbin again after its cut-off; a task whose message
// is gone ends its run.
func TestPurgeNotDueAndGone(t *testing.T) {
	purgeInTrash := func(t *testing.T, found formtask.ChangePlaceResult) (*testsuite.TestWorkflowEnvironment, *outcome) {
		env, _ := placeEnv(t, found)
		in := place(deleter)
		in.DeletedBefore = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		o := send(env, time.Minute, formtask.UpdatePurge, in)
		env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
		env.ExecuteWorkflow(formtask.FormTask, formtask.TaskState{MessageID: "a3101102", ReporteeID: "r50001", ServiceCode: "4711",
			ServiceEdition: 2, Status: taskstatus.Filling, InTrashbin: true})
		return env, o
	}
	env, o := purgeInTrash(t, formtask.ChangePlaceResult{})
	require.NoError(t, o.err)
	assert.Equal(t, formtask.OutcomeNotDue, o.res.Outcome)
	assert.True(t, temporal.IsCanceledError(env.GetWorkflowError()), "the run goes on until cancelled: %v", env.GetWorkflowError())

	env, o = purgeInTrash(t, formtask.ChangePlaceResult{Gone: true})
	assert.Equal(t, formtask.ErrPurged, errType(o.err))
	require.NoError(t, env.GetWorkflowError(), "a task whose message is gone ends its run")
}

// A run continued as new keeps its task in the trashbin.
func TestTrashbinCarriesOverContinueAsNew(t *testing.T) {
	env, _ := placeEnv(t, formtask.ChangePlaceResult{Changed: true})
	send(env, time.Minute, formtask.UpdateTrash, place(deleter))
	for i := 1; i < formtask.MaxUpdatesPerRun; i++ {
		send(env, time.Minute+time.Duration(i)*time.Second, formtask.UpdatePrint, formtask.ReadInput{Caller: signer})
	}
	run(env, taskstatus.Filling)
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "got %v", env.GetWorkflowError())
	var next formtask.TaskState
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	assert.True(t, next.InTrashbin)
}
