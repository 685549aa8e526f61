package mailbox

import (
	"context"
	"errors"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// A form task in progress (Utfylling, Signering) belongs to its workflow: moving it to the trashbin,
// restoring it and deleting it for good are updates of the workflow (formtask/workflow_place.go), which
// makes the change and its audit entry in one transaction of its activity. The answers are those of the
// plain changes, so a client cannot tell the two ways apart.

// placeChanges are, per workflow update, the audit action, the summary, and the refusal of a task that is
// not where the change takes it from (as the plain change refuses it).
var placeChanges = map[string]struct {
	action    string
	summary   func(id, status string) string
	misplaced func(id string) error
}{
	formtask.UpdateTrash: {store.AuditDelete, TrashedSummary, func(id string) error {
		return refuse(NotFound, "there is no message %s in this mailbox; it is in the trashbin", id)
	}},
	formtask.UpdateRestore: {store.AuditRestore, RestoredSummary, func(id string) error {
		return refuse(NotInTrashbin, "message %s is in the mailbox, not in the trashbin", id)
	}},
	formtask.UpdatePurge: {store.AuditDeleteForGood, PurgedSummary, func(id string) error {
		return refuse(NotFound, "there is no message %s in the trashbin", id)
	}},
}

// taskPlace makes change (a formtask.Update* of placeChanges) of message id through its workflow when it
// is a form task in progress the caller can see. It says whether it did (or refused); not for any other
// message, nor for a task archived meanwhile, whose workflow has ended: the plain change then runs.
func (l *Lifecycle) taskPlace(ctx context.Context, reporteeID int64, id string, a Actor, unchanged Unchanged, change string) (bool, error) {
	q := store.New(l.pool)
	task, err := formtask.NewStore(q).GetFormTask(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return true, err
	}
	svc := store.ServiceKey{Code: task.ServiceCode, Edition: task.ServiceEdition}
	if task.ReporteeID != identity.ReporteeID(reporteeID) || task.Status == taskstatus.Archived || !a.Rights.Visibility().Allows(svc, task.Status) {
		return false, nil
	}
	if l.tasks == nil {
		return true, formtask.ErrUnavailable()
	}
	p := placeChanges[change]
	state := store.MessageState{ID: id, Type: store.TypeFormTask, Status: task.Status, Service: svc, InTrashbin: task.InTrashbin}
	if err := placeRefusal(a.Rights, change, state); err != nil {
		return true, err
	}
	var expect *formtask.Expectation
	if unchanged != nil {
		// task.Revision was read with the status before the ETag is checked: a change in between makes the
		// workflow's check fail, never pass.
		if err := unchanged.check(ctx, q, reporteeID, id); err != nil {
			return true, err
		}
		expect = &formtask.Expectation{Revision: task.Revision, Status: task.Status}
	}
	e := a.Audit
	e.ReporteeID, e.Action, e.At, e.Summary = reporteeID, p.action, clock.Now(), p.summary(id, task.Status)
	_, err = l.tasks.ChangePlace(ctx, task, change, formtask.PlaceInput{Caller: formtask.CallerOf(a.Principal, a.Rights, svc), Audit: e, Expect: expect})
	var refused *formtask.Error
	if errors.As(err, &refused) {
		switch refused.Kind {
		case formtask.Conflict:
			if refused.Status == taskstatus.Archived {
				return false, nil
			}
		case formtask.InTrashbin, formtask.NotInTrashbin:
			err = p.misplaced(id)
		}
	}
	return true, err
}

// placeRefusal refuses, as the plain change would, a place change of a task in progress that the caller
// may not make (Delete on the service) or that the task's place does not allow; the workflow checks both
// again in the step that makes the change.
func placeRefusal(rights identity.RightSet, change string, m store.MessageState) error {
	misplaced := m.InTrashbin
	if change != formtask.UpdateTrash {
		misplaced = !m.InTrashbin
	}
	if change == formtask.UpdateRestore { // restore names the right first, as the plain change does
		if err := RequireRight(rights, m, identity.Delete); err != nil {
			return err
		}
	}
	if misplaced {
		return placeChanges[change].misplaced(m.ID)
	}
	return RequireRight(rights, m, identity.Delete)
}
