package formtask_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/internal/temporaltest"
)

// A purge run asks the activity to purge what was deleted more than the retention before the run's start,
// in the local time the store keeps, and returns what it purged.
func TestTrashbinPurge(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	start := time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)
	env.SetStartTime(start)
	var asked formtask.PurgeTrashbinActivityInput
	env.RegisterActivityWithOptions(func(_ context.Context, in formtask.PurgeTrashbinActivityInput) (int, error) {
		asked = in
		return 7, nil
	}, activity.RegisterOptions{Name: "PurgeTrashbin"})

	env.ExecuteWorkflow(formtask.TrashbinPurge, formtask.PurgeTrashbinInput{Retention: 30 * 24 * time.Hour})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var purged int
	require.NoError(t, env.GetWorkflowResult(&purged))
	assert.Equal(t, 7, purged)
	assert.Equal(t, clock.Local(start).Add(-30*24*time.Hour), asked.Before)
}
