package notification

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/postbox/postbox/internal/temporaltest"
)

func newWorkflowEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := temporaltest.Unhurried(suite.NewTestWorkflowEnvironment())
	env.RegisterWorkflow(OrderWorkflow)
	var a *Activities
	env.RegisterActivity(a.SendBatch)
	env.RegisterActivity(a.GiveUp)
	return env
}

// The notice waits for SendAt, each round is split in batches of BatchSize, and each reminder waits its
// interval after the round before.
func TestOrderWorkflowSendsEachRoundInBatchesOnTimers(t *testing.T) {
	env := newWorkflowEnv(t)
	start := env.Now()
	var mu sync.Mutex
	var calls []BatchInput
	var at []time.Duration
	var a *Activities
	env.OnActivity(a.SendBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, in BatchInput) (BatchResult, error) {
		mu.Lock()
		defer mu.Unlock()
		calls, at = append(calls, in), append(at, env.Now().Sub(start))
		return BatchResult{Sent: in.To - in.From}, nil
	})
	env.ExecuteWorkflow(OrderWorkflow, WorkflowInput{OrderID: "o", Recipients: 2*BatchSize + 1, SendAt: start.Add(time.Hour),
		ReminderEvery: 48 * time.Hour, Reminders: 2})
	require.NoError(t, env.GetWorkflowError())
	var p Progress
	require.NoError(t, env.GetWorkflowResult(&p))
	assert.Equal(t, Progress{Round: 2, Sent: 3 * (2*BatchSize + 1)}, p)
	require.Len(t, calls, 9)
	for i, c := range calls {
		round := i / 3
		assert.Equal(t, round, c.Round)
		assert.Equal(t, time.Hour+time.Duration(round)*48*time.Hour, at[i].Round(time.Minute), "call %d", i)
	}
	for i := range calls {
		calls[i].StartedAt = time.Time{}
	}
	assert.ElementsMatch(t, []BatchInput{{OrderID: "o", From: 0, To: BatchSize}, {OrderID: "o", From: BatchSize, To: 2 * BatchSize},
		{OrderID: "o", From: 2 * BatchSize, To: 2*BatchSize + 1}}, calls[:3])
}

// A batch whose sends keep failing is dead-lettered by GiveUp once its retries are spent; the other
// batches and the next rounds go on.
func TestOrderWorkflowGivesUpOnABatchWhoseRetriesAreSpent(t *testing.T) {
	env := newWorkflowEnv(t)
	var a *Activities
	env.OnActivity(a.SendBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, in BatchInput) (BatchResult, error) {
		if in.From == 0 && in.Round == 0 {
			return BatchResult{}, errors.New("the mail server did not take it")
		}
		return BatchResult{Sent: in.To - in.From}, nil
	})
	env.OnActivity(a.GiveUp, mock.Anything, mock.Anything).Return(BatchResult{Failed: BatchSize}, nil).Once()
	env.ExecuteWorkflow(OrderWorkflow, WorkflowInput{OrderID: "o", Recipients: BatchSize + 10, ReminderEvery: time.Hour, Reminders: 1})
	require.NoError(t, env.GetWorkflowError())
	var p Progress
	require.NoError(t, env.GetWorkflowResult(&p))
	assert.Equal(t, Progress{Round: 1, Sent: 10 + BatchSize + 10, Failed: BatchSize}, p)
	env.AssertExpectations(t)
}

// A workflow whose order never committed (the request that started it failed after the start) ends
// without sending, once SendBatch gives up waiting for the order's row.
func TestOrderWorkflowEndsWhenItsOrderWasNeverStored(t *testing.T) {
	env := newWorkflowEnv(t)
	var a *Activities
	env.OnActivity(a.SendBatch, mock.Anything, mock.Anything).Return(BatchResult{},
		temporal.NewNonRetryableApplicationError("the order was never stored", noOrderType, nil))
	env.ExecuteWorkflow(OrderWorkflow, WorkflowInput{OrderID: "o", Recipients: 3 * BatchSize, Reminders: 2, ReminderEvery: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	var p Progress
	require.NoError(t, env.GetWorkflowResult(&p))
	assert.Equal(t, Progress{}, p)
	env.AssertNotCalled(t, "GiveUp", mock.Anything, mock.Anything)
}
