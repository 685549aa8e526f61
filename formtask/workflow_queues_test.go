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

// Histories recorded on the real dev server with the workflow as it was before each versioned change:
// formtask-v0 before the task queues were split (every activity on postbox-formtasks, the checks as local
// activities) — submit, validate, sub-form, attachment, print, an invalid submission (discarded revision),
// to signing, signed and archived; formtask-v1 after the split, before heartbeats (VersionHeartbeats) —
// submit, validate, attachment, print, an invalid submission, to signing, signed and archived; formtask-v2
// with heartbeats, before the local checks and projection (VersionLocalWork) — validate, save, attachment,
// print, an invalid submission, to signing, signed and archived; formtask-v2-lifecycle of the same code
// with the place updates (VersionLifecycle, ChangePlace on postbox-archive) — a draft, to the trashbin,
// restored, to signing, to the trashbin, restored, to the trashbin and deleted for good; formtask-v3-lifecycle
// the same with the local work (ChangePlace a local activity); formtask-v4-lean with VersionLeanHistory
// (worker's TestLifeOfATask with POSTBOX_RECORD_HISTORY) — validate, save, an attachment, an invalid one,
// the attachment deleted, print, to the trashbin, restored, to signing, signed and archived;
// formtask-v5-local-archive with version 2 of it (CheckAndArchive), the same with an invalid submission to
// the archive before the one to signing; formtask-v5-resync (worker's TestLostUpdatesAreResynced) the
// updates of a task whose save, move to signing and archive were each lost after their local activity
// committed, each followed by the resync (UpdateResync) that took the read model's state. The current code must replay them, so workflows running during an
// upgrade go on.
func TestReplaysRecordedHistories(t *testing.T) {
	for _, file := range []string{"testdata/formtask-v0.json", "testdata/formtask-v1.json", "testdata/formtask-v2.json",
		"testdata/formtask-v2-lifecycle.json", "testdata/formtask-v3-lifecycle.json", "testdata/formtask-v4-lean.json", "testdata/formtask-v5-local-archive.json",
		"testdata/formtask-v5-resync.json"} {
		t.Run(file, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(formtask.FormTask, workflow.RegisterOptions{Name: "FormTask"})
			logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(logger, file))
		})
	}
}

// leanVersions are the versions of VersionLeanHistory a run may have begun with: runs at version 1 keep
// Archive on the archive queue.
var leanVersions = []workflow.Version{1, 2}

// onLean makes env's run take version v of VersionLeanHistory.
func onLean(env *testsuite.TestWorkflowEnvironment, v workflow.Version) {
	env.OnGetVersion(formtask.VersionLeanHistory, workflow.DefaultVersion, 2).Return(v)
}

// Runs schedule the long (remote) activities with a HeartbeatTimeout, so a dead worker's attempt moves on
// within seconds; from version 2 of VersionLeanHistory the archive is local.
func TestLongActivitiesHeartbeat(t *testing.T) {
	for _, v := range leanVersions {
		t.Run(fmt.Sprint("lean version ", v), func(t *testing.T) {
			env, _ := newEnv(t)
			onLean(env, v)
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

			want := map[string]time.Duration{formtask.ActivityRenderPrint: formtask.HeartbeatTimeout}
			if v == 1 {
				want[formtask.ActivityArchive] = formtask.HeartbeatTimeout
			}
			assert.Equal(t, want, heartbeats)
		})
	}
}

// New runs run the short activities locally, in the workflow task (the checks with the projection as one,
// CheckAndProject, a submission's checks with its archive as one, CheckAndArchive, and DiscardRevision),
// and put the PDF-rendering print on the queue of its group; runs at version 1 of VersionLeanHistory put
// Archive on the archive queue.
func TestShortActivitiesRunLocallyAndLongOnesOnTheirQueue(t *testing.T) {
	for _, v := range leanVersions {
		t.Run(fmt.Sprint("lean version ", v), func(t *testing.T) {
			env, _ := newEnv(t)
			onLean(env, v)
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

			want := map[string]string{
				formtask.ActivityCheckAndProject: "local",
				formtask.ActivityRenderPrint:     formtask.TaskQueueValidation,
				formtask.ActivityCheckAndArchive: "local",
				formtask.ActivityDiscardRevision: "local",
			}
			if v == 1 {
				delete(want, formtask.ActivityCheckAndArchive)
				want[formtask.ActivityArchive] = formtask.TaskQueueArchive
			}
			assert.Equal(t, want, queues)
		})
	}
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
		return !strings.HasPrefix(c, formtask.ActivityArchive)
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
