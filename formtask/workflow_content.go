package formtask

import (
	"go.temporal.io/sdk/workflow"
)

// UpdateChangeContent changes one existing form or attachment of a task in Utfylling: DELETE forms/{formId},
// POST attachments/{attachmentId} (new content) and DELETE attachments/{attachmentId}.
const UpdateChangeContent = "change-content"

// FormPrintInput names the form RenderFormPrint prints.
type FormPrintInput struct {
	MessageID string
	FormID    int64
}

// ErrContentGone is the error type of a change whose form or attachment another change removed after the
// caller looked (404).
const ErrContentGone = "ContentGone"

// ContentChange says what UpdateChangeContent does; the revision (of the store kind of the same name)
// names the form or attachment.
type ContentChange string

// Content changes.
const (
	ChangeDeleteForm        ContentChange = "DeleteForm"
	ChangeDeleteAttachment  ContentChange = "DeleteAttachment"
	ChangeReplaceAttachment ContentChange = "ReplaceAttachment"
)

// ContentChangeInput is one change of an existing form or attachment.
type ContentChangeInput struct {
	Caller   Caller
	Change   ContentChange
	Revision RevisionRef
	// Attachment is the new content of ChangeReplaceAttachment.
	Attachment *AttachmentRef `json:",omitempty"`
	// Expect, when set, refuses the change (ErrPrecondition) unless the task is as expected.
	Expect *Expectation `json:",omitempty"`
}

func (t *task) validateContentChange(_ workflow.Context, in ContentChangeInput) error {
	if err := t.validateFilling(in.Caller, "changing a form or an attachment"); err != nil {
		return err
	}
	if err := t.checkExpected(in.Expect); err != nil {
		return err
	}
	if err := checkRevision(in.Revision); err != nil {
		return err
	}
	switch in.Change {
	case ChangeDeleteForm, ChangeDeleteAttachment:
		return nil
	case ChangeReplaceAttachment:
		if in.Attachment == nil {
			return reject(ErrBadInput, "the new content of the attachment is required")
		}
		return checkAttachment(*in.Attachment)
	}
	return reject(ErrBadInput, "unknown content change %q", in.Change)
}

// changeContent applies a content change as the other changes of content are applied (addContent): new
// attachment content is checked against the service's attachment rules, a removal is not (the minimum
// counts hold only when the task is completed). The result's FormID or AttachmentID is the one changed.
func (t *task) changeContent(ctx workflow.Context, in ContentChangeInput) (Result, error) {
	return t.addContent(ctx, in.Caller, in.Revision, func() error { return t.validateContentChange(ctx, in) },
		false, in.Change == ChangeReplaceAttachment, func(r *Result, ref int64) {
			if in.Change == ChangeDeleteForm {
				r.FormID = ref
			} else {
				r.AttachmentID = ref
			}
		})
}
