package formtask

import (
	"context"
	"errors"
	"log/slog"

	"github.com/postbox/postbox/store"
)

// ChangePlace moves a form task in progress to the trashbin, back, or deletes it for good
// (UpdateTrash, UpdateRestore, UpdatePurge) through its workflow, which makes the change with
// the audit entry in.Audit and keeps its own state with it. Refusals: Forbidden without the Delete right,
// InTrashbin and NotInTrashbin where the task is not, Conflict (with its ArchiveReference) once the task is
// archived, whose place is no longer the workflow's; NotFound once it was deleted for good.
func (s *Service) ChangePlace(ctx context.Context, task Task, change string, in PlaceInput) (Result, error) {
	in.Caller = withLevel(in.Caller, task)
	return s.update(ctx, task, 0, change, in)
}

// endRun ends the workflow of a new task whose message was removed again (its first content was refused),
// so that no workflow is left running for a task that never existed for the client: a place change finds
// the message gone, and the run ends (ErrPurged). A message still there (the removal found it
// changed) is left alone. It waits at most ConnectTimeout and logs what it could not do; the request is
// refused either way.
func (s *Service) endRun(ctx context.Context, task Task) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ConnectTimeout)
	defer cancel()
	if _, err := s.store.GetFormTask(ctx, task.MessageID); !errors.Is(err, store.ErrNotFound) {
		return
	}
	_, err := s.ChangePlace(ctx, task, UpdateTrash, PlaceInput{Caller: Caller{Name: "Postbox", ID: "formtask", Delete: true}})
	if e := (*Error)(nil); !errors.As(err, &e) || e.Kind != NotFound {
		slog.WarnContext(ctx, "ending the workflow of a refused new form task failed", "err", err, "message", task.MessageID)
	}
}
