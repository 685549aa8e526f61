package correspondence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/internal/temporaltest"
)

// steps records when (in workflow time) each activity of a shipment ran.
type steps struct {
	env      *testsuite.TestWorkflowEnvironment
	batches  []time.Time
	after    []int // each batch's After
	overdue  []time.Time
	purges   []time.Time
	toCreate int // messages the batches make, BatchSize at a time
	toPurge  int
}

func newShipmentEnv(t *testing.T, toCreate, toPurge int) *steps {
	var s testsuite.WorkflowTestSuite
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	env.SetStartTime(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	st := &steps{env: env, toCreate: toCreate, toPurge: toPurge}
	a := &correspondence.Activities{}
	env.RegisterActivity(a.CreateBatch)
	env.RegisterActivity(a.MarkOverdue)
	env.RegisterActivity(a.PurgeBatch)
	env.OnActivity(a.CreateBatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in correspondence.BatchInput) (correspondence.BatchResult, error) {
			st.batches = append(st.batches, env.Now())
			st.after = append(st.after, in.After)
			n := min(st.toCreate, correspondence.BatchSize)
			st.toCreate -= n
			return correspondence.BatchResult{Created: n, Last: in.After + n}, nil
		})
	env.OnActivity(a.MarkOverdue, mock.Anything, mock.Anything).Return(func(context.Context, string) error {
		st.overdue = append(st.overdue, env.Now())
		return nil
	})
	env.OnActivity(a.PurgeBatch, mock.Anything, mock.Anything).Return(func(context.Context, string) (int, error) {
		st.purges = append(st.purges, env.Now())
		n := min(st.toPurge, correspondence.BatchSize)
		st.toPurge -= n
		return n, nil
	})
	return st
}

func (st *steps) run(t *testing.T, in correspondence.WorkflowInput) correspondence.Progress {
	t.Helper()
	st.env.ExecuteWorkflow(correspondence.ShipmentWorkflow, in)
	require.True(t, st.env.IsWorkflowCompleted())
	require.NoError(t, st.env.GetWorkflowError())
	var p correspondence.Progress
	require.NoError(t, st.env.GetWorkflowResult(&p))
	return p
}

// Without dates a shipment makes its messages at once, a batch at a time until a batch is not full, and
// ends.
func TestShipmentWithoutDates(t *testing.T) {
	st := newShipmentEnv(t, 2*correspondence.BatchSize+3, 0)
	start := st.env.Now()
	p := st.run(t, correspondence.WorkflowInput{ShipmentID: "s1"})
	assert.Equal(t, correspondence.Progress{Stage: correspondence.StageCreated, Created: 2*correspondence.BatchSize + 3}, p)
	require.Len(t, st.batches, 3)
	assert.Equal(t, start, st.batches[0], "no wait")
	assert.Equal(t, []int{0, correspondence.BatchSize, 2 * correspondence.BatchSize}, st.after, "each batch goes on where the last ended")
	assert.Empty(t, st.overdue)
	assert.Empty(t, st.purges)
}

// The messages appear at VisibleDateTime, the unconfirmed ones are marked overdue at DueDateTime, and all
// are purged at AllowSystemDeleteDateTime: each on its durable timer, in that order.
func TestShipmentRunsItsDatesOnTimers(t *testing.T) {
	st := newShipmentEnv(t, 10, correspondence.BatchSize+1)
	start := st.env.Now()
	in := correspondence.WorkflowInput{ShipmentID: "s2", ConfirmationNeeded: true,
		VisibleAt: start.Add(time.Hour), DueAt: start.Add(30 * 24 * time.Hour), AllowSystemDeleteAt: start.Add(365 * 24 * time.Hour)}
	p := st.run(t, in)
	assert.Equal(t, correspondence.StagePurged, p.Stage)
	require.Len(t, st.batches, 1)
	assert.False(t, st.batches[0].Before(in.VisibleAt), "made before VisibleDateTime")
	require.Len(t, st.overdue, 1)
	assert.False(t, st.overdue[0].Before(in.DueAt))
	require.Len(t, st.purges, 2, "a batch at a time until one is not full")
	assert.False(t, st.purges[0].Before(in.AllowSystemDeleteAt))
}

// Only a correspondence that asks for confirmation can be overdue.
func TestShipmentWithoutConfirmationIsNeverOverdue(t *testing.T) {
	st := newShipmentEnv(t, 1, 0)
	p := st.run(t, correspondence.WorkflowInput{ShipmentID: "s3", DueAt: st.env.Now().Add(time.Hour)})
	assert.Equal(t, correspondence.StageCreated, p.Stage)
	assert.Empty(t, st.overdue)
}

// A VisibleDateTime already past does not wait.
func TestShipmentVisibleInThePast(t *testing.T) {
	st := newShipmentEnv(t, 1, 0)
	start := st.env.Now()
	st.run(t, correspondence.WorkflowInput{ShipmentID: "s4", VisibleAt: start.Add(-time.Hour)})
	require.Len(t, st.batches, 1)
	assert.Equal(t, start, st.batches[0])
}

// A shipment whose request never committed ends quietly when its first batch finds no shipment; an error
// of the database is retried, not taken for that.
func TestShipmentNeverStored(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	a := &correspondence.Activities{}
	env.RegisterActivity(a.CreateBatch)
	calls := 0
	env.OnActivity(a.CreateBatch, mock.Anything, mock.Anything).Return(
		func(context.Context, correspondence.BatchInput) (correspondence.BatchResult, error) {
			calls++
			if calls == 1 {
				return correspondence.BatchResult{}, errors.New("the database is away")
			}
			return correspondence.BatchResult{}, temporal.NewNonRetryableApplicationError("never stored", "NoShipment", nil)
		})
	env.ExecuteWorkflow(correspondence.ShipmentWorkflow, correspondence.WorkflowInput{ShipmentID: "s5"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var p correspondence.Progress
	require.NoError(t, env.GetWorkflowResult(&p))
	assert.Equal(t, correspondence.StageAbandoned, p.Stage)
	assert.Equal(t, 2, calls)
}
