// The activities do the I/O of form-task workflows: XSD validation, attachment rules, print PDFs,
// archiving and the read model in PostgreSQL. Every activity is idempotent, so Temporal may retry any of
// them; input that can never succeed is a non-retryable application error whose type names the problem.

package formtask

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask/printpdf"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/formtask/xsd"
	"github.com/postbox/postbox/metadata"
	"github.com/postbox/postbox/store"
)

// Activities holds what the activities share. Register a *Activities with the worker: its exported methods
// are the activities (ActivitiesOn lists them), but for CheckForms, which the correspondence room's
// CheckPrefill runs on a scheduled pre-fill's forms. Close the schema cache with a.Schemas.Close().
type Activities struct {
	Pool     *pgxpool.Pool
	Schemas  *xsd.Cache
	Renderer *printpdf.Renderer
	// Files keeps the bytes of attachments and prints (the object store).
	Files *files.Service
	// FormTasks sends the scheduled purge's deletions of form tasks in progress to their workflows;
	// without it they wait for a worker that has it (worker.Serve sets it).
	FormTasks *Service
	// Events makes the events of the changes the activities write (form-task status, attachments changed,
	// messages purged), each in the transaction of its change.
	Events events.Builder
	// PublicURL is the base URL of the API (config.PublicURL), for the links of the calls to sign.
	PublicURL string
}

// NewActivities returns activities over pool and the object store, with a schema cache that loads from
// the xsd_schemas table.
func NewActivities(pool *pgxpool.Pool, fs *files.Service) (*Activities, error) {
	r, err := printpdf.NewRenderer()
	if err != nil {
		return nil, err
	}
	return &Activities{Pool: pool, Schemas: xsd.NewCache(SchemaLoader(pool), xsd.Limits{}), Renderer: r, Files: fs}, nil
}

// loadError marks a failure to read a schema, which a retry may cure; a schema that does not compile
// never will.
type loadError struct{ err error }

func (e loadError) Error() string { return e.err.Error() }
func (e loadError) Unwrap() error { return e.err }

// attachmentRuleKeyPrefix starts the schema key of an attachment rule (AttachmentRuleSchemaKey); the keys
// of form schemas never hold a colon.
const attachmentRuleKeyPrefix = "attachmentrule:"

// AttachmentRuleSchemaKey is the schema key of an attachment rule of a service edition.
func AttachmentRuleSchemaKey(serviceCode string, serviceEdition, ruleID int) string {
	return fmt.Sprintf("%s%d/%d/%s", attachmentRuleKeyPrefix, serviceEdition, ruleID, serviceCode)
}

// SchemaLoader loads schemas by "DataFormatId/DataFormatVersion" from the xsd_schemas table, and those of
// attachment rules (AttachmentRuleSchemaKey) from attachment_rules.
func SchemaLoader(pool *pgxpool.Pool) xsd.Loader {
	return func(ctx context.Context, key string) ([]byte, error) {
		if rest, ok := strings.CutPrefix(key, attachmentRuleKeyPrefix); ok {
			var edition, ruleID int
			var code string
			if _, err := fmt.Sscanf(rest, "%d/%d/%s", &edition, &ruleID, &code); err != nil {
				return nil, fmt.Errorf("schema key %q: %w", key, err)
			}
			s, err := metadata.AttachmentRuleSchema(ctx, pool, code, edition, ruleID)
			if err != nil {
				return nil, loadError{err}
			}
			return []byte(s), nil
		}
		id, v, _ := strings.Cut(key, "/")
		version, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("schema key %q: %w", key, err)
		}
		s, err := NewStore(store.New(pool)).XSDSchema(ctx, id, version)
		if err != nil {
			return nil, loadError{err}
		}
		return []byte(s), nil
	}
}

// Error types of non-retryable activity failures.
const (
	ErrInvalidSchema = "InvalidSchema" // a stored XSD does not compile
	ErrBadFormData   = "BadFormData"   // form data that cannot be printed
	ErrNotFormTask   = "NotFormTask"   // the message does not exist or is not a form task
)

func permanent(kind string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), kind, err)
}

// revision returns the revision content refers to, checking that it belongs to the message and has the
// digest the workflow carries: the workflow must apply exactly what the API stored.
func (a *Activities) revision(ctx context.Context, q Store, c ContentRef) (Revision, error) {
	r, err := q.GetRevision(ctx, c.Revision.ID)
	if err != nil {
		return r, revisionError(c, err)
	}
	return r, referenced(c)(r)
}

// referenced checks that a revision is the one c refers to.
func referenced(c ContentRef) func(Revision) error {
	return func(r Revision) error {
		if r.MessageID != c.MessageID || r.DigestHex() != c.Revision.Digest {
			return permanent(ErrRevisionDigest, fmt.Errorf("revision %d is not the one referenced for message %s", r.ID, c.MessageID))
		}
		return nil
	}
}

// revisionError is the error of looking up the revision c refers to.
func revisionError(c ContentRef, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return permanent(ErrRevisionDigest, fmt.Errorf("revision %d does not exist", c.Revision.ID))
	}
	return err
}

// archive makes the revision (if any) the message's content, archives that with its print and marks the
// message `Sendt og arkivert`, in one transaction and exactly once: a retry, or a second archive of the same
// message, returns the first archive.
func (a *Activities) archive(ctx context.Context, in ArchiveInput) (ArchiveResult, error) {
	var (
		ar      Archive
		created bool
	)
	err := store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := NewStore(store.NewTx(tx)) // any error rolls it all back
		changes, err := a.promote(ctx, q, in.Content, nil)
		if err != nil {
			return err
		}
		var header PrintHeader
		ar, created, err = q.ArchiveFormTask(ctx, in.Content.MessageID, in.By, clock.Local(in.At),
			func(q Store, h PrintHeader, ar Archive) ([]byte, []byte, error) {
				header = h
				// The digest holds the ArchiveReference just drawn: no print of it is stored yet.
				doc := document(h, ar.Forms, ar.Attachments, ar.Signatures)
				digest, err := documentDigest(doc)
				if err != nil {
					return nil, nil, err
				}
				pdf, err := a.renderPDF(doc)
				if err != nil {
					return nil, nil, err
				}
				// Its blob row is written in the archive's transaction, so the print is either both or neither.
				f, err := a.Files.In(tx).SaveBytes(ctx, pdf, "application/pdf")
				return digest, f.SHA256, err
			})
		if err != nil || !created {
			return err
		}
		return a.taskEvents(ctx, q, events.Message{MessageID: in.Content.MessageID, ReporteeID: header.ReporteeID,
			Type: store.TypeFormTask, ServiceCode: header.ServiceCode, ServiceEdition: header.ServiceEdition,
			Status: taskstatus.Archived, ArchiveReference: ar.ArchiveReference}, changes, true)
	})
	if errors.Is(err, store.ErrNotFound) {
		return ArchiveResult{}, permanent(ErrNotFormTask, fmt.Errorf("message %s is not a form task", in.Content.MessageID))
	}
	if err != nil {
		return ArchiveResult{}, err
	}
	if created {
		activity.GetLogger(ctx).Info("archived", "message", in.Content.MessageID, "archive_reference", ar.ArchiveReference)
	}
	return ArchiveResult{ArchiveReference: ar.ArchiveReference, PrintDigest: hex.EncodeToString(ar.PrintDigest)}, nil
}

// promotion is what promoting a revision did, for its events.
type promotion struct {
	attachments []AttachmentChange
	formEvent   string // the event of the sub-form it wrote or deleted, "" for none
	formID      int64
}

// promote makes content's revision, if it has one, the message's content (a no-op when it is already),
// sets *ref to the form or attachment it wrote or removed and returns what it did (nothing when an earlier
// attempt promoted it).
func (a *Activities) promote(ctx context.Context, q Store, c ContentRef, ref *int64) (promotion, error) {
	if c.Revision.ID == 0 {
		return promotion{}, nil
	}
	rev, id, changes, err := q.PromoteCheckedRevision(ctx, c.Revision.ID, referenced(c))
	if errors.Is(err, store.ErrNotFound) {
		return promotion{}, revisionError(c, err)
	}
	if errors.Is(err, ErrBadRevision) {
		return promotion{}, permanent(ErrBadInput, err)
	}
	if errors.Is(err, errContentGone) {
		return promotion{}, permanent(ErrContentGone, err)
	}
	if err != nil {
		return promotion{}, err
	}
	if ref != nil {
		*ref = id
	}
	p := promotion{attachments: changes, formID: id}
	switch {
	case rev.Promoted:
	case rev.Kind == RevisionKindSubForm && id != rev.TargetFormID:
		p.formEvent = events.FormTaskFormAdded
	case rev.Kind == RevisionKindSubForm:
		p.formEvent = events.FormTaskFormChanged
	case rev.Kind == RevisionKindDeleteForm:
		p.formEvent = events.FormTaskFormDeleted
	}
	return p, nil
}

// attachmentEventTypes are the event types of the changes to attachments a promotion makes.
var attachmentEventTypes = map[string]string{
	AttachmentAdded:    events.FormTaskAttachmentAdded,
	AttachmentDeleted:  events.FormTaskAttachmentDeleted,
	AttachmentReplaced: events.FormTaskAttachmentReplaced,
}

// appendTaskEvents writes the events of one projection of a form task: one per attachment changed, one of
// the sub-form written or deleted, then, when statusChanged, the new status (with the ArchiveReference once
// archived). Call it last in the projection's transaction, so the task is read as the projection left it.
func (a *Activities) appendTaskEvents(ctx context.Context, q Store, messageID string, p promotion, statusChanged bool) error {
	if len(p.attachments) == 0 && p.formEvent == "" && !statusChanged {
		return nil
	}
	t, err := q.GetFormTask(ctx, messageID)
	if err != nil {
		return err
	}
	m, err := taskMessage(t)
	if err != nil {
		return err
	}
	return a.taskEvents(ctx, q, m, p, statusChanged)
}

// taskEvents writes the events of appendTaskEvents of task m as the projection left it.
func (a *Activities) taskEvents(ctx context.Context, q Store, m events.Message, p promotion, statusChanged bool) error {
	if len(p.attachments) == 0 && p.formEvent == "" && !statusChanged {
		return nil
	}
	evs := make([]store.Event, 0, len(p.attachments)+2)
	for _, c := range p.attachments {
		evs = append(evs, a.Events.AttachmentEvent(attachmentEventTypes[c.Change],
			events.Attachment{Message: m, AttachmentID: c.ID, AttachmentType: c.AttachmentType}))
	}
	if p.formEvent != "" {
		evs = append(evs, a.Events.FormEvent(p.formEvent, events.Form{Message: m, FormID: p.formID}))
	}
	if statusChanged {
		evs = append(evs, a.Events.MessageEvent(events.FormTaskStatusChanged, m))
	}
	return q.AppendEvents(ctx, evs...)
}

// projectState writes the read model in one transaction: promotes the content's revision (if any) and sets
// the status, LastChangedBy and LastChangedDateTime, with the events of what changed.
func (a *Activities) projectState(ctx context.Context, in ProjectInput) (ProjectResult, error) {
	var res ProjectResult
	err := store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := NewStore(store.NewTx(tx)) // any error rolls it all back
		changes, err := a.promote(ctx, q, in.Content, &res.Ref)
		if err != nil {
			return err
		}
		changed, err := q.SetFormTaskState(ctx, in.Content.MessageID, in.Status, in.By, clock.Local(in.At))
		if err != nil {
			return err
		}
		if err := a.appendTaskEvents(ctx, q, in.Content.MessageID, changes, changed); err != nil {
			return err
		}
		if in.Signing == nil || in.Status != taskstatus.Signing || !changed {
			return nil
		}
		if d := in.Signing.Deadline; d != nil {
			if err := q.KeepServiceSigningDeadline(ctx, in.Content.MessageID, clock.Local(*d)); err != nil {
				return err
			}
		}
		res.Notify, err = a.callSignees(ctx, tx, q, in.Content.MessageID, clock.Local(in.At))
		return err
	})
	return res, err
}

// ReadTaskState reads a task's state from the read model, for a run that lost an update (UpdateResync).
func (a *Activities) ReadTaskState(ctx context.Context, messageID string) (ReadModelState, error) {
	t, err := NewStore(store.New(a.Pool)).GetFormTask(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		return ReadModelState{}, nil
	}
	if err != nil {
		return ReadModelState{}, err
	}
	rm := ReadModelState{Found: true, Status: t.Status, ArchiveReference: t.ArchiveReference,
		Revision: t.Revision, InTrashbin: t.InTrashbin}
	if t.Status != taskstatus.Signing {
		return rm, nil
	}
	q := NewStore(store.New(a.Pool))
	if rm.CallOrder, err = callOrder(ctx, q, messageID); err != nil {
		return rm, err
	}
	deadline, err := q.TaskSigningDeadline(ctx, messageID)
	if err != nil || deadline == nil {
		return rm, err
	}
	instant := clock.Instant(*deadline)
	rm.SigningDeadline = &instant
	return rm, nil
}

// DiscardRevision deletes a revision that will not be applied; a promoted one stays.
func (a *Activities) DiscardRevision(ctx context.Context, c ContentRef) error {
	return NewStore(store.New(a.Pool)).DeleteRevision(ctx, c.MessageID, c.Revision.ID)
}

// CheckAndProject runs the checks of an update's content and, when they find no error, its projection
// (projectState), or discards a revision they find invalid: the work of a save or of the checks before
// Archive as one local activity. Each step is idempotent, so a retried attempt does them again, but for
// the checks of a revision already promoted.
//
// A projection to Signering of a task signed by several answers its plan (Signing); a plan with a Refusal
// (signees it still needs) projects nothing and discards the revision.
func (a *Activities) CheckAndProject(ctx context.Context, in CheckAndProjectInput) (CheckAndProjectResult, error) {
	var res CheckAndProjectResult
	var err error
	if res.Findings, err = a.check(ctx, in); err != nil || len(res.Findings.Errors) > 0 || in.Project == nil {
		return res, err
	}
	if in.Project.Status == taskstatus.Signing {
		if res.Signing, err = a.planSigning(ctx, in.Content.MessageID, in.Project.At); err != nil {
			return res, err
		}
		if res.Signing != nil && res.Signing.Refusal != "" {
			return res, a.discard(ctx, in.Content)
		}
		in.Project.Signing = res.Signing
	}
	pr, err := a.projectState(ctx, *in.Project)
	res.Ref = pr.Ref
	if res.Signing != nil {
		res.Signing.Notify = pr.Notify
	}
	return res, err
}

// CheckAndArchive runs the checks of a submission's revision, if it has one, and, when they find no error,
// archives it (archive), or discards a revision they find invalid: a submission to the archive as one
// local activity. An attempt retried after the archive committed finds the archive (Archive is exactly
// once) and, its revision being promoted, skips the checks.
//
// A task signed by several is archived only once every step is signed (in.Signed); before, its completion
// goes to Signering instead (projected as CheckAndProject would), its content is locked there, and the
// result carries its plan (Signing) for the workflow to collect the signatures.
func (a *Activities) CheckAndArchive(ctx context.Context, in CheckAndArchiveInput) (CheckAndArchiveResult, error) {
	var res CheckAndArchiveResult
	var err error
	c := in.Archive.Content
	if c.Revision.ID != 0 {
		res.Findings, err = a.check(ctx, CheckAndProjectInput{Content: c, Forms: true, Attachments: true,
			ServiceCode: in.ServiceCode, ServiceEdition: in.ServiceEdition, Final: true})
		if err != nil || len(res.Findings.Errors) > 0 {
			return res, err
		}
	}
	if !in.Signed {
		if res.Signing, err = a.planSigning(ctx, c.MessageID, in.Archive.At); err != nil || res.Signing != nil {
			if err == nil {
				err = a.toSigning(ctx, in.Archive, res.Signing)
			}
			return res, err
		}
	}
	res.Archive, err = a.archive(ctx, in.Archive)
	return res, err
}

// check runs the checks in asks for and discards a revision they find invalid. A revision promoted already
// passed them: an attempt retried after its promotion committed finds nothing, where the checks of the
// content again, now beside itself on the message, could find what is not so.
func (a *Activities) check(ctx context.Context, in CheckAndProjectInput) (Findings, error) {
	var found Findings
	// The checks read the revision, its content and the service once; the service is the task's, as the
	// workflow knows it (a task's service never changes).
	r := newReads(NewStore(store.New(a.Pool)), in.Content)
	if in.Content.Revision.ID != 0 && (in.Forms || in.Attachments) {
		if err := r.prefetch(ctx, in.ServiceCode, in.ServiceEdition); err != nil || r.rev.Promoted {
			return found, err
		}
	}
	if in.Forms {
		f, err := a.validateForms(ctx, r, in.ServiceCode, in.ServiceEdition)
		if err != nil {
			return found, err
		}
		found = found.Join(f)
	}
	if in.Attachments {
		f, err := a.checkAttachments(ctx, r, CheckAttachmentsInput{
			Content: in.Content, ServiceCode: in.ServiceCode, ServiceEdition: in.ServiceEdition, Final: in.Final,
		})
		if err != nil {
			return found, err
		}
		found = found.Join(f)
	}
	if len(found.Errors) > 0 && in.Content.Revision.ID != 0 {
		// Failing to delete it loses nothing: store.DeleteStaleRevisions removes it later.
		if err := a.DiscardRevision(ctx, in.Content); err != nil {
			activity.GetLogger(ctx).Warn("discarding a revision failed", "revision", in.Content.Revision.ID, "err", err)
		}
	}
	return found, nil
}
