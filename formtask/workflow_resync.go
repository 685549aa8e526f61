package formtask

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/notification"
)

// A run's local activities (CheckAndProject, CheckAndArchive, ChangePlace) commit in the workflow task of
// their update, before Temporal has recorded the update: Temporal keeps an admitted update in memory, so a
// restart in that window loses it, and the read model then holds a change the run never learnt of (a
// status, a promoted revision, the trashbin, an archive, a deletion for good). Only the run's own
// activities write the read model, so a read model that differs from the run is always ahead of it.
// UpdateResync makes the run take the task's state from there: formtask sends it when the run refuses a
// change for a state the read model does not have, then sends the change again; the workers' sweep sends it
// to a run still running after its archive (ConfirmArchives).
const UpdateResync = "resync"

// ResyncInput is the input of UpdateResync.
type ResyncInput struct{}

// ReadModelState is a task's state as the read model holds it (ReadTaskState). Found is false once
// the message is deleted for good.
type ReadModelState struct {
	Found            bool
	Status           string
	ArchiveReference string
	Revision         int64
	InTrashbin       bool
	// SigningDeadline is the deadline of a task in Signering, nil for none; CallOrder the order of its calls
	// to sign, nil when it called no one.
	SigningDeadline *time.Time                  `json:",omitempty"`
	CallOrder       *notification.WorkflowInput `json:",omitempty"`
}

// Outcomes of UpdateResync.
const (
	OutcomeResynced Outcome = "Resynced" // the run took the read model's state, which differed
	OutcomeInSync   Outcome = "InSync"   // the run had the read model's state
)

// MetricResyncs counts the runs that took a state from the read model (OutcomeResynced); the worker's
// handler adds "_total". Each is an update Temporal lost after its local activity committed.
const MetricResyncs = "postbox_formtask_resyncs"

// LogResynced is the warning of a run that took a state from the read model (make chaos counts them in the
// worker's log).
const LogResynced = "form task's run took its state from the read model: an update that changed it was lost"

// statusOrder is the order of a task's statuses.
var statusOrder = map[string]int{taskstatus.Filling: 1, taskstatus.Signing: 2, taskstatus.Archived: 3}

// validateResync refuses a resync of a run that has nothing left to learn: its task archived (the archive
// is the last change) or deleted for good. Such an update leaves no trace.
func (t *task) validateResync(_ workflow.Context, _ ResyncInput) error {
	if err := t.gone(); err != nil {
		return err
	}
	if t.state.Status == taskstatus.Archived {
		return t.state.archived()
	}
	return nil
}

// resync takes the task's state from the read model (see UpdateResync). An archived task ends the run, as
// does a deleted one (OutcomePurged).
func (t *task) resync(ctx workflow.Context, in ResyncInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := t.validateResync(ctx, in); err != nil {
		return Result{}, err
	}
	var rm ReadModelState
	if err := local(ctx, acts.ReadTaskState, t.state.MessageID).Get(ctx, &rm); err != nil {
		return Result{}, err
	}
	before := t.state
	if !rm.Found {
		t.purged = true
		workflow.GetLogger(ctx).Warn(LogResynced, "status", before.Status, "deleted", true)
		workflow.GetMetricsHandler(ctx).Counter(MetricResyncs).Inc(1)
		return Result{Outcome: OutcomePurged, Status: t.state.Status}, nil
	}
	// The read model is never behind the run, but a run must not go back should it be: a task's status only
	// moves on, and its revisions are promoted in the order of their ids.
	t.state.Revision, t.state.InTrashbin = max(t.state.Revision, rm.Revision), rm.InTrashbin
	if statusOrder[rm.Status] > statusOrder[t.state.Status] {
		if rm.Status == taskstatus.Archived {
			t.state.ArchiveReference = rm.ArchiveReference
		}
		if err := t.setStatus(ctx, rm.Status); err != nil {
			return Result{}, err
		}
		if rm.Status == taskstatus.Signing {
			t.enteredSigning(ctx, SigningPlan{Deadline: rm.SigningDeadline, Notify: rm.CallOrder})
		}
	}
	if t.state == before {
		return Result{Outcome: OutcomeInSync, Status: t.state.Status}, nil
	}
	workflow.GetLogger(ctx).Warn(LogResynced, "status", before.Status, "now", t.state.Status,
		"revision", before.Revision, "now_revision", t.state.Revision, "in_trashbin", before.InTrashbin, "now_in_trashbin", t.state.InTrashbin)
	workflow.GetMetricsHandler(ctx).Counter(MetricResyncs).Inc(1)
	return Result{Outcome: OutcomeResynced, Status: t.state.Status, ArchiveReference: t.state.ArchiveReference}, nil
}
