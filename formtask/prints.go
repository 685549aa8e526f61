package formtask

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

// The prints of a form task: rendered by the workflow's activities once per content, read from the
// object store.

// Print returns the PDF of a form task: its archive's print once archived, else a print of its current
// content (rendered by the workflow's activity, once per content). NotFound when there is no print yet.
func (s *Service) Print(ctx context.Context, task Task, caller Caller) ([]byte, error) {
	pdf, err := s.print(ctx, task, caller)
	if errors.Is(err, store.ErrNotFound) {
		return nil, refuse(NotFound, "message %s has no print yet", task.MessageID)
	}
	return pdf, err
}

func (s *Service) print(ctx context.Context, task Task, caller Caller) ([]byte, error) {
	if task.Status == taskstatus.Archived {
		ar, err := s.store.GetArchive(ctx, task.MessageID)
		if err == nil {
			return s.printBytes(ctx, ar.PrintDigest)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		// Archived before Postbox kept archives: print what the message holds.
	}
	return s.renderedPrint(ctx, task, ReadInput{Caller: withLevel(caller, task)})
}

// PrintForm returns the PDF of one form of a form task as the task holds it now, rendered by the
// workflow's activity once per content; NotFound when the task has no such form.
func (s *Service) PrintForm(ctx context.Context, task Task, caller Caller, formID int64) ([]byte, error) {
	return s.renderedPrint(ctx, task, ReadInput{Caller: withLevel(caller, task), FormID: formID})
}

// renderedPrint asks the task's workflow for the print in asks for and reads it from the store.
func (s *Service) renderedPrint(ctx context.Context, task Task, in ReadInput) ([]byte, error) {
	res, err := s.update(ctx, task, 0, UpdatePrint, in)
	if err != nil {
		return nil, err
	}
	digest, err := hex.DecodeString(res.PrintDigest)
	if err != nil {
		return nil, err
	}
	return s.printBytes(ctx, digest)
}

// printBytes reads the PDF printed from a document (by the document's digest) from the object store.
func (s *Service) printBytes(ctx context.Context, digest []byte) ([]byte, error) {
	pdf, err := s.store.GetPrint(ctx, digest)
	if err != nil {
		return nil, err
	}
	return s.opts.Files.Bytes(ctx, pdf)
}
