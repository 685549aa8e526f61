package correspondence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/notification"
)

// prefillSteps records when (in workflow time) each step of a scheduled pre-fill ran.
type prefillSteps struct {
	env                 *testsuite.TestWorkflowEnvironment
	checks, drops       int
	created             []time.Time
	dueStarted, noticed int
	findings            formtask.Findings
	outcome             correspondence.PrefillOutcome
}

func newPrefillEnv(t *testing.T) *prefillSteps {
	var s testsuite.WorkflowTestSuite
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	env.SetStartTime(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	st := &prefillSteps{env: env, outcome: correspondence.PrefillOutcome{Created: true}}
	a := &correspondence.Activities{}
	env.RegisterActivity(a.CheckPrefill)
	env.RegisterActivity(a.CreatePrefilled)
	env.RegisterActivity(a.DropPrefill)
	env.RegisterWorkflowWithOptions(correspondence.TaskDueWorkflow, workflow.RegisterOptions{Name: correspondence.TaskDueWorkflowName})
	env.RegisterWorkflowWithOptions(notification.OrderWorkflow, workflow.RegisterOptions{Name: notification.WorkflowName})
	env.OnActivity(a.CheckPrefill, mock.Anything, mock.Anything).Return(func(context.Context, string) (formtask.Findings, error) {
		st.checks++
		return st.findings, nil
	})
	env.OnActivity(a.CreatePrefilled, mock.Anything, mock.Anything).Return(func(context.Context, string) (correspondence.PrefillOutcome, error) {
		st.created = append(st.created, env.Now())
		return st.outcome, nil
	})
	env.OnActivity(a.DropPrefill, mock.Anything, mock.Anything).Return(func(context.Context, string) error {
		st.drops++
		return nil
	})
	env.OnWorkflow(correspondence.TaskDueWorkflowName, mock.Anything, mock.Anything).Return(func(workflow.Context, correspondence.TaskDueInput) error {
		st.dueStarted++
		return nil
	})
	env.OnWorkflow(notification.WorkflowName, mock.Anything, mock.Anything).Return(
		func(workflow.Context, notification.WorkflowInput) (notification.Progress, error) {
			st.noticed++
			return notification.Progress{}, nil
		})
	return st
}

// check sends the Update that checks the forms after delay, and records its answer.
func (st *prefillSteps) check(delay time.Duration, answer *formtask.Findings, refused *error) {
	st.env.RegisterDelayedCallback(func() {
		st.env.UpdateWorkflow(correspondence.UpdateCheckPrefill, "check-"+delay.String(), &testsuite.TestUpdateCallback{
			OnReject: func(err error) { *refused = err },
			OnAccept: func() {},
			OnComplete: func(v any, err error) {
				if err == nil {
					*answer = v.(formtask.Findings)
				}
			},
		})
	}, delay)
}

func (st *prefillSteps) run(t *testing.T, in correspondence.PrefillInput) string {
	t.Helper()
	st.env.ExecuteWorkflow(correspondence.PrefillWorkflow, in)
	require.True(t, st.env.IsWorkflowCompleted())
	require.NoError(t, st.env.GetWorkflowError())
	var stage string
	require.NoError(t, st.env.GetWorkflowResult(&stage))
	return stage
}

// Checked forms that pass are created at VisibleDateTime on a durable timer, not before; then the task's
// notification order and due timer start.
func TestPrefillIsCreatedAtVisibleDateTime(t *testing.T) {
	st := newPrefillEnv(t)
	st.findings = formtask.Findings{Warnings: []formtask.ValidationEntry{{FieldName: "x", ErrorMessage: "a warning"}}}
	var answer formtask.Findings
	var refused error
	st.check(0, &answer, &refused)
	start := st.env.Now()
	in := correspondence.PrefillInput{MessageID: "a1", VisibleAt: start.Add(24 * time.Hour), DueAt: start.Add(48 * time.Hour),
		Notification: &notification.WorkflowInput{OrderID: "o1", Recipients: 1}}
	assert.Equal(t, correspondence.PrefillCreated, st.run(t, in))
	require.NoError(t, refused)
	assert.Equal(t, st.findings, answer, "the Update answers the findings")
	require.Len(t, st.created, 1)
	assert.False(t, st.created[0].Before(in.VisibleAt), "created before VisibleDateTime")
	assert.Equal(t, 1, st.dueStarted)
	assert.Equal(t, 1, st.noticed)
	assert.Zero(t, st.drops)
}

// Forms that fail are answered and the workflow ends: the task is never created (CheckPrefill dropped it).
func TestRefusedPrefillIsNeverCreated(t *testing.T) {
	st := newPrefillEnv(t)
	st.findings = formtask.Findings{Errors: []formtask.ValidationEntry{{FieldName: "/Skjema/orgnr", ErrorMessage: "not a number"}}}
	var answer formtask.Findings
	var refused error
	st.check(0, &answer, &refused)
	assert.Equal(t, correspondence.PrefillRefused, st.run(t, correspondence.PrefillInput{MessageID: "a2", VisibleAt: st.env.Now().Add(time.Hour)}))
	assert.Equal(t, st.findings, answer)
	assert.Empty(t, st.created)
	assert.Zero(t, st.dueStarted+st.noticed)
}

// A workflow whose check never comes (the request died after starting it) drops its pre-fill and ends.
func TestUncheckedPrefillIsDropped(t *testing.T) {
	st := newPrefillEnv(t)
	assert.Equal(t, correspondence.PrefillAbandoned, st.run(t, correspondence.PrefillInput{MessageID: "a3", VisibleAt: st.env.Now().Add(time.Hour)}))
	assert.Equal(t, 1, st.drops)
	assert.Empty(t, st.created)
}

// The forms are checked once: a second check is rejected by the validator and leaves no trace.
func TestPrefillIsCheckedOnce(t *testing.T) {
	st := newPrefillEnv(t)
	var first, second formtask.Findings
	var refusedFirst, refusedSecond error
	st.check(0, &first, &refusedFirst)
	st.check(time.Second, &second, &refusedSecond)
	st.run(t, correspondence.PrefillInput{MessageID: "a4", VisibleAt: st.env.Now().Add(time.Hour)})
	require.NoError(t, refusedFirst)
	require.Error(t, refusedSecond)
	assert.Equal(t, 1, st.checks)
}

// A task the service no longer takes at VisibleDateTime is not created, and nothing is started for it.
func TestPrefillThatFailsAtVisibleDateTime(t *testing.T) {
	st := newPrefillEnv(t)
	st.outcome = correspondence.PrefillOutcome{Failure: "service 4711 edition 2 cannot be submitted through this interface now"}
	var answer formtask.Findings
	var refused error
	st.check(0, &answer, &refused)
	in := correspondence.PrefillInput{MessageID: "a5", VisibleAt: st.env.Now().Add(time.Hour), DueAt: st.env.Now().Add(2 * time.Hour),
		Notification: &notification.WorkflowInput{OrderID: "o5", Recipients: 1}}
	assert.Equal(t, correspondence.PrefillFailed, st.run(t, in))
	assert.Zero(t, st.dueStarted+st.noticed)
}

// A check whose activity fails fails the Update (the request answers 503 and drops the pre-fill); the
// workflow then ends as abandoned.
func TestPrefillWhoseCheckFails(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	a := &correspondence.Activities{}
	env.RegisterActivity(a.CheckPrefill)
	env.RegisterActivity(a.DropPrefill)
	env.OnActivity(a.CheckPrefill, mock.Anything, mock.Anything).Return(formtask.Findings{}, errors.New("the database is away"))
	env.OnActivity(a.DropPrefill, mock.Anything, mock.Anything).Return(nil)
	var failed error
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(correspondence.UpdateCheckPrefill, "check", &testsuite.TestUpdateCallback{
			OnReject: func(error) {}, OnAccept: func() {}, OnComplete: func(_ any, err error) { failed = err }})
	}, 0)
	env.ExecuteWorkflow(correspondence.PrefillWorkflow, correspondence.PrefillInput{MessageID: "a6", VisibleAt: env.Now().Add(time.Hour)})
	require.NoError(t, env.GetWorkflowError())
	var stage string
	require.NoError(t, env.GetWorkflowResult(&stage))
	assert.Equal(t, correspondence.PrefillAbandoned, stage)
	assert.Error(t, failed)
}

// The baseline history, recorded by api's TestScheduledPrefilledFormTask with
// POSTBOX_RECORD_HISTORY=correspondence/testdata/prefill-baseline.json: the check, the wait for
// VisibleDateTime, the creation, the notification order and the due timer. The current code must replay
// it, so pre-fills waiting during an upgrade go on.
func TestPrefillReplaysTheBaselineHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(correspondence.PrefillWorkflow, workflow.RegisterOptions{Name: correspondence.PrefillWorkflowName})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(temporaltest.QuietLogger(), "testdata/prefill-baseline.json"))
}
