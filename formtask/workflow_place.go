package formtask

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/formtask/taskstatus"
)

// The life of a form task in progress in the mailbox: to the trashbin, back, and deleted for good. Its
// workflow owns the task, so these changes are updates of it like a submission, one at a time under its
// mutex: the read model changes in the workflow's activity (ChangePlace, one transaction with its audit
// entry) and the workflow's state with it, so the two never disagree. A task in the trashbin keeps its
// status and refuses every change of its content (ErrInTrashbin); deleted for good, its workflow ends.
// A sent and archived task has no running workflow: the API changes its place in a plain transaction.

// Update names of the place of a task.
const (
	UpdateTrash   = "trash"   // DELETE message: to the trashbin
	UpdateRestore = "restore" // PUT restore: back into the mailbox, in the status it had
	UpdatePurge   = "purge"   // DELETE trashbin/{id}, or the scheduled purge: deleted for good
)

// Error types of refused place changes (and of content changes of a task in the trashbin).
const (
	ErrInTrashbin    = "InTrashbin"    // the task is in the trashbin
	ErrNotInTrashbin = "NotInTrashbin" // restore or purge of a task in the mailbox
	ErrPurged        = "Purged"        // the task was deleted for good; its workflow is ending
)

// Outcomes of the place updates.
const (
	OutcomeTrashed  Outcome = "Trashed"  // now in the trashbin
	OutcomeRestored Outcome = "Restored" // back in the mailbox
	OutcomePurged   Outcome = "Purged"   // deleted for good
	OutcomeNotDue   Outcome = "NotDue"   // a scheduled purge found it deleted too recently: kept
)

// PlaceInput is a change of a task's place. Audit is the entry the change writes (who, when, from which
// request, what), in the transaction of the change.
type PlaceInput struct {
	Caller Caller
	Audit  audit.Entry
	// DeletedBefore, set by the scheduled purge, purges the task only if it went to the trashbin before.
	DeletedBefore time.Time `json:",omitempty"`
	// Expect, when set, refuses the change (ErrPrecondition) unless the task is as expected.
	Expect *Expectation `json:",omitempty"`
}

// ChangePlaceInput asks ChangePlace for one change (UpdateTrash, UpdateRestore or UpdatePurge) of
// a message: made only if the message is where the change takes it from (a retried attempt finds it done).
type ChangePlaceInput struct {
	MessageID     string
	Change        string
	Audit         audit.Entry
	DeletedBefore time.Time `json:",omitempty"`
}

// ChangePlaceResult says what ChangePlace found: Changed when it made the change now, Gone when the
// message no longer exists.
type ChangePlaceResult struct {
	Changed bool
	Gone    bool
}

// placeChanges are the place updates with what each needs of the task: in the trashbin or not.
var placeChanges = []struct {
	name       string
	inTrashbin bool
}{
	{UpdateTrash, false},
	{UpdateRestore, true},
	{UpdatePurge, true},
}

func (t *task) registerPlaceChanges(ctx workflow.Context) error {
	for _, p := range placeChanges {
		name, inTrashbin := p.name, p.inTrashbin
		validate := func(_ workflow.Context, in PlaceInput) error { return t.validatePlace(name, inTrashbin, in) }
		handle := func(ctx workflow.Context, in PlaceInput) (Result, error) {
			return t.changePlace(ctx, name, func() error { return t.validatePlace(name, inTrashbin, in) }, in)
		}
		if err := workflow.SetUpdateHandlerWithOptions(ctx, name, handle, workflow.UpdateHandlerOptions{Validator: validate}); err != nil {
			return err
		}
	}
	return nil
}

// validatePlace refuses a place change the caller may not make (Delete on the service) or the task's
// place does not allow; an archived task is refused as for every change, with its ArchiveReference.
func (t *task) validatePlace(change string, inTrashbin bool, in PlaceInput) error {
	if err := t.gone(); err != nil {
		return err
	}
	if !in.Caller.Delete {
		return reject(ErrForbidden, "the caller may not delete or restore messages of service %s/%d for this reportee",
			t.state.ServiceCode, t.state.ServiceEdition)
	}
	if t.state.Status == taskstatus.Archived {
		return t.state.archived()
	}
	if err := t.checkExpected(in.Expect); err != nil {
		return err
	}
	switch {
	case inTrashbin && !t.state.InTrashbin:
		return reject(ErrNotInTrashbin, "the form task is in the mailbox, not in the trashbin; %s is for a task in the trashbin", change)
	case !inTrashbin && t.state.InTrashbin:
		return t.state.inTrashbinRefusal()
	}
	return nil
}

// changePlace makes a place change under the task's mutex, validated again now that it holds it.
func (t *task) changePlace(ctx workflow.Context, change string, validate func() error, in PlaceInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := validate(); err != nil {
		return Result{}, err
	}
	var r ChangePlaceResult
	err := local(ctx, acts.ChangePlace, ChangePlaceInput{
		MessageID: t.state.MessageID, Change: change, Audit: in.Audit, DeletedBefore: in.DeletedBefore,
	}).Get(ctx, &r)
	if err != nil {
		return Result{}, err
	}
	if r.Gone {
		t.purged = true
		return Result{}, t.gone()
	}
	res := Result{Status: t.state.Status}
	switch change {
	case UpdateTrash:
		t.state.InTrashbin, res.Outcome = true, OutcomeTrashed
	case UpdateRestore:
		t.state.InTrashbin, res.Outcome = false, OutcomeRestored
	case UpdatePurge:
		res.Outcome = OutcomeNotDue
		if r.Changed {
			t.purged, res.Outcome = true, OutcomePurged
		}
	}
	workflow.GetLogger(ctx).Info("form task "+string(res.Outcome), "caller", in.Caller.ID)
	return res, nil
}

// gone refuses every update of a task deleted for good.
func (t *task) gone() error {
	if t.purged {
		return reject(ErrPurged, "the form task %s was deleted for good", t.state.MessageID)
	}
	return nil
}

// inTrashbinRefusal is the refusal of a change of a task in the trashbin, with its status as the details.
func (s TaskState) inTrashbinRefusal() error {
	return temporal.NewNonRetryableApplicationError("the form task is in the trashbin; restore it first (PUT …/restore)",
		ErrInTrashbin, nil, s.Status)
}
