package formtask

import (
	"context"
	"io"

	"github.com/postbox/postbox/store"
)

// The changes of one existing form or attachment of a form task in Utfylling, through the task's workflow
// (UpdateChangeContent). The caller has found the form or attachment on the task as it loaded
// it; should another change remove it first, the change is NotFound. The audit entry, if any, is written
// with the change, in its transaction.

// DeleteForm deletes sub-form form (the main form stays: MainFormStays); the result's FormID is that form.
func (s *Service) DeleteForm(ctx context.Context, task Task, caller Caller, form store.Form,
	expect *Expectation, audit *store.MessageAuditEntry) (Result, error) {
	if form.Type != SubForm {
		return Result{}, refuse(MainFormStays, "form %d is the %s of message %s; only a sub-form can be deleted", form.ID, form.Type, task.MessageID)
	}
	return s.changeContent(ctx, task, caller, NewRevision{Kind: RevisionKindDeleteForm, TargetFormID: form.ID},
		ContentChangeInput{Change: ChangeDeleteForm, Expect: expect}, audit)
}

// DeleteAttachment deletes the attachment attachmentID; the result's AttachmentID is that attachment.
func (s *Service) DeleteAttachment(ctx context.Context, task Task, caller Caller, attachmentID int64,
	expect *Expectation, audit *store.MessageAuditEntry) (Result, error) {
	return s.changeContent(ctx, task, caller, NewRevision{Kind: RevisionKindDeleteAttachment, TargetAttachmentID: attachmentID},
		ContentChangeInput{Change: ChangeDeleteAttachment, Expect: expect}, audit)
}

// ReplaceAttachment gives the attachment attachmentID the name of a and the bytes streamed from body (past
// maxSize bytes it fails with TooLarge and keeps nothing); the attachment keeps its id and its type. The
// result's AttachmentID is that attachment.
func (s *Service) ReplaceAttachment(ctx context.Context, task Task, caller Caller, attachmentID int64, a RevisionAttachment,
	body io.Reader, maxSize int64, expect *Expectation, audit *store.MessageAuditEntry) (Result, error) {
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	rev, ref, err := s.streamAttachment(ctx, NewRevision{MessageID: task.MessageID, Kind: RevisionKindReplaceAttachment,
		TargetAttachmentID: attachmentID, Attachments: []RevisionAttachment{a}, Audit: audit}, body, maxSize)
	if err != nil {
		return Result{}, err
	}
	return s.update(ctx, task, rev.ID, UpdateChangeContent, ContentChangeInput{
		Caller: withLevel(caller, task), Change: ChangeReplaceAttachment, Revision: revisionRef(rev), Attachment: &ref, Expect: expect,
	})
}

// changeContent stores the revision of a removal and sends it to the task's workflow.
func (s *Service) changeContent(ctx context.Context, task Task, caller Caller, nr NewRevision,
	in ContentChangeInput, audit *store.MessageAuditEntry) (Result, error) {
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	nr.MessageID, nr.Audit = task.MessageID, audit
	rev, err := s.store.CreateRevision(ctx, nr)
	if err != nil {
		return Result{}, err
	}
	in.Caller, in.Revision = withLevel(caller, task), revisionRef(rev)
	return s.update(ctx, task, rev.ID, UpdateChangeContent, in)
}
