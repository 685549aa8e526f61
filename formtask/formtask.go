// Package formtask is the room of form tasks, from the service the API calls to the workflow and its
// activities:
//
//   - the service (formtask.go, content.go, lifecycle.go) stores a change's payloads as a revision, sends the
//     change to the task's workflow (UpdateWithStart) and waits for its outcome; it returns typed errors
//     (*Error, errors.go), never HTTP answers;
//   - the rules of a service's metadata (rules.go), for the service's early check and for the activities;
//   - the workflow (contract.go, workflow*.go): one per task, deterministic, importing no database package;
//   - the activities (activities*.go), which do its I/O, and the sweep that confirms archives (sweep.go).
package formtask

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// TaskOf is the task of a form-task message the caller loaded, with its service and reportee.
func TaskOf(m store.Message, svc store.ServiceDetail, reporteeID int64) Task {
	level := 0
	for _, p := range svc.ProcessSteps {
		level = max(level, p.SecurityLevel)
	}
	return Task{
		MessageID: m.MessageID, ReporteeID: identity.ReporteeID(reporteeID), ServiceCode: m.ServiceCode,
		ServiceEdition: m.ServiceEdition, Subject: m.Subject, Status: m.Status, ArchiveReference: m.ArchiveReference,
		RequiredSecurityLevel: level,
	}
}

// Service sends form-task changes to the tasks' workflows. A workflow is started on first use from the
// task (UpdateWithStart), so every existing form task can be changed.
type Service struct {
	temporal client.Client
	store    Store
	opts     Options
	events   events.Builder
}

// Options tune the service; zero values take the defaults.
type Options struct {
	// ConnectTimeout bounds how long a change waits for the Temporal server to answer (config
	// POSTBOX_TEMPORAL_CONNECT_TIMEOUT). An Update that has not finished within it is not cut off: the
	// server is asked whether it answers (within ConnectTimeout again, and so on every ConnectTimeout while
	// the Update runs), and only when it does not is the change given up as Unavailable. So a long
	// validation or archive runs as long as it needs, and a server that is down costs a caller at most
	// about twice ConnectTimeout.
	ConnectTimeout time.Duration
	// PublicURL is the base URL of the API (config.PublicURL), under which the events of the service's
	// changes name their resources.
	PublicURL string
	// Files keeps the bytes of attachments and prints (the object store).
	Files *files.Service
}

// DefaultConnectTimeout is ConnectTimeout when none is given.
const DefaultConnectTimeout = 3 * time.Second

// New returns the service over a Temporal client and the store.
func New(c client.Client, q *store.Queries, opts Options) *Service {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	return &Service{temporal: c, store: NewStore(q), opts: opts, events: events.NewBuilder(opts.PublicURL)}
}

// CheckHealth says whether Temporal answers.
func (s *Service) CheckHealth(ctx context.Context) error {
	_, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}

// Load returns a form task for callers that have not loaded it; NotFound when there is none.
func (s *Service) Load(ctx context.Context, messageID string) (Task, error) {
	t, err := s.store.GetFormTask(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		e := refuse(NotFound, "there is no form task %s", messageID)
		e.Err = err
		return t, e
	}
	return t, err
}

// Submission is a PUT on a form task: all its forms and attachments, and the query parameters complete
// and sign with their defaults (true) applied. Sign without Complete signs nothing: the content is only
// saved (complete=false&sign=true counts as complete=false).
type Submission struct {
	Complete    bool
	Sign        bool
	Forms       []RevisionForm
	Attachments []RevisionAttachment
	// Expect, when set, makes the workflow refuse the submission (PreconditionFailed) unless the task is
	// as expected, checked in the same step as the change.
	Expect *Expectation
	// Signer is the caller as the signer of a task with signing steps (a person; zero for others).
	Signer Signer
}

// Submit replaces the forms and attachments of a form task and moves it as complete and sign say. A
// result with Outcome Invalid or SignRefused comes with an *Error (Invalid, SignRefused).
func (s *Service) Submit(ctx context.Context, task Task, caller Caller, sub Submission) (Result, error) {
	res, err := s.submit(ctx, task, caller, sub)
	if err != nil {
		return s.repeatedSigning(ctx, task, caller, sub, res, err)
	}
	return res, nil
}

func (s *Service) submit(ctx context.Context, task Task, caller Caller, sub Submission) (Result, error) {
	sub.Sign = sub.Sign && sub.Complete
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	in := SubmitInput{Caller: withLevel(caller, task), Complete: sub.Complete, Sign: sub.Sign, Expect: sub.Expect, Signer: sub.Signer}
	// A task in Signering is signed as it is: a PUT there may carry no content. One in Utfylling has
	// nothing to sign yet.
	if len(sub.Forms) == 0 && len(sub.Attachments) == 0 {
		if task.Status == taskstatus.Signing {
			return s.update(ctx, task, 0, UpdateSubmit, in)
		}
		return Result{}, refuse(BadInput, "the form task is in %s: a PUT without content signs only a task in %s. "+
			"Send the task's forms (and attachments) in the body, or complete it first (PUT with its content and ?sign=false)",
			task.Status, taskstatus.Signing)
	}
	types := make([]string, 0, len(sub.Forms))
	for _, f := range sub.Forms {
		types = append(types, f.Type)
	}
	if v := CheckMainForms(types); v != nil {
		return Result{}, v.Refusal("")
	}
	atts, err := s.saveAttachments(ctx, sub.Attachments)
	if err != nil {
		return Result{}, err
	}
	rev, err := s.store.CreateRevision(ctx, NewRevision{
		MessageID: task.MessageID, Kind: RevisionKindReplace, Forms: sub.Forms, Attachments: atts,
	})
	if err != nil {
		return Result{}, err
	}
	in.Revision = revisionRef(rev)
	for _, fm := range sub.Forms {
		in.Forms = append(in.Forms, formRef(fm))
	}
	for _, a := range atts {
		in.Attachments = append(in.Attachments, attachmentRef(a))
	}
	return s.update(ctx, task, rev.ID, UpdateSubmit, in)
}

// repeatedSigning answers a signing submission refused because the task is archived as the submission that
// archived it was answered, when it is its repeat (its answer was lost, a client retried): the same
// parameters (complete and sign), a caller who may sign, and the same content as the archive holds, or no
// content (signing the task as it is). Any other refusal stays what it is: a repeated step that did not
// archive learns where the task is from the refusal's status (409).
func (s *Service) repeatedSigning(ctx context.Context, task Task, caller Caller, sub Submission, res Result, refused error) (Result, error) {
	var e *Error
	caller = withLevel(caller, task)
	if !errors.As(refused, &e) || e.Kind != Conflict || e.Status != taskstatus.Archived || !sub.Complete || !sub.Sign ||
		!caller.Sign || caller.SecurityLevel < caller.RequiredLevel {
		return res, refused
	}
	a, err := s.store.GetArchive(ctx, task.MessageID)
	if errors.Is(err, store.ErrNotFound) { // archived before Postbox kept archives: nothing to compare with
		return res, refused
	}
	if err != nil {
		return Result{}, err
	}
	if (len(sub.Forms) > 0 || len(sub.Attachments) > 0) && !sameContent(a.Forms, a.Attachments, sub) {
		return res, refused
	}
	return Result{Outcome: OutcomeArchived, Status: taskstatus.Archived, ArchiveReference: a.ArchiveReference}, nil
}

// sameContent reports whether forms and atts are exactly the forms and attachments of sub, in their order.
func sameContent(forms []FormContent, atts []AttachmentInfo, sub Submission) bool {
	if len(forms) != len(sub.Forms) || len(atts) != len(sub.Attachments) {
		return false
	}
	for i, f := range sub.Forms {
		g := forms[i]
		if f.Type != g.Type || f.DataFormatID != g.DataFormatID || f.DataFormatVersion != g.DataFormatVersion || f.FormData != g.FormData {
			return false
		}
	}
	for i, at := range sub.Attachments {
		g, sum := atts[i], sha256.Sum256(at.Data) // the submission's own, not yet saved
		if at.FileName != g.FileName || at.AttachmentType != g.AttachmentType || !bytes.Equal(sum[:], g.SHA256) {
			return false
		}
	}
	return true
}

// Create makes a new form task of a service for a reportee and stores the content sub carries (if any) as
// its first submission, which moves the task as sub.Complete and sub.Sign say (both false keep it in
// Utfylling). The caller needs what every change of the task needs (Caller.WriteRefusal: the
// Write right and the service's security level), and to sign one at once the Sign right too: without it
// nothing is created (SignRefused), where a PUT would leave the task in Signering. A refused submission
// takes the new task away again: it never existed for the client. It returns the new task's message id and
// the submission's result.
func (s *Service) Create(ctx context.Context, reporteeID int64, svc store.ServiceDetail, caller Caller, sub Submission) (string, Result, error) {
	return s.CreateWith(ctx, reporteeID, svc, NewFormTask{}, caller, sub)
}

// CreateWith is Create of a task that starts as task says (a subject of its own, a due date): a service
// owner's pre-filled task.
func (s *Service) CreateWith(ctx context.Context, reporteeID int64, svc store.ServiceDetail, task NewFormTask, caller Caller,
	sub Submission) (string, Result, error) {
	sub.Sign = sub.Sign && sub.Complete
	t := TaskOf(store.Message{MessageSummary: store.MessageSummary{Subject: cmp.Or(task.Subject, svc.ServiceName),
		Status: taskstatus.Filling, ServiceCode: svc.ServiceCode, ServiceEdition: svc.ServiceEdition}}, svc, reporteeID)
	if err := refusal(ctx, t, caller); err != nil {
		return "", Result{}, err
	}
	if c := withLevel(caller, t); sub.Complete && sub.Sign && (!c.Sign || c.SecurityLevel < c.RequiredLevel) {
		return "", Result{}, refuse(SignRefused,
			"signing needs the Sign right on service %s/%d and its security level; nothing was created", svc.ServiceCode, svc.ServiceEdition)
	}
	if sub.Complete && len(sub.Forms) == 0 {
		return "", Result{}, refuse(BadInput, "a form task completed at its creation needs its forms")
	}
	createdEvent := events.Message{ReporteeID: reporteeID, Type: store.TypeFormTask, ServiceCode: svc.ServiceCode,
		ServiceEdition: svc.ServiceEdition, Status: taskstatus.Filling}
	id, err := s.store.CreateFormTaskMessage(ctx, reporteeID, svc.Service, task, caller.Name, clock.Now(),
		func(id string) store.Event {
			createdEvent.MessageID = id
			return s.events.MessageEvent(events.FormTaskCreated, createdEvent)
		})
	if err != nil {
		return "", Result{}, err
	}
	created := Result{Outcome: OutcomeSaved, Status: taskstatus.Filling}
	if len(sub.Forms) == 0 && len(sub.Attachments) == 0 {
		return id, created, nil
	}
	t.MessageID = id
	res, err := s.Submit(ctx, t, caller, Submission{Complete: sub.Complete, Sign: sub.Sign, Forms: sub.Forms, Attachments: sub.Attachments,
		Signer: sub.Signer})
	if err != nil {
		// Its created event has been seen: the removal is told as a delete for good.
		removed := s.events.MessageEvent(events.MessagePurged, createdEvent)
		if delErr := s.store.DeleteNewFormTask(context.WithoutCancel(ctx), id, removed); delErr != nil {
			slog.ErrorContext(ctx, "removing a refused new form task failed", "err", delErr, "message", id)
		} else if refused := (*Error)(nil); !errors.As(err, &refused) || refused.Kind != Unavailable {
			s.endRun(ctx, t) // the submission started its workflow
		}
		return "", Result{}, err
	}
	return id, res, nil
}

// PutSubForm adds a sub-form to a form task in Utfylling, or changes the sub-form formID; the result's
// FormID is the form written. The audit entry, if any, is written with the change.
func (s *Service) PutSubForm(ctx context.Context, task Task, caller Caller, formID int64, form RevisionForm,
	expect *Expectation, audit *store.MessageAuditEntry) (Result, error) {
	if v := CheckSubFormType(form.Type); v != nil {
		return Result{}, v.Refusal("")
	}
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	rev, err := s.store.CreateRevision(ctx, NewRevision{
		MessageID: task.MessageID, Kind: RevisionKindSubForm, TargetFormID: formID, Forms: []RevisionForm{form}, Audit: audit,
	})
	if err != nil {
		return Result{}, err
	}
	return s.update(ctx, task, rev.ID, UpdateSubForm, SubFormInput{
		Caller: withLevel(caller, task), FormID: formID, Form: formRef(form), Revision: revisionRef(rev), Expect: expect,
	})
}

// AddAttachment adds an attachment to a form task in Utfylling; the result's AttachmentID is the new
// attachment. The audit entry, if any, is written with the change.
func (s *Service) AddAttachment(ctx context.Context, task Task, caller Caller, a RevisionAttachment, audit *store.MessageAuditEntry) (Result, error) {
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	saved, err := s.saveAttachments(ctx, []RevisionAttachment{a})
	if err != nil {
		return Result{}, err
	}
	a = saved[0]
	rev, err := s.store.CreateRevision(ctx, NewRevision{
		MessageID: task.MessageID, Kind: RevisionKindAttachment, Attachments: saved, Audit: audit,
	})
	if err != nil {
		return Result{}, err
	}
	return s.update(ctx, task, rev.ID, UpdateAttachment, AttachmentInput{
		Caller: withLevel(caller, task), Attachment: attachmentRef(a), Revision: revisionRef(rev),
	})
}

// AddStreamedAttachment adds an attachment whose bytes stream from body straight into the store, so memory
// does not grow with the file; past maxSize bytes it fails with TooLarge and keeps nothing. The audit
// entry, if any, is written with the change.
func (s *Service) AddStreamedAttachment(ctx context.Context, task Task, caller Caller, a RevisionAttachment, body io.Reader, maxSize int64,
	audit *store.MessageAuditEntry) (Result, error) {
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	rev, ref, err := s.streamAttachment(ctx, NewRevision{MessageID: task.MessageID, Kind: RevisionKindAttachment,
		Attachments: []RevisionAttachment{a}, Audit: audit}, body, maxSize)
	if err != nil {
		return Result{}, err
	}
	return s.update(ctx, task, rev.ID, UpdateAttachment, AttachmentInput{
		Caller: withLevel(caller, task), Attachment: ref, Revision: revisionRef(rev),
	})
}

// streamAttachment streams the bytes of one attachment from body into the object store (TooLarge past
// maxSize, keeping nothing), then stores the revision that names them, and returns it with the
// attachment's reference. No database transaction is open while the bytes arrive.
func (s *Service) streamAttachment(ctx context.Context, nr NewRevision, body io.Reader, maxSize int64) (Revision, AttachmentRef, error) {
	f, err := s.opts.Files.Save(ctx, body, maxSize, "")
	var v *Violation
	switch {
	case errors.Is(err, files.ErrTooLarge):
		return Revision{}, AttachmentRef{}, refuse(TooLarge, "the attachment is larger than the %d bytes its type allows", maxSize)
	case errors.As(err, &v): // the content's check (NewCheckedReader) refused it
		return Revision{}, AttachmentRef{}, v.Refusal("")
	}
	if err != nil {
		return Revision{}, AttachmentRef{}, err
	}
	a := nr.Attachments[0]
	a.SHA256, a.Size = f.SHA256, f.Size
	nr.Attachments = []RevisionAttachment{a}
	rev, err := s.store.CreateRevision(ctx, nr)
	return rev, attachmentRef(a), err
}

// Validate validates the current forms of a form task in Utfylling; errors in the forms are a result with
// Success false, not an error.
func (s *Service) Validate(ctx context.Context, task Task, caller Caller) (ValidationResult, error) {
	res, err := s.update(ctx, task, 0, UpdateValidate, ReadInput{Caller: withLevel(caller, task)})
	if err != nil || res.Validation == nil {
		return ValidationResult{}, err
	}
	return *res.Validation, nil
}

// startState is the workflow input of a task.
func startState(t Task) TaskState {
	return TaskState{
		MessageID: t.MessageID, ReporteeID: t.ReporteeID, ServiceCode: t.ServiceCode, ServiceEdition: t.ServiceEdition,
		Subject: t.Subject, Status: t.Status, ArchiveReference: t.ArchiveReference, Revision: t.Revision,
	}
}

// refusal is the workflow's refusal of any change (TaskState.ChangeRefusal) decided on the task
// as loaded, before anything is stored or sent: a caller without the Write right or the level, and a task
// the store says is archived (the archive commits that status, and nothing moves a task out of it). So a
// repeated change of an archived task, with content or without, is the 409 that carries its
// ArchiveReference even while Temporal is away.
func refusal(ctx context.Context, task Task, caller Caller) error {
	if err := startState(task).ChangeRefusal(withLevel(caller, task)); err != nil {
		return updateError(ctx, task, err)
	}
	return nil
}

func withLevel(c Caller, t Task) Caller {
	c.RequiredLevel = t.RequiredSecurityLevel
	return c
}

func revisionRef(r Revision) RevisionRef {
	return RevisionRef{ID: r.ID, Digest: r.DigestHex()}
}

func formRef(f RevisionForm) FormRef {
	return FormRef{Type: f.Type, DataFormatID: f.DataFormatID, DataFormatVersion: f.DataFormatVersion}
}

// attachmentRef describes a saved attachment (saveAttachments) to the workflow.
func attachmentRef(a RevisionAttachment) AttachmentRef {
	return AttachmentRef{FileName: a.FileName, AttachmentType: a.AttachmentType, Size: a.Size}
}

// saveAttachments saves the bytes of attachments that came in a request body in the object store and
// returns them named by their blobs, ready for a revision.
func (s *Service) saveAttachments(ctx context.Context, atts []RevisionAttachment) ([]RevisionAttachment, error) {
	saved := make([]RevisionAttachment, len(atts))
	for i, a := range atts {
		f, err := s.opts.Files.SaveBytes(ctx, a.Data, "")
		if err != nil {
			return nil, err
		}
		a.Data, a.SHA256, a.Size = nil, f.SHA256, f.Size
		saved[i] = a
	}
	return saved, nil
}
