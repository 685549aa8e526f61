// Package child starts child workflows that outlive their parents.
package child

import (
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// StartAbandoned starts workflow name with in as a child of the calling workflow that outlives it, under
// id on taskQueue, and waits only for the start; one already started (before a worker crashed) counts as
// started.
func StartAbandoned(ctx workflow.Context, id, taskQueue, name string, in any) error {
	c := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id, TaskQueue: taskQueue,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON})
	err := workflow.ExecuteChildWorkflow(c, name, in).GetChildWorkflowExecution().Get(ctx, nil)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if errors.As(err, &started) {
		return nil
	}
	return err
}
