package formtask

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/notification"
)

// Signing by several in the workflow: CheckAndArchive (or CheckAndProject) sends the completion of a task
// with signing steps to Signering instead of the archive, and the completer's signature is recorded when
// they sign; each signature after that is an Update
// (UpdateSign, or UpdateSubmit with sign=true) decided by RecordSignature under the task's mutex, and the
// one that completes the last step archives the task. The content is locked meanwhile; UpdateReturnToFilling
// sends the task back, voiding the signatures. A signing deadline is a durable timer (watchSigningDeadline).

func (t *task) validateSignees(_ workflow.Context, in SigneesInput) error {
	if err := t.changeRefusal(in.Caller); err != nil {
		return err
	}
	if t.state.Status != taskstatus.Filling {
		return t.wrongState("signees are named while the task is in %s; it is in %s", taskstatus.Filling, t.state.Status)
	}
	if len(in.PartyIDs) > MaxSignees {
		return reject(ErrBadInput, "a task names at most %d signees", MaxSignees)
	}
	return nil
}

func (t *task) putSignees(ctx workflow.Context, in SigneesInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := t.validateSignees(ctx, in); err != nil {
		return Result{}, err
	}
	err := local(ctx, acts.WriteSignees, WriteSigneesInput{MessageID: t.state.MessageID, PartyIDs: in.PartyIDs, Deadline: in.Deadline}).Get(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	return Result{Outcome: OutcomeSaved, Status: t.state.Status}, nil
}

func (t *task) validateSign(_ workflow.Context, in SignInput) error {
	if err := t.gone(); err != nil {
		return err
	}
	switch {
	case t.state.Status == taskstatus.Archived:
		return t.state.archived()
	case t.state.InTrashbin:
		return t.state.inTrashbinRefusal()
	case t.state.Status != taskstatus.Signing:
		return t.wrongState("the form task is in %s: it awaits no signatures", t.state.Status)
	case in.Signer.PartyID == 0:
		return reject(ErrBadInput, "a signature needs its signer, a person")
	case in.Signer.SecurityLevel < in.Signer.RequiredLevel:
		return reject(ErrSecurityLevel, "the service requires security level %d; the signer has %d", in.Signer.RequiredLevel, in.Signer.SecurityLevel)
	}
	return nil
}

func (t *task) sign(ctx workflow.Context, in SignInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := t.validateSign(ctx, in); err != nil {
		return Result{}, err
	}
	return t.recordSignature(ctx, in.Signer, in.Expect, false)
}

// signedBySeveral goes on from a submission to the archive of a task signed by several, which
// CheckAndArchive did not archive: a completion it sent to Signering (or refused, plan.Refusal) records the
// completer's signature when they sign; in Signering it is the signer's signature.
func (t *task) signedBySeveral(ctx workflow.Context, content ContentRef, plan SigningPlan, signer Signer) (Result, error) {
	if plan.Refusal != "" {
		return Result{}, t.wrongState("%s", plan.Refusal)
	}
	completing := t.state.Status != taskstatus.Signing
	if completing {
		t.promoted(content.Revision)
		if err := t.setStatus(ctx, taskstatus.Signing); err != nil {
			return Result{}, err
		}
		t.enteredSigning(ctx, plan)
	}
	switch {
	case signer.PartyID != 0:
		return t.recordSignature(ctx, signer, "", completing)
	case completing:
		return Result{Outcome: OutcomeSentToSigning, Status: taskstatus.Signing}, nil
	}
	return Result{}, reject(ErrNotSignee, "only a person signs a task signed by several")
}

// enteredSigning follows a task just sent to Signering: it sets its signing deadline (watchSigningDeadline)
// and starts the order that notifies its signees of their calls to sign. The task is in Signering whatever
// the start does, so a failed start is logged, not answered.
func (t *task) enteredSigning(ctx workflow.Context, plan SigningPlan) {
	t.state.SigningDeadline, t.state.SigningOverdue = plan.Deadline, false
	if plan.Notify == nil {
		return
	}
	if err := notification.StartOrder(ctx, *plan.Notify); err != nil {
		workflow.GetLogger(ctx).Error("the notification of the calls to sign did not start", "order", plan.Notify.OrderID, "error", err)
	}
}

// recordSignature has RecordSignature decide s's signature, and archives the task when it completes the
// last step. completing says the same update completed the task a moment ago: a signature the first step
// does not admit then leaves the task in Signering for its signees (the completion stands), instead of a
// refusal.
func (t *task) recordSignature(ctx workflow.Context, s Signer, expect string, completing bool) (Result, error) {
	var r RecordSignatureResult
	in := RecordSignatureInput{MessageID: t.state.MessageID, Signer: s, Expect: expect, At: workflow.Now(ctx)}
	if err := local(ctx, acts.RecordSignature, in).Get(ctx, &r); err != nil {
		return Result{}, err
	}
	switch {
	case r.Decision == SignatureRefused && completing:
		return Result{Outcome: OutcomeSentToSigning, Status: taskstatus.Signing}, nil
	case r.Decision == SignatureRefused && r.Stale:
		return Result{}, reject(ErrPrecondition, "%s", r.Detail)
	case r.Decision == SignatureRefused:
		return Result{}, reject(ErrNotSignee, "%s", r.Detail)
	case r.Complete:
		c := Caller{Name: s.Name, ID: fmt.Sprintf("party/%d", s.PartyID)}
		content := ContentRef{MessageID: t.state.MessageID}
		res, err := t.archive(ctx, c, content, true)
		if err != nil {
			return Result{}, err
		}
		return t.recordArchive(ctx, c, content, res.Archive)
	}
	return Result{Outcome: OutcomeSigned, Status: taskstatus.Signing}, nil
}

func (t *task) validateReturn(_ workflow.Context, in ReturnInput) error {
	if err := t.changeRefusal(in.Caller); err != nil {
		return err
	}
	if t.state.Status != taskstatus.Signing {
		return t.wrongState("only a task in %s goes back to %s; it is in %s", taskstatus.Signing, taskstatus.Filling, t.state.Status)
	}
	return nil
}

func (t *task) returnToFilling(ctx workflow.Context, in ReturnInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := t.validateReturn(ctx, in); err != nil {
		return Result{}, err
	}
	err := local(ctx, acts.ReturnToFilling, ReturnToFillingInput{MessageID: t.state.MessageID, By: in.Caller.Name, At: workflow.Now(ctx)}).Get(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	if err := t.setStatus(ctx, taskstatus.Filling); err != nil {
		return Result{}, err
	}
	t.state.SigningDeadline, t.state.SigningOverdue = nil, false
	return Result{Outcome: OutcomeReturned, Status: taskstatus.Filling}, nil
}

// watchSigningDeadline writes formtask.signing.overdue when a task is still in Signering at its signing
// deadline: a durable timer, armed again by a run continued as new. It issues no command for a task
// without a deadline, so runs from before signing by several replay as they ran.
func (t *task) watchSigningDeadline(ctx workflow.Context) {
	for {
		armed := func() bool {
			return t.state.Status == taskstatus.Signing && t.state.SigningDeadline != nil && !t.state.SigningOverdue
		}
		if err := workflow.Await(ctx, armed); err != nil {
			return
		}
		deadline := *t.state.SigningDeadline
		wait := max(deadline.Sub(workflow.Now(ctx)), time.Millisecond)
		moved, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return !armed() || !t.state.SigningDeadline.Equal(deadline) })
		if err != nil {
			return
		}
		if moved {
			continue
		}
		if err := t.mu.Lock(ctx); err != nil {
			return
		}
		if armed() {
			err = local(ctx, acts.MarkSigningOverdue, SigningOverdueInput{MessageID: t.state.MessageID, Deadline: deadline}).Get(ctx, nil)
			if err == nil {
				t.state.SigningOverdue = true
			}
		}
		t.mu.Unlock()
		if err != nil {
			workflow.GetLogger(ctx).Error("marking a task's signing overdue failed", "err", err)
			return
		}
	}
}
