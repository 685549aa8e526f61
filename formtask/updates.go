// How the service reaches a task's workflow: UpdateWithStart, waiting as long as the update runs while
// Temporal answers, a resync when the workflow is behind its read model, and typed errors for the API.

package formtask

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/internal/every"
)

// update sends an update to the task's workflow, starting the workflow if it is not running, and waits for
// the result. When the update fails, the revision it referred to is deleted.
func (s *Service) update(ctx context.Context, task Task, revisionID int64, name string, arg any) (Result, error) {
	res, err := s.send(ctx, task, revisionID, name, arg)
	if err != nil && revisionID != 0 {
		// The request's context may be what ended; the cleanup must still run.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.store.DeleteRevision(cctx, task.MessageID, revisionID) // else DeleteStaleRevisions does it
	}
	if err != nil {
		return Result{}, err
	}
	switch res.Outcome {
	case OutcomeInvalid:
		e := refuse(Invalid, "the form task did not pass validation; nothing was changed")
		e.Validation = res.Validation
		return res, e
	case OutcomeSignRefused:
		return res, refuse(SignRefused,
			"signing needs the Sign right on the service and its security level; the form task is in %s", res.Status)
	}
	return res, nil
}

func (s *Service) send(ctx context.Context, task Task, revisionID int64, name string, arg any) (Result, error) {
	ctx, giveUp := context.WithCancelCause(ctx)
	defer giveUp(nil)
	go s.watchServer(ctx, giveUp)
	res, err := s.sendUpdate(ctx, task, name, arg)
	if err != nil && behindReadModel(err, task) {
		// An update Temporal lost after its local activity committed left the run behind the read model: it
		// takes the read model's state (UpdateResync), and the change goes once more to the run
		// still going; one that ended, archived or deleted, must not be started again for it.
		r, rerr := s.sendUpdate(ctx, task, UpdateResync, ResyncInput{})
		switch {
		case rerr != nil || r.Outcome == OutcomeInSync:
		case r.Outcome == OutcomePurged:
			err = temporal.NewNonRetryableApplicationError("the form task was deleted for good", ErrPurged, nil)
		case r.Status == taskstatus.Archived:
			err = temporal.NewNonRetryableApplicationError("the form task is sent and archived ("+r.ArchiveReference+")",
				ErrTaskArchived, nil, r.ArchiveReference)
		case revisionID != 0 && s.revisionGone(ctx, revisionID):
			// The run refused the change and discarded its content: the client sends it again, now to a
			// run in step with the read model (chaos met the change sent again without its revision).
			return Result{}, refuse(Unavailable, "the form task was catching up with a change that went through; send this one again")
		default:
			res, err = s.sendUpdate(ctx, task, name, arg)
		}
	}
	if err != nil {
		return Result{}, updateError(ctx, task, err)
	}
	return res, nil
}

// revisionGone tells whether a revision the run refused has been discarded (an error reads as gone: the
// change is then sent again by its client rather than without its content).
func (s *Service) revisionGone(ctx context.Context, id int64) bool {
	_, err := s.store.GetRevision(ctx, id)
	return err != nil
}

// sendUpdate sends one update to the task's workflow, starting the workflow if it is not running, and
// waits for its result.
func (s *Service) sendUpdate(ctx context.Context, task Task, name string, arg any) (Result, error) {
	// A run started with its search attributes and memo need not write them again (publish).
	state := startState(task)
	start := s.temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       WorkflowID(task.MessageID),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    temporal.NewSearchAttributes(state.SearchAttributes()...),
		Memo:                     state.Memo(),
	}, FormTask, state)
	h, err := s.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName:   name,
			Args:         []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = h.Get(ctx, &res)
	return res, err
}

// behindReadModel tells whether the workflow refused a change for a state the task as loaded from the read
// model does not have. A precondition the API checked against the read model fails in the workflow only so
// (or when a change came in between, and then the resync finds nothing to take).
func behindReadModel(err error, task Task) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return false
	}
	switch appErr.Type() {
	case ErrPrecondition:
		return true
	case ErrInTrashbin:
		return !task.InTrashbin
	case ErrNotInTrashbin:
		return task.InTrashbin
	case ErrWrongState:
		var status string
		return appErr.HasDetails() && appErr.Details(&status) == nil && status != task.Status
	}
	return false
}

// errUnreachable is why a change is given up when the Temporal server does not answer.
var errUnreachable = errors.New("the Temporal server does not answer")

// watchServer gives up the change of ctx (giveUp(errUnreachable)) when the Temporal server does not answer
// while the change waits: every ConnectTimeout it asks the server for its health, with that timeout. It
// returns when ctx ends. An Update done within ConnectTimeout costs no health check.
func (s *Service) watchServer(ctx context.Context, giveUp context.CancelCauseFunc) {
	every.Tick(ctx, s.opts.ConnectTimeout, func() bool {
		hctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
		_, err := s.temporal.CheckHealth(hctx, &client.CheckHealthRequest{})
		cancel()
		if err != nil && ctx.Err() == nil {
			giveUp(fmt.Errorf("%w: %w", errUnreachable, err))
			return false
		}
		return true
	})
}
