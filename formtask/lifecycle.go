package formtask

import (
	"context"

	"github.com/postbox/postbox/workflows"
)

// ChangePlace moves a form task in progress to the trashbin, back, or deletes it for good
// (workflows.UpdateTrash, UpdateRestore, UpdatePurge) through its workflow, which makes the change with
// the audit entry in.Audit and keeps its own state with it. Refusals: Forbidden without the Delete right,
// InTrashbin and NotInTrashbin where the task is not, Conflict (with its ArchiveReference) once the task is
// archived, whose place is no longer the workflow's; NotFound once it was deleted for good.
func (s *Service) ChangePlace(ctx context.Context, task Task, change string, in workflows.PlaceInput) (workflows.Result, error) {
	in.Caller = withLevel(in.Caller, task)
	return s.update(ctx, task, 0, change, in)
}
