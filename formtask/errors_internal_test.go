package formtask

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/serviceerror"
)

// An Update refused because the workflow's task failed (and is being retried) is a moment's outage, 503
// with Retry-After, not a 500: chaos met it after a worker died in a workflow task.
func TestAWorkflowNotReadyIsUnavailable(t *testing.T) {
	err := updateError(context.Background(), Task{}, serviceerror.NewWorkflowNotReady(
		"Unable to perform workflow execution update due to Workflow Task in failed state."))
	var refused *Error
	assert.ErrorAs(t, err, &refused)
	assert.Equal(t, Unavailable, refused.Kind)
}
