package api

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/workflows"
)

// FormTasks sends form-task changes to the task's workflow and waits for their outcome. The payloads are
// stored first (a revision); the workflow gets their id and digest. A workflow is started on first use
// from the message (UpdateWithStart), so every existing form task can be updated.
//
// Errors are *Problem values (or wrap one) where the client is at fault or may retry: 400 bad input or
// failed validation, 403 missing rights or security level or sign refused, 404 no such form task, 409
// archived or wrong status, 503 Temporal unreachable (a *RetryableProblem with its Retry-After).
type FormTasks struct {
	Client client.Client
	Pool   *pgxpool.Pool
}

// FormTaskSubmission is a PUT on a form task: all its forms and attachments, and the query parameters
// complete and sign with their defaults (true) applied.
type FormTaskSubmission struct {
	Complete    bool
	Sign        bool
	Forms       []store.RevisionForm
	Attachments []store.RevisionAttachment
}

// temporalRetryAfter is what a client is told to wait when Temporal does not answer.
const temporalRetryAfter = 5 * time.Second

// Submit replaces the forms and attachments of a form task and moves it as complete and sign say. A
// result with Outcome Invalid or SignRefused comes with a *Problem (400 with the validation errors, 403).
func (f *FormTasks) Submit(ctx context.Context, messageID string, caller workflows.Caller, s FormTaskSubmission) (workflows.Result, error) {
	task, err := store.New(f.Pool).GetFormTask(ctx, messageID)
	if err != nil {
		return workflows.Result{}, err
	}
	in := workflows.SubmitInput{Caller: withLevel(caller, task), Complete: s.Complete, Sign: s.Sign}
	// A task in Signering is signed as it is: a PUT there may carry no content.
	if len(s.Forms) == 0 && len(s.Attachments) == 0 && task.Status == store.StatusSigning {
		return f.update(ctx, task, 0, workflows.UpdateSubmit, in)
	}
	rev, err := store.New(f.Pool).CreateRevision(ctx, store.NewRevision{
		MessageID: messageID, Kind: store.RevisionKindReplace, Forms: s.Forms, Attachments: s.Attachments,
	})
	if err != nil {
		return workflows.Result{}, err
	}
	in.Revision = workflows.RevisionRef{ID: rev.ID, Digest: rev.DigestHex()}
	for _, fm := range s.Forms {
		in.Forms = append(in.Forms, formRef(fm))
	}
	for _, a := range s.Attachments {
		in.Attachments = append(in.Attachments, attachmentRef(a))
	}
	return f.update(ctx, task, rev.ID, workflows.UpdateSubmit, in)
}

// PutSubForm adds a sub-form to a form task in Utfylling, or changes the sub-form formID; the result's
// FormID is the form written (for the Location header).
func (f *FormTasks) PutSubForm(ctx context.Context, messageID string, caller workflows.Caller, formID int64, form store.RevisionForm) (workflows.Result, error) {
	task, err := store.New(f.Pool).GetFormTask(ctx, messageID)
	if err != nil {
		return workflows.Result{}, err
	}
	rev, err := store.New(f.Pool).CreateRevision(ctx, store.NewRevision{
		MessageID: messageID, Kind: store.RevisionKindSubForm, TargetFormID: formID, Forms: []store.RevisionForm{form},
	})
	if err != nil {
		return workflows.Result{}, err
	}
	return f.update(ctx, task, rev.ID, workflows.UpdateSubForm, workflows.SubFormInput{
		Caller: withLevel(caller, task), FormID: formID, Form: formRef(form),
		Revision: workflows.RevisionRef{ID: rev.ID, Digest: rev.DigestHex()},
	})
}

// AddAttachment adds an attachment to a form task in Utfylling; the result's AttachmentID is the new
// attachment (for the Location header).
func (f *FormTasks) AddAttachment(ctx context.Context, messageID string, caller workflows.Caller, a store.RevisionAttachment) (workflows.Result, error) {
	task, err := store.New(f.Pool).GetFormTask(ctx, messageID)
	if err != nil {
		return workflows.Result{}, err
	}
	rev, err := store.New(f.Pool).CreateRevision(ctx, store.NewRevision{
		MessageID: messageID, Kind: store.RevisionKindAttachment, Attachments: []store.RevisionAttachment{a},
	})
	if err != nil {
		return workflows.Result{}, err
	}
	return f.update(ctx, task, rev.ID, workflows.UpdateAttachment, workflows.AttachmentInput{
		Caller: withLevel(caller, task), Attachment: attachmentRef(a),
		Revision: workflows.RevisionRef{ID: rev.ID, Digest: rev.DigestHex()},
	})
}

// AddStreamedAttachment adds an attachment whose bytes stream from body straight into the store, so memory
// does not grow with the file; past maxSize bytes it fails with 413 and keeps nothing.
func (f *FormTasks) AddStreamedAttachment(ctx context.Context, messageID string, caller workflows.Caller, a store.RevisionAttachment, body io.Reader, maxSize int64) (workflows.Result, error) {
	task, err := store.New(f.Pool).GetFormTask(ctx, messageID)
	if err != nil {
		return workflows.Result{}, err
	}
	rev, size, err := store.New(f.Pool).CreateAttachmentRevision(ctx, messageID, a, body, maxSize)
	if errors.Is(err, store.ErrTooLarge) {
		return workflows.Result{}, problem(http.StatusRequestEntityTooLarge, "attachment-too-large",
			"the attachment is larger than the %d bytes its type allows", maxSize)
	}
	if err != nil {
		return workflows.Result{}, err
	}
	ref := attachmentRef(a)
	ref.Size = size
	return f.update(ctx, task, rev.ID, workflows.UpdateAttachment, workflows.AttachmentInput{
		Caller: withLevel(caller, task), Attachment: ref,
		Revision: workflows.RevisionRef{ID: rev.ID, Digest: rev.DigestHex()},
	})
}

// Validate validates the current forms of a form task in Utfylling; errors in the forms are a result with
// Success false, not an error.
func (f *FormTasks) Validate(ctx context.Context, messageID string, caller workflows.Caller) (workflows.ValidationResult, error) {
	task, err := store.New(f.Pool).GetFormTask(ctx, messageID)
	if err != nil {
		return workflows.ValidationResult{}, err
	}
	res, err := f.update(ctx, task, 0, workflows.UpdateValidate, workflows.ReadInput{Caller: withLevel(caller, task)})
	if err != nil || res.Validation == nil {
		return workflows.ValidationResult{}, err
	}
	return *res.Validation, nil
}

// Print returns the PDF of a form task: its archive's print once archived, else a print of its current
// content (rendered by the workflow's activity, once per content).
func (f *FormTasks) Print(ctx context.Context, messageID string, caller workflows.Caller) ([]byte, error) {
	q := store.New(f.Pool)
	task, err := q.GetFormTask(ctx, messageID)
	if err != nil {
		return nil, err
	}
	if task.Status == store.StatusArchived {
		ar, err := q.GetArchive(ctx, messageID)
		if err == nil {
			return q.GetPrint(ctx, ar.PrintDigest)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		// Archived before Postbox kept archives: print what the message holds.
	}
	res, err := f.update(ctx, task, 0, workflows.UpdatePrint, workflows.ReadInput{Caller: withLevel(caller, task)})
	if err != nil {
		return nil, err
	}
	digest, err := hex.DecodeString(res.PrintDigest)
	if err != nil {
		return nil, err
	}
	return q.GetPrint(ctx, digest)
}

// update sends an update to the task's workflow, starting the workflow if it is not running, and waits for
// the result. When the update fails, the revision it referred to is deleted.
func (f *FormTasks) update(ctx context.Context, task store.FormTask, revisionID int64, name string, arg any) (workflows.Result, error) {
	res, err := f.send(ctx, task, name, arg)
	if err != nil && revisionID != 0 {
		// The request's context may be what ended; the cleanup must still run.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = store.New(f.Pool).DeleteRevision(cctx, task.MessageID, revisionID) // else DeleteStaleRevisions does it
	}
	if err != nil {
		return workflows.Result{}, err
	}
	switch res.Outcome {
	case workflows.OutcomeInvalid:
		p := badRequest("the form task did not pass validation; nothing was changed")
		p.Type = "urn:postbox:problem:validation-failed"
		if res.Validation != nil {
			p.Errors = res.Validation.ValidationErrors
		}
		return res, p
	case workflows.OutcomeSignRefused:
		return res, problem(http.StatusForbidden, "sign-refused",
			"signing needs the Sign right on the service and its security level; the form task is in %s", res.Status)
	}
	return res, nil
}

func (f *FormTasks) send(ctx context.Context, task store.FormTask, name string, arg any) (workflows.Result, error) {
	start := f.Client.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       workflows.WorkflowID(task.MessageID),
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.FormTask, startState(task))
	h, err := f.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName:   name,
			Args:         []any{arg},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return workflows.Result{}, updateError(ctx, err)
	}
	var res workflows.Result
	if err := h.Get(ctx, &res); err != nil {
		return workflows.Result{}, updateError(ctx, err)
	}
	return res, nil
}

// startState is the workflow input of a task, from its message.
func startState(t store.FormTask) workflows.TaskState {
	return workflows.TaskState{
		MessageID: t.MessageID, ReporteeID: t.ReporteeID, ServiceCode: t.ServiceCode, ServiceEdition: t.ServiceEdition,
		Subject: t.Subject, Status: t.Status, ArchiveReference: t.ArchiveReference,
	}
}

func withLevel(c workflows.Caller, t store.FormTask) workflows.Caller {
	c.RequiredLevel = t.RequiredSecurityLevel
	return c
}

func formRef(f store.RevisionForm) workflows.FormRef {
	return workflows.FormRef{Type: f.Type, DataFormatID: f.DataFormatID, DataFormatVersion: f.DataFormatVersion}
}

func attachmentRef(a store.RevisionAttachment) workflows.AttachmentRef {
	return workflows.AttachmentRef{FileName: a.FileName, AttachmentType: a.AttachmentType, Size: int64(len(a.Data))}
}

// updateError maps a failed or rejected update to what the client is told.
func updateError(ctx context.Context, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case workflows.ErrBadInput:
			return badRequest("%s", appErr.Message())
		case workflows.ErrForbidden, workflows.ErrSecurityLevel:
			return problem(http.StatusForbidden, "forbidden", "%s", appErr.Message())
		case workflows.ErrTaskArchived, workflows.ErrWrongState:
			return problem(http.StatusConflict, "conflict", "%s", appErr.Message())
		}
		return err
	}
	if ctx.Err() == nil && !unreachable(err) {
		return err
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return &RetryableProblem{
		Problem: problem(http.StatusServiceUnavailable, "temporal-unavailable", "form tasks cannot be changed right now; try again shortly"),
		After:   temporalRetryAfter,
	}
}

// unreachable tells whether err says Temporal did not answer, as opposed to answering with a refusal.
func unreachable(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		deadline    *serviceerror.DeadlineExceeded
		exhausted   *serviceerror.ResourceExhausted
	)
	if errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}
