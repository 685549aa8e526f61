package formtask

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask/taskstatus"
)

func reject(kind, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), kind, nil)
}

// wrongState is the refusal of a change the task's status does not allow; the status travels as the
// error's details, as the workflow knows it (the caller's copy may be older).
func (t *task) wrongState(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), ErrWrongState, nil, t.state.Status)
}

// Validators run before an update is written to history: a rejected update leaves no trace. They read the
// status without the lock, so the handlers check again once they hold it. They check the caller, the
// status and the shape of the input; the rules of the service's metadata are formtask's (the API checks
// them early, the activities again).

func checkRevision(r RevisionRef) error {
	if r.ID <= 0 || len(r.Digest) != 64 {
		return reject(ErrBadInput, "a revision id and its SHA-256 digest are required")
	}
	return nil
}

func checkForm(f FormRef) error {
	if f.Type == "" || f.DataFormatID == "" || f.DataFormatVersion <= 0 {
		return reject(ErrBadInput, "every form needs a Type, a DataFormatId and a DataFormatVersion")
	}
	return nil
}

func checkAttachment(a AttachmentRef) error {
	if a.FileName == "" || a.AttachmentType == "" || a.Size < 0 {
		return reject(ErrBadInput, "every attachment needs a FileName and an AttachmentType")
	}
	return nil
}

// changeRefusal is the state's ChangeRefusal, and the refusal of every change once the task is deleted
// for good.
func (t *task) changeRefusal(c Caller) error {
	if err := t.gone(); err != nil {
		return err
	}
	return t.state.ChangeRefusal(c)
}

// checkExpected refuses a change whose expectation (If-Match) the task does not meet.
func (t *task) checkExpected(e *Expectation) error {
	if e != nil && (e.Revision != t.state.Revision || e.Status != t.state.Status) {
		return reject(ErrPrecondition, "the form task has changed since it was read")
	}
	return nil
}

func (t *task) validateSubmit(_ workflow.Context, in SubmitInput) error {
	if err := t.changeRefusal(in.Caller); err != nil {
		return err
	}
	if err := t.checkExpected(in.Expect); err != nil {
		return err
	}
	if t.state.Status == taskstatus.Signing && !(in.Complete && in.Sign) {
		return t.wrongState("the form task awaits signing; only a submission that signs it is possible")
	}
	if in.Revision.ID == 0 {
		if len(in.Forms) > 0 || len(in.Attachments) > 0 {
			return reject(ErrBadInput, "the forms and attachments of the form task are required")
		}
		if t.state.Status != taskstatus.Signing { // signs as it is: only what awaits signing
			return t.wrongState("a submission without content signs a task in %s; the form task is in %s", taskstatus.Signing, t.state.Status)
		}
		return nil
	}
	if err := checkRevision(in.Revision); err != nil {
		return err
	}
	for _, f := range in.Forms {
		if err := checkForm(f); err != nil {
			return err
		}
	}
	for _, a := range in.Attachments {
		if err := checkAttachment(a); err != nil {
			return err
		}
	}
	return nil
}

func (t *task) validateFilling(c Caller, what string) error {
	if err := t.changeRefusal(c); err != nil {
		return err
	}
	if t.state.Status != taskstatus.Filling {
		return t.wrongState("%s is possible only while the form task is in %s, not %s", what, taskstatus.Filling, t.state.Status)
	}
	return nil
}

func (t *task) validateSubForm(_ workflow.Context, in SubFormInput) error {
	if err := t.validateFilling(in.Caller, "changing a sub-form"); err != nil {
		return err
	}
	if err := t.checkExpected(in.Expect); err != nil {
		return err
	}
	if err := checkRevision(in.Revision); err != nil {
		return err
	}
	return checkForm(in.Form)
}

func (t *task) validateAttachment(_ workflow.Context, in AttachmentInput) error {
	if err := t.validateFilling(in.Caller, "adding an attachment"); err != nil {
		return err
	}
	if err := checkRevision(in.Revision); err != nil {
		return err
	}
	return checkAttachment(in.Attachment)
}

func (t *task) validateValidate(_ workflow.Context, _ ReadInput) error {
	if err := t.gone(); err != nil {
		return err
	}
	if t.state.InTrashbin {
		return t.state.inTrashbinRefusal()
	}
	if t.state.Status != taskstatus.Filling {
		return t.wrongState("validation is possible only while the form task is in %s, not %s", taskstatus.Filling, t.state.Status)
	}
	return nil
}
