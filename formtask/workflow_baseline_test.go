package formtask_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uber-go/tally/v4"
	"go.temporal.io/sdk/activity"
	contribtally "go.temporal.io/sdk/contrib/tally"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/internal/temporaltest"
)

// The baseline history, recorded on the real dev server by worker's TestLifeOfATask with
// POSTBOX_RECORD_HISTORY=formtask/testdata/formtask-baseline.json: validate, save, an attachment, an invalid
// one, the attachment deleted, print, to the trashbin, restored, an invalid submission, to signing, signed
// and archived. The current code must replay it, so workflows running during an upgrade go on; a change of
// the workflow's commands that breaks it needs a GetVersion patch (docs/formtasks.md).
func TestReplaysTheBaselineHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(formtask.FormTask, workflow.RegisterOptions{Name: "FormTask"})
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(logger, "testdata/formtask-baseline.json"))
}

// The print, the only remote activity of a task, is scheduled with a HeartbeatTimeout, so a dead worker's
// attempt moves on within seconds; the archive is local.
func TestPrintHeartbeats(t *testing.T) {
	env, _ := newEnv(t)
	var mu sync.Mutex
	heartbeats := map[string]time.Duration{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		heartbeats[info.ActivityType.Name] = info.HeartbeatTimeout
	})
	send(env, time.Minute, formtask.UpdatePrint, formtask.ReadInput{Caller: writer})
	send(env, 2*time.Minute, formtask.UpdateSubmit, submit(writer, false, true, rev))
	send(env, 3*time.Minute, formtask.UpdateSubmit, submit(signer, true, true, formtask.RevisionRef{ID: 2, Digest: rev.Digest}))
	run(env, taskstatus.Filling)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, map[string]time.Duration{"RenderPrint": formtask.HeartbeatTimeout}, heartbeats)
}

// The short activities run locally, in the workflow task (the checks with the projection as one,
// CheckAndProject, a submission's checks with its archive as one, CheckAndArchive, and DiscardRevision);
// the PDF-rendering print goes to the queue of its group.
func TestShortActivitiesRunLocallyAndLongOnesOnTheirQueue(t *testing.T) {
	env, _ := newEnv(t)
	var mu sync.Mutex
	queues := map[string]string{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		queues[info.ActivityType.Name] = info.TaskQueue
	})
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		mu.Lock()
		defer mu.Unlock()
		queues[info.ActivityType.Name] = "local"
	})
	send(env, time.Minute, formtask.UpdateValidate, formtask.ReadInput{Caller: writer})
	send(env, 2*time.Minute, formtask.UpdatePrint, formtask.ReadInput{Caller: writer})
	send(env, 3*time.Minute, formtask.UpdateSubmit, submit(writer, false, true, rev))
	send(env, 4*time.Minute, formtask.UpdateSubmit, submit(writer, true, true, formtask.RevisionRef{ID: 2, Digest: rev.Digest}))
	send(env, 5*time.Minute, formtask.UpdateSubmit, submit(writer, true, true, formtask.RevisionRef{ID: 3, Digest: rev.Digest}))
	send(env, 6*time.Minute, formtask.UpdateSubmit, submit(signer, true, true, formtask.RevisionRef{}))
	run(env, taskstatus.Filling)
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, map[string]string{
		"CheckAndProject": "local",
		"RenderPrint":     formtask.TaskQueueValidation,
		"CheckAndArchive": "local",
		"DiscardRevision": "local",
	}, queues)
}

// A submission's local archive whose attempt archived but never answered (its worker died) is tried again:
// the update answers with the archive, and the run ends.
func TestLostLocalArchiveIsRetried(t *testing.T) {
	env, f := newEnv(t)
	f.lostArchives = 2
	o := send(env, time.Minute, formtask.UpdateSubmit, submit(signer, true, true, rev))
	run(env, taskstatus.Filling)

	require.NoError(t, env.GetWorkflowError(), "an archived task's workflow ends")
	require.NoError(t, o.err)
	assert.Equal(t, formtask.OutcomeArchived, o.res.Outcome)
	assert.Equal(t, "AR7000001", o.res.ArchiveReference)
	assert.Equal(t, []string{"Archive 1", "Archive 1", "Archive 1"}, slices.DeleteFunc(f.Calls(), func(c string) bool {
		return !strings.HasPrefix(c, "Archive")
	}), "three attempts")
}

// Every status change is counted once, by from and to, through the SDK's metrics handler.
func TestTransitionsAreCounted(t *testing.T) {
	scope := tally.NewTestScope("", nil)
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	s.SetMetricsHandler(contribtally.NewMetricsHandler(scope))
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	(&fakeActivities{}).register(env)
	send(env, time.Minute, formtask.UpdateSubmit, submit(writer, false, true, rev))
	send(env, 2*time.Minute, formtask.UpdateSubmit, submit(writer, true, false, rev))
	send(env, 3*time.Minute, formtask.UpdateSubmit, submit(signer, true, true, formtask.RevisionRef{}))
	run(env, taskstatus.Filling)
	require.NoError(t, env.GetWorkflowError())

	var got []string
	for _, c := range scope.Snapshot().Counters() {
		if c.Name() == formtask.MetricTransitions {
			got = append(got, fmt.Sprintf("%s -> %s: %d", c.Tags()["from"], c.Tags()["to"], c.Value()))
		}
	}
	sort.Strings(got)
	assert.Equal(t, []string{"Signering -> Sendt og arkivert: 1", "Utfylling -> Signering: 1"}, got)
}

// A run that takes a state from the read model is counted, as is the transition it makes so; one in step
// is not.
func TestResyncsAreCounted(t *testing.T) {
	scope := tally.NewTestScope("", nil)
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	s.SetMetricsHandler(contribtally.NewMetricsHandler(scope))
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	f := &fakeActivities{readModel: formtask.ReadModelState{Found: true, Status: taskstatus.Signing, Revision: 7}}
	f.register(env)
	send(env, time.Minute, formtask.UpdateResync, formtask.ResyncInput{})
	send(env, 2*time.Minute, formtask.UpdateResync, formtask.ResyncInput{})
	run(env, taskstatus.Filling)

	counts := map[string]int64{}
	for _, c := range scope.Snapshot().Counters() {
		counts[c.Name()] += c.Value()
	}
	assert.Equal(t, int64(1), counts[formtask.MetricResyncs])
	assert.Equal(t, int64(1), counts[formtask.MetricTransitions])
}
