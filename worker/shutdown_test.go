package worker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// On stop (SIGTERM) a worker polls no more, but an activity it is running finishes and reports within
// the stop timeout: the archive (a local activity, in its workflow task) that was under way when the stop
// began is not cancelled, not retried, and its workflow task completes: the submission is answered.
func TestStopLetsRunningActivitiesFinish(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	c := dial(t, devServer.FrontendHostPort(), nsShutdown)
	acts, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	require.NoError(t, err)
	t.Cleanup(acts.Schemas.Close)
	ws := worker.New(c, acts, worker.Options{StopTimeout: time.Minute})

	var (
		runs           atomic.Int32 // archive attempts, on this worker and the next
		cancelledAtEnd atomic.Bool
		started        = make(chan struct{}, 1)
		finished       = make(chan struct{})
	)
	archiveOpts := activity.RegisterOptions{Name: "CheckAndArchive", DisableAlreadyRegisteredCheck: true}
	ws.RegisterActivityWithOptions(func(ctx context.Context, in formtask.CheckAndArchiveInput) (formtask.CheckAndArchiveResult, error) {
		defer close(finished)
		runs.Add(1)
		started <- struct{}{}
		select {
		case <-activity.GetWorkerStopChannel(ctx): // the stop has begun while this runs
		case <-time.After(time.Minute):
		}
		res, err := acts.CheckAndArchive(ctx, in)
		cancelledAtEnd.Store(ctx.Err() != nil)
		return res, err
	}, archiveOpts)
	require.NoError(t, ws.Start())

	ft := formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)})
	type outcome struct {
		res formtask.Result
		err error
	}
	done := make(chan outcome, 1)
	task, sub := load(t, ft, "a3101102"), submission(t, pool, "a3101102", true, true)
	go func() {
		res, err := ft.Submit(ctx, task, signer, sub)
		done <- outcome{res, err}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the archive did not start")
	}
	ws.Stop() // returns once the running archive has finished and reported
	<-finished
	assert.False(t, cancelledAtEnd.Load(), "the running activity was not cancelled")

	// The next worker would take the workflow task again, and a retry of the archive, had the stopped one
	// not completed it.
	startWorker(t, c, pool, func(r sdkworker.Registry, a *formtask.Activities) {
		r.RegisterActivityWithOptions(func(ctx context.Context, in formtask.CheckAndArchiveInput) (formtask.CheckAndArchiveResult, error) {
			runs.Add(1)
			return a.CheckAndArchive(ctx, in)
		}, archiveOpts)
	})
	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the submission did not finish")
	}
	require.NoError(t, o.err)
	assert.Equal(t, formtask.OutcomeArchived, o.res.Outcome)
	assert.Equal(t, int32(1), runs.Load(), "the archive ran once: its result was reported, not retried")
}

// A process polls the task queues of its configured queue groups only.
func TestQueueGroups(t *testing.T) {
	acts := &formtask.Activities{}
	assert.Equal(t, []string{formtask.TaskQueue, formtask.TaskQueueValidation, formtask.TaskQueueArchive},
		worker.New(devServer.Client(), acts, worker.Options{}).TaskQueues(), "all by default")
	assert.Equal(t, []string{formtask.TaskQueueValidation},
		worker.New(devServer.Client(), acts, worker.Options{Queues: []string{config.QueueValidation}}).TaskQueues())
	for _, g := range config.QueueGroups {
		assert.NotEmpty(t, worker.TaskQueueOf(g), g)
	}
	assert.Empty(t, worker.TaskQueueOf("print"))
}
