package formtask_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/notification"
)

// signerOf is a person signing: their party id, and whether they hold Sign for the task's party.
func signerOf(party int64, maySign bool) formtask.Signer {
	return formtask.Signer{PartyID: party, Name: "Signee", MaySign: maySign, SecurityLevel: 2, RequiredLevel: 1}
}

func signAs(party int64) formtask.SignInput {
	return formtask.SignInput{Signer: signerOf(party, false)}
}

// completeAndSign is the filler's completion with sign=true, as person party.
func completeAndSign(party int64) formtask.SubmitInput {
	in := submit(signer, true, true, rev)
	in.Signer = signerOf(party, true)
	return in
}

// A task with signing steps waits in Signering after its completion (which records the completer's
// signature) until the last signature, which archives it; a repeated signature gets the same answer
// and is recorded once.
func TestSigningCollectsEverySignatureThenArchives(t *testing.T) {
	env, f := newEnv(t)
	f.plan, f.needed = formtask.SigningPlan{Steps: 2}, 3
	done := send(env, time.Minute, formtask.UpdateSubmit, completeAndSign(50001))
	second := send(env, 2*time.Minute, formtask.UpdateSign, signAs(50002))
	again := send(env, 3*time.Minute, formtask.UpdateSign, signAs(50002))
	last := send(env, 4*time.Minute, formtask.UpdateSign, signAs(50003))
	run(env, taskstatus.Filling)
	require.NoError(t, env.GetWorkflowError())

	require.NoError(t, done.err)
	assert.Equal(t, formtask.Result{Outcome: formtask.OutcomeSigned, Status: taskstatus.Signing}, done.res)
	require.NoError(t, second.err)
	assert.Equal(t, formtask.OutcomeSigned, second.res.Outcome)
	require.NoError(t, again.err)
	assert.Equal(t, second.res, again.res, "a repeated signature answers as the first")
	require.NoError(t, last.err)
	assert.Equal(t, formtask.OutcomeArchived, last.res.Outcome)
	assert.Equal(t, []int64{50001, 50002, 50003}, f.signed)
	assert.Contains(t, f.Calls(), "ProjectState(Signering) 1")
	assert.Contains(t, f.Calls(), "Archive 0", "the last signature archives the content as it is")
}

// Signatures sent at the same moment are each decided once, one at a time, and the task archives once.
func TestConcurrentSignaturesAreEachCountedOnce(t *testing.T) {
	env, f := newEnv(t)
	f.plan, f.needed = formtask.SigningPlan{Steps: 1}, 3
	send(env, time.Minute, formtask.UpdateSubmit, submit(signer, true, false, rev))
	var outs []*outcome
	for _, p := range []int64{50011, 50012, 50013, 50012} {
		outs = append(outs, send(env, 2*time.Minute, formtask.UpdateSign, signAs(p)))
	}
	run(env, taskstatus.Filling)
	require.NoError(t, env.GetWorkflowError())
	archived := 0
	for _, o := range outs {
		if o.err != nil { // the repeat, after the archive
			assert.Equal(t, formtask.ErrTaskArchived, errType(o.err))
			continue
		}
		if o.res.Outcome == formtask.OutcomeArchived {
			archived++
		}
	}
	assert.Equal(t, 1, archived)
	assert.ElementsMatch(t, []int64{50011, 50012, 50013}, f.signed)
	n := 0
	for _, c := range f.Calls() {
		if c == "Archive 0" {
			n++
		}
	}
	assert.Equal(t, 1, n, "archived once")
}

// Someone the current step does not admit is refused with why (403), and nothing changes; a completer who
// is not a signee of the first step leaves the task in Signering for its signees.
func TestSignatureOfSomeoneNotASignee(t *testing.T) {
	env, f := newEnv(t)
	f.plan, f.needed = formtask.SigningPlan{Steps: 1}, 1
	f.notSignees = map[int64]bool{50001: true, 50099: true}
	done := send(env, time.Minute, formtask.UpdateSubmit, completeAndSign(50001))
	stranger := send(env, 2*time.Minute, formtask.UpdateSign, signAs(50099))
	run(env, taskstatus.Filling)
	require.NoError(t, done.err)
	assert.Equal(t, formtask.Result{Outcome: formtask.OutcomeSentToSigning, Status: taskstatus.Signing}, done.res)
	assert.Equal(t, formtask.ErrNotSignee, errType(stranger.err))
	assert.Contains(t, stranger.err.Error(), "not a signee")
	assert.Empty(t, f.signed)
}

// While signatures are collected the content is locked; sending the task back to Utfylling voids them,
// and a signature after that is refused for the status.
func TestReturnToFillingVoidsTheSignatures(t *testing.T) {
	env, f := newEnv(t)
	f.plan, f.needed = formtask.SigningPlan{Steps: 1}, 2
	send(env, time.Minute, formtask.UpdateSubmit, completeAndSign(50001))
	locked := send(env, 2*time.Minute, formtask.UpdateSubmit, submit(signer, true, true, formtask.RevisionRef{ID: 2, Digest: rev.Digest}))
	back := send(env, 3*time.Minute, formtask.UpdateReturnToFilling, formtask.ReturnInput{Caller: writer})
	late := send(env, 4*time.Minute, formtask.UpdateSign, signAs(50002))
	run(env, taskstatus.Filling)
	assert.Equal(t, formtask.ErrWrongState, errType(locked.err))
	assert.Contains(t, f.Calls(), "DiscardRevision 2", "the refused content is discarded")
	require.NoError(t, back.err)
	assert.Equal(t, formtask.Result{Outcome: formtask.OutcomeReturned, Status: taskstatus.Filling}, back.res)
	assert.True(t, late.rejected)
	assert.Equal(t, formtask.ErrWrongState, errType(late.err))
	assert.Empty(t, f.signed, "voided")
}

// A plan that cannot be completed yet (a step of named signees, none named) refuses the completion and
// discards its content.
func TestCompletionWithoutTheSigneesItNeeds(t *testing.T) {
	env, f := newEnv(t)
	f.plan = formtask.SigningPlan{Steps: 1, Refusal: "name them first"}
	o := send(env, time.Minute, formtask.UpdateSubmit, completeAndSign(50001))
	run(env, taskstatus.Filling)
	assert.Equal(t, formtask.ErrWrongState, errType(o.err))
	assert.Contains(t, o.err.Error(), "name them first")
	assert.Contains(t, f.Calls(), "DiscardRevision 1")
}

// Signees are named while the task is in Utfylling only, and at most MaxSignees.
func TestSigneesChangeOnlyInFilling(t *testing.T) {
	env, f := newEnv(t)
	f.plan, f.needed = formtask.SigningPlan{Steps: 1}, 2
	named := send(env, time.Minute, formtask.UpdateSignees, formtask.SigneesInput{Caller: writer, PartyIDs: []int64{50002, 50003}})
	tooMany := send(env, 2*time.Minute, formtask.UpdateSignees, formtask.SigneesInput{Caller: writer, PartyIDs: make([]int64, formtask.MaxSignees+1)})
	send(env, 3*time.Minute, formtask.UpdateSubmit, submit(signer, true, false, rev))
	late := send(env, 4*time.Minute, formtask.UpdateSignees, formtask.SigneesInput{Caller: writer, PartyIDs: []int64{50004}})
	run(env, taskstatus.Filling)
	require.NoError(t, named.err)
	assert.Equal(t, formtask.ErrBadInput, errType(tooMany.err))
	assert.Equal(t, formtask.ErrWrongState, errType(late.err))
	assert.Contains(t, f.Calls(), "WriteSignees 2")
}

// At its signing deadline a task still in Signering gets formtask.signing.overdue, once; one archived
// before its deadline does not.
func TestSigningDeadline(t *testing.T) {
	env, f := newEnv(t)
	due := env.Now().Add(48 * time.Hour)
	f.plan, f.needed = formtask.SigningPlan{Steps: 1, Deadline: &due}, 2
	send(env, time.Minute, formtask.UpdateSubmit, completeAndSign(50001))
	send(env, 72*time.Hour, formtask.UpdateSign, signAs(50002))
	runFor(env, taskstatus.Filling, 100*time.Hour)
	require.NoError(t, env.GetWorkflowError(), "archived by the last signature, after the deadline")
	n := 0
	for _, c := range f.Calls() {
		if c == "MarkSigningOverdue 0" {
			n++
		}
	}
	assert.Equal(t, 1, n)

	env, f = newEnv(t)
	due = env.Now().Add(48 * time.Hour)
	f.plan, f.needed = formtask.SigningPlan{Steps: 1, Deadline: &due}, 2
	send(env, time.Minute, formtask.UpdateSubmit, completeAndSign(50001))
	send(env, 30*time.Minute, formtask.UpdateSign, signAs(50002))
	run(env, taskstatus.Filling)
	require.NoError(t, env.GetWorkflowError())
	assert.NotContains(t, f.Calls(), "MarkSigningOverdue 0")
}

// A run that takes Signering from the read model (the Update that sent the task there was lost) takes its
// deadline with it, and marks the task overdue at that deadline.
func TestSigningDeadlineSurvivesAResync(t *testing.T) {
	env, f := newEnv(t)
	at := env.Now().Add(3 * time.Hour)
	f.readModel = formtask.ReadModelState{Found: true, Status: taskstatus.Signing, SigningDeadline: &at}
	send(env, time.Minute, formtask.UpdateResync, formtask.ResyncInput{})
	var overdueAt time.Time
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		if info.ActivityType.Name == "MarkSigningOverdue" {
			overdueAt = env.Now()
		}
	})
	runFor(env, taskstatus.Filling, 10*time.Hour)
	require.False(t, overdueAt.IsZero(), "no overdue event")
	assert.False(t, overdueAt.Before(at), "overdue before its deadline")
	assert.True(t, overdueAt.Before(at.Add(time.Hour)), "overdue long after its deadline")
}

// A task entering Signering starts the order that notifies its signees of their calls to sign, as a child
// that outlives the task's run; a task already there starts none again.
func TestEnteringSigningNotifiesTheSignees(t *testing.T) {
	env, f := newEnv(t)
	order := notification.WorkflowInput{OrderID: "0b9e3c1e-1111-4222-8333-444455556666", Recipients: 2, Reminders: 1,
		ReminderEvery: 72 * time.Hour}
	f.plan, f.needed = formtask.SigningPlan{Steps: 1, Notify: &order}, 2
	var started []notification.WorkflowInput
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in notification.WorkflowInput) (notification.Progress, error) {
		started = append(started, in)
		return notification.Progress{}, nil
	}, workflow.RegisterOptions{Name: notification.WorkflowName})
	send(env, time.Minute, formtask.UpdateSubmit, completeAndSign(50001))
	send(env, 2*time.Minute, formtask.UpdateSign, signAs(50002))
	run(env, taskstatus.Filling)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []notification.WorkflowInput{order}, started)

	// A run that takes Signering from the read model (the Update that sent it there was lost) starts the
	// order the lost update did not.
	env, f = newEnv(t)
	started = nil
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in notification.WorkflowInput) (notification.Progress, error) {
		started = append(started, in)
		return notification.Progress{}, nil
	}, workflow.RegisterOptions{Name: notification.WorkflowName})
	f.readModel = formtask.ReadModelState{Found: true, Status: taskstatus.Signing, CallOrder: &order}
	send(env, time.Minute, formtask.UpdateResync, formtask.ResyncInput{})
	run(env, taskstatus.Filling)
	assert.Equal(t, []notification.WorkflowInput{order}, started)
}
