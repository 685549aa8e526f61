package formtask

import (
	"context"
	"errors"
	"fmt"

	"github.com/postbox/postbox/store"
)

// The steps of the local activities CheckAndProject and CheckAndArchive, as activities of their own for
// the tests of each step.

// ValidateForms validates the forms of a revision, or the message's current forms, of the task's service.
func (a *Activities) ValidateForms(ctx context.Context, c ContentRef) (Findings, error) {
	q := NewStore(store.New(a.Pool))
	task, err := q.GetFormTask(ctx, c.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		return Findings{}, permanent(ErrNotFormTask, fmt.Errorf("message %s is not a form task", c.MessageID))
	}
	if err != nil {
		return Findings{}, err
	}
	return a.validateForms(ctx, newReads(q, c), task.ServiceCode, task.ServiceEdition)
}

// CheckAttachments checks the attachments the content would leave on the message.
func (a *Activities) CheckAttachments(ctx context.Context, in CheckAttachmentsInput) (Findings, error) {
	return a.checkAttachments(ctx, newReads(NewStore(store.New(a.Pool)), in.Content), in)
}

// ProjectState writes the read model.
func (a *Activities) ProjectState(ctx context.Context, in ProjectInput) (ProjectResult, error) {
	return a.projectState(ctx, in)
}

// Archive archives the content.
func (a *Activities) Archive(ctx context.Context, in ArchiveInput) (ArchiveResult, error) {
	return a.archive(ctx, in)
}
