// The activities do the I/O of form-task workflows: XSD validation, attachment rules, print PDFs,
// archiving and the read model in PostgreSQL. Every activity is idempotent, so Temporal may retry any of
// them; input that can never succeed is a non-retryable application error whose type names the problem.

package formtask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the interface's local time must not depend on the host's zone database

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/formtask/printpdf"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/formtask/xsd"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store"
)

// Activities holds what the activities share. Register a *Activities with the worker: its exported methods
// are the activities, named as in Activity* (so it has no other exported methods; close the
// schema cache with a.Schemas.Close()).
type Activities struct {
	Pool     *pgxpool.Pool
	Schemas  *xsd.Cache
	Renderer *printpdf.Renderer
	// FormTasks sends the scheduled purge's deletions of form tasks in progress to their workflows;
	// without it they wait for a worker that has it (worker.Serve sets it).
	FormTasks *Service
	// Events makes the events of the changes the activities write (form-task status, attachments changed,
	// messages purged), each in the transaction of its change.
	Events events.Builder
}

// NewActivities returns activities over pool, with a schema cache that loads from the xsd_schemas table.
func NewActivities(pool *pgxpool.Pool) (*Activities, error) {
	r, err := printpdf.NewRenderer()
	if err != nil {
		return nil, err
	}
	return &Activities{Pool: pool, Schemas: xsd.NewCache(SchemaLoader(pool), xsd.Limits{}), Renderer: r}, nil
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
			s, err := store.New(pool).GetAttachmentRuleSchema(ctx, code, edition, ruleID)
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
		s, err := store.New(pool).XSDSchema(ctx, id, version)
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

// heartbeat records heartbeats every fifth of the activity's HeartbeatTimeout until stop is called, so that
// a worker that dies in a long activity is noticed within HeartbeatTimeout and the attempt goes to another
// worker. The first beat comes after that fifth: an activity that ends sooner costs no call. Activities
// scheduled without a HeartbeatTimeout (the local ones) do not heartbeat.
func heartbeat(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 5
	if every <= 0 {
		return func() {}
	}
	beating, stop := context.WithCancel(ctx)
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-beating.Done():
				return
			case <-tick.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return stop
}

// revision returns the revision content refers to, checking that it belongs to the message and has the
// digest the workflow carries: the workflow must apply exactly what the API stored.
func (a *Activities) revision(ctx context.Context, q *store.Queries, c ContentRef) (store.Revision, error) {
	r, err := q.GetRevision(ctx, c.Revision.ID)
	if err != nil {
		return r, revisionError(c, err)
	}
	return r, referenced(c)(r)
}

// referenced checks that a revision is the one c refers to.
func referenced(c ContentRef) func(store.Revision) error {
	return func(r store.Revision) error {
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

// reads are what the checks of one content read from the store, each read once: validateForms and
// checkAttachments of one CheckAndProject share them.
type reads struct {
	q          *store.Queries
	c          ContentRef
	rev        *store.Revision
	revContent *content
	msgContent *content
	services   map[[2]any]store.ServiceDetail
}

type content struct {
	forms []store.FormContent
	atts  []store.AttachmentInfo
}

func newReads(q *store.Queries, c ContentRef) *reads {
	return &reads{q: q, c: c, services: map[[2]any]store.ServiceDetail{}}
}

// revision is the revision c refers to, checked (Activities.revision).
func (r *reads) revision(ctx context.Context, a *Activities) (store.Revision, error) {
	if r.rev == nil {
		rev, err := a.revision(ctx, r.q, r.c)
		if err != nil {
			return rev, err
		}
		r.rev = &rev
	}
	return *r.rev, nil
}

func (r *reads) revisionContent(ctx context.Context) ([]store.FormContent, []store.AttachmentInfo, error) {
	if r.revContent == nil {
		forms, atts, err := r.q.RevisionContent(ctx, r.c.Revision.ID)
		if err != nil {
			return nil, nil, err
		}
		r.revContent = &content{forms, atts}
	}
	return r.revContent.forms, r.revContent.atts, nil
}

func (r *reads) messageContent(ctx context.Context) ([]store.FormContent, []store.AttachmentInfo, error) {
	if r.msgContent == nil {
		forms, atts, err := r.q.MessageContent(ctx, r.c.MessageID)
		if err != nil {
			return nil, nil, err
		}
		r.msgContent = &content{forms, atts}
	}
	return r.msgContent.forms, r.msgContent.atts, nil
}

// prefetch reads the revision, its content and the service edition in one round trip.
func (r *reads) prefetch(ctx context.Context, serviceCode string, serviceEdition int) error {
	rc, err := r.q.ReadRevisionForChecks(ctx, r.c.Revision.ID, serviceCode, serviceEdition)
	if err != nil {
		return revisionError(r.c, err)
	}
	if err := referenced(r.c)(rc.Revision); err != nil {
		return err
	}
	r.rev, r.revContent = &rc.Revision, &content{rc.Forms, rc.Attachments}
	if rc.ServiceErr == nil { // else service looks it up again, and returns its error
		r.services[[2]any{serviceCode, serviceEdition}] = rc.Service
	}
	return nil
}

func (r *reads) service(ctx context.Context, code string, edition int) (store.ServiceDetail, error) {
	key := [2]any{code, edition}
	if svc, ok := r.services[key]; ok {
		return svc, nil
	}
	svc, err := r.q.GetService(ctx, code, edition)
	if err == nil {
		r.services[key] = svc
	}
	return svc, err
}

// validateForms validates the forms of the content of r (a revision, or the message's current forms), a
// form task of the service edition, against the schemas of their data formats, and checks that they are
// forms of the service with one MainForm.
func (a *Activities) validateForms(ctx context.Context, r *reads, serviceCode string, serviceEdition int) (Findings, error) {
	var (
		forms []store.FormContent
		kind  = store.RevisionKindReplace // the current content is a whole form set too
		rev   store.Revision
		err   error
		c     = r.c
	)
	if c.Revision.ID != 0 {
		if rev, err = r.revision(ctx, a); err != nil {
			return Findings{}, err
		}
		kind = rev.Kind
		forms, _, err = r.revisionContent(ctx)
	} else {
		forms, _, err = r.messageContent(ctx)
	}
	if err != nil {
		return Findings{}, err
	}
	svc, err := r.service(ctx, serviceCode, serviceEdition)
	if err != nil {
		return Findings{}, err
	}

	var f Findings
	fail := func(v *Violation) { f = f.Join(findings(v)) }
	if kind == store.RevisionKindReplace {
		types := make([]string, 0, len(forms))
		for _, form := range forms {
			types = append(types, form.Type)
		}
		if v := CheckMainForms(types); v != nil {
			fail(v)
		}
	}
	if kind == store.RevisionKindSubForm && rev.TargetFormID != 0 {
		current, _, err := r.messageContent(ctx)
		if err != nil {
			return Findings{}, err
		}
		for _, cf := range current {
			if cf.ID == rev.TargetFormID {
				if v := CheckSubFormTarget(cf.ID, cf.Type); v != nil {
					fail(v)
				}
			}
		}
	}
	for _, form := range forms {
		if _, v := FormOf(svc, form.Type, form.DataFormatID, form.DataFormatVersion); v != nil {
			fail(v)
			continue
		}
		issues, err := a.validateForm(ctx, form)
		if err != nil {
			return Findings{}, err
		}
		f = f.Join(issues)
	}
	return f, nil
}

// findings are rule violations as validation errors.
func findings(vs ...*Violation) Findings {
	var f Findings
	for _, v := range vs {
		f.Errors = append(f.Errors, ValidationEntry{FieldName: v.Field, ErrorMessage: v.Message})
	}
	return f
}

func (a *Activities) validateForm(ctx context.Context, form store.FormContent) (Findings, error) {
	key := form.DataFormatID + "/" + strconv.Itoa(form.DataFormatVersion)
	f, err := a.validateXML(ctx, key, []byte(form.FormData), func(is xsd.Issue) string {
		if is.FieldXPath != "" { // the path says where
			return is.ErrorMessage
		}
		// A document the parser refused, or an issue tied to no element: name the form and the line.
		where := fmt.Sprintf("%s %s version %d", form.Type, form.DataFormatID, form.DataFormatVersion)
		if form.ID != 0 {
			where += fmt.Sprintf(" (form %d)", form.ID)
		}
		if is.Line > 0 {
			where += fmt.Sprintf(", line %d", is.Line)
		}
		return where + ": " + is.ErrorMessage
	})
	if len(f.Errors) > 0 {
		telemetry.ValidationFailures.WithLabelValues(key).Inc()
	}
	return f, err
}

// validateXML validates doc against the schema the cache holds under key; message words each issue.
func (a *Activities) validateXML(ctx context.Context, key string, doc []byte, message func(xsd.Issue) string) (Findings, error) {
	schema, err := a.Schemas.Get(ctx, key)
	if err != nil {
		var le loadError
		if errors.As(err, &le) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return Findings{}, err
		}
		return Findings{}, permanent(ErrInvalidSchema, err)
	}
	res, err := schema.Validate(doc)
	if err != nil {
		return Findings{}, err
	}
	var f Findings
	for _, is := range res.Errors {
		f.Errors = append(f.Errors, ValidationEntry{FieldName: is.FieldName, ErrorMessage: message(is), FieldXPath: is.FieldXPath})
	}
	for _, is := range res.Warnings {
		f.Warnings = append(f.Warnings, ValidationEntry{FieldName: is.FieldName, ErrorMessage: message(is), FieldXPath: is.FieldXPath})
	}
	return f, nil
}

// checkAttachments checks the attachments the content would leave on the message against the service's
// AttachmentRules: the type must be known, the file name must match AllowedFileTypes, the size must not
// exceed MaxFileSize and the count per type must not exceed MaxAttachmentCount (nor, when final, fall
// below MinAttachmentCount). The attachments the content adds of a type with IsXsdValidationRequired must
// be XML valid against the rule's schema.
func (a *Activities) checkAttachments(ctx context.Context, r *reads, in CheckAttachmentsInput) (Findings, error) {
	q := r.q
	var (
		atts  []store.AttachmentInfo
		added []store.AttachmentInfo // of the revision, by ordinal
		rev   store.Revision
		err   error
	)
	if in.Content.Revision.ID != 0 {
		if rev, err = r.revision(ctx, a); err != nil {
			return Findings{}, err
		}
		switch rev.Kind {
		case store.RevisionKindSubForm, store.RevisionKindDeleteForm, store.RevisionKindDeleteAttachment:
			return Findings{}, nil
		case store.RevisionKindAttachment, store.RevisionKindReplaceAttachment: // beside those the message has
			if _, atts, err = r.messageContent(ctx); err != nil {
				return Findings{}, err
			}
			atts = slices.DeleteFunc(slices.Clone(atts), func(att store.AttachmentInfo) bool { return att.ID == rev.TargetAttachmentID })
		}
		if _, added, err = r.revisionContent(ctx); err != nil {
			return Findings{}, err
		}
		atts = append(slices.Clip(atts), added...)
	} else if _, atts, err = r.messageContent(ctx); err != nil {
		return Findings{}, err
	}
	svc, err := r.service(ctx, in.ServiceCode, in.ServiceEdition)
	if errors.Is(err, store.ErrNotFound) {
		return Findings{}, permanent(ErrNotFormTask, fmt.Errorf("service %s/%d does not exist", in.ServiceCode, in.ServiceEdition))
	}
	if err != nil {
		return Findings{}, err
	}
	f := findings(CheckAttachments(svc, atts, in.Final)...)
	for ordinal, att := range added {
		rule, ok := store.RuleFor(svc.AttachmentRules, att.AttachmentType)
		if !ok || !rule.IsXsdValidationRequired {
			continue
		}
		issues, err := a.validateAttachmentXML(ctx, q, svc, rule, rev.ID, ordinal, att.FileName)
		if err != nil {
			return Findings{}, err
		}
		f = f.Join(issues)
	}
	return f, nil
}

// validateAttachmentXML validates attachment ordinal of a revision against the schema of its rule.
func (a *Activities) validateAttachmentXML(ctx context.Context, q *store.Queries, svc store.ServiceDetail, rule store.AttachmentRule,
	revisionID int64, ordinal int, fileName string) (Findings, error) {
	data, err := q.RevisionAttachmentData(ctx, revisionID, ordinal, xsd.DefaultMaxBytes+1) // more is refused as too large
	if err != nil {
		return Findings{}, err
	}
	return a.validateXML(ctx, AttachmentRuleSchemaKey(svc.ServiceCode, svc.ServiceEdition, rule.AttachmentRuleID), data,
		func(is xsd.Issue) string {
			return fmt.Sprintf("attachment %s (%s): %s", fileName, rule.AttachmentTypeName, is.ErrorMessage)
		})
}

// printVersion is part of every document digest, so a change of the print layout renders anew.
const printVersion = "printpdf/1"

// documentDigest is the cache key of a print: the SHA-256 of everything the PDF is made from.
func documentDigest(doc printpdf.Document) ([]byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write([]byte(printVersion))
	h.Write(b)
	return h.Sum(nil), nil
}

func document(h store.PrintHeader, forms []store.FormContent, atts []store.AttachmentInfo) printpdf.Document {
	doc := printpdf.Document{
		ServiceName: h.ServiceName, ServiceCode: h.ServiceCode, ServiceEdition: h.ServiceEdition,
		ServiceOwner: h.ServiceOwner, Reportee: h.Reportee, Submitter: h.LastChangedBy, Status: h.Status,
		ArchiveReference: h.ArchiveReference, Time: h.LastChanged,
	}
	for _, f := range forms {
		doc.Forms = append(doc.Forms, printpdf.Form{Name: f.Name, Type: f.Type, XML: []byte(f.FormData)})
	}
	for _, a := range atts {
		doc.Attachments = append(doc.Attachments, printpdf.Attachment{FileName: a.FileName, AttachmentType: a.AttachmentType, Size: a.FileSize})
	}
	return doc
}

// render returns the digest of doc's print and, unless it is stored already, the PDF.
func (a *Activities) render(ctx context.Context, q *store.Queries, doc printpdf.Document) (digest, pdf []byte, err error) {
	if digest, err = documentDigest(doc); err != nil {
		return nil, nil, err
	}
	if _, err := q.GetPrint(ctx, digest); err == nil {
		return digest, nil, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	pdf, err = a.renderPDF(doc)
	return digest, pdf, err
}

// renderPDF renders doc's print.
func (a *Activities) renderPDF(doc printpdf.Document) ([]byte, error) {
	start := time.Now()
	pdf, err := a.Renderer.Render(doc)
	telemetry.PDFRender.Observe(time.Since(start).Seconds())
	if errors.Is(err, printpdf.ErrBadFormData) {
		return nil, permanent(ErrBadFormData, err)
	}
	return pdf, err
}

// RenderPrint stores the print of a message's current content and returns its digest (hex). The same
// content is rendered once.
func (a *Activities) RenderPrint(ctx context.Context, messageID string) (PrintResult, error) {
	return a.renderContent(ctx, messageID, func(forms []store.FormContent, atts []store.AttachmentInfo) ([]store.FormContent, []store.AttachmentInfo, error) {
		return forms, atts, nil
	})
}

// renderContent stores the print of what pick takes of a message's current forms and attachments and
// returns its digest (hex).
func (a *Activities) renderContent(ctx context.Context, messageID string,
	pick func([]store.FormContent, []store.AttachmentInfo) ([]store.FormContent, []store.AttachmentInfo, error)) (PrintResult, error) {
	defer heartbeat(ctx)()
	q := store.New(a.Pool)
	h, err := q.GetPrintHeader(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		return PrintResult{}, permanent(ErrNotFormTask, fmt.Errorf("message %s is not a form task", messageID))
	}
	if err != nil {
		return PrintResult{}, err
	}
	forms, atts, err := q.MessageContent(ctx, messageID)
	if err == nil {
		forms, atts, err = pick(forms, atts)
	}
	if err != nil {
		return PrintResult{}, err
	}
	digest, pdf, err := a.render(ctx, q, document(h, forms, atts))
	if err != nil {
		return PrintResult{}, err
	}
	if pdf != nil {
		if err := q.PutPrint(ctx, digest, pdf); err != nil {
			return PrintResult{}, err
		}
	}
	return PrintResult{Digest: hex.EncodeToString(digest)}, nil
}

// archive makes the revision (if any) the message's content, archives that with its print and marks the
// message `Sendt og arkivert`, in one transaction and exactly once: a retry, or a second archive of the same
// message, returns the first archive.
func (a *Activities) archive(ctx context.Context, in ArchiveInput) (ArchiveResult, error) {
	var (
		ar      store.Archive
		created bool
	)
	err := store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := store.NewTx(tx) // any error rolls it all back
		changes, err := a.promote(ctx, q, in.Content, nil)
		if err != nil {
			return err
		}
		var header store.PrintHeader
		ar, created, err = q.ArchiveFormTask(ctx, in.Content.MessageID, in.By, clock.Local(in.At),
			func(q *store.Queries, h store.PrintHeader, ar store.Archive) ([]byte, []byte, error) {
				header = h
				// The digest holds the ArchiveReference just drawn: no print of it is stored yet.
				doc := document(h, ar.Forms, ar.Attachments)
				digest, err := documentDigest(doc)
				if err != nil {
					return nil, nil, err
				}
				pdf, err := a.renderPDF(doc)
				return digest, pdf, err
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
	attachments []store.AttachmentChange
	formEvent   string // the event of the sub-form it wrote or deleted, "" for none
	formID      int64
}

// promote makes content's revision, if it has one, the message's content (a no-op when it is already),
// sets *ref to the form or attachment it wrote or removed and returns what it did (nothing when an earlier
// attempt promoted it).
func (a *Activities) promote(ctx context.Context, q *store.Queries, c ContentRef, ref *int64) (promotion, error) {
	if c.Revision.ID == 0 {
		return promotion{}, nil
	}
	rev, id, changes, err := q.PromoteCheckedRevision(ctx, c.Revision.ID, referenced(c))
	if errors.Is(err, store.ErrNotFound) {
		return promotion{}, revisionError(c, err)
	}
	if errors.Is(err, store.ErrBadRevision) {
		return promotion{}, permanent(ErrBadInput, err)
	}
	if errors.Is(err, store.ErrContentGone) {
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
	case rev.Kind == store.RevisionKindSubForm && id != rev.TargetFormID:
		p.formEvent = events.FormTaskFormAdded
	case rev.Kind == store.RevisionKindSubForm:
		p.formEvent = events.FormTaskFormChanged
	case rev.Kind == store.RevisionKindDeleteForm:
		p.formEvent = events.FormTaskFormDeleted
	}
	return p, nil
}

// attachmentEventTypes are the event types of the changes to attachments a promotion makes.
var attachmentEventTypes = map[string]string{
	store.AttachmentAdded:    events.FormTaskAttachmentAdded,
	store.AttachmentDeleted:  events.FormTaskAttachmentDeleted,
	store.AttachmentReplaced: events.FormTaskAttachmentReplaced,
}

// appendTaskEvents writes the events of one projection of a form task: one per attachment changed, one of
// the sub-form written or deleted, then, when statusChanged, the new status (with the ArchiveReference once
// archived). Call it last in the projection's transaction, so the task is read as the projection left it.
func (a *Activities) appendTaskEvents(ctx context.Context, q *store.Queries, messageID string, p promotion, statusChanged bool) error {
	if len(p.attachments) == 0 && p.formEvent == "" && !statusChanged {
		return nil
	}
	t, err := q.GetFormTask(ctx, messageID)
	if err != nil {
		return err
	}
	reportee, err := strconv.ParseInt(strings.TrimPrefix(t.ReporteeID, "r"), 10, 64)
	if err != nil {
		return err
	}
	return a.taskEvents(ctx, q, events.Message{MessageID: t.MessageID, ReporteeID: reportee, Type: store.TypeFormTask,
		ServiceCode: t.ServiceCode, ServiceEdition: t.ServiceEdition, Status: t.Status, ArchiveReference: t.ArchiveReference}, p, statusChanged)
}

// taskEvents writes the events of appendTaskEvents of task m as the projection left it.
func (a *Activities) taskEvents(ctx context.Context, q *store.Queries, m events.Message, p promotion, statusChanged bool) error {
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
		q := store.NewTx(tx) // any error rolls it all back
		changes, err := a.promote(ctx, q, in.Content, &res.Ref)
		if err != nil {
			return err
		}
		changed, err := q.SetFormTaskState(ctx, in.Content.MessageID, in.Status, in.By, clock.Local(in.At))
		if err != nil {
			return err
		}
		return a.appendTaskEvents(ctx, q, in.Content.MessageID, changes, changed)
	})
	return res, err
}

// ReadTaskState reads a task's state from the read model, for a run that lost an update (UpdateResync).
func (a *Activities) ReadTaskState(ctx context.Context, messageID string) (ReadModelState, error) {
	t, err := store.New(a.Pool).GetFormTask(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		return ReadModelState{}, nil
	}
	if err != nil {
		return ReadModelState{}, err
	}
	return ReadModelState{Found: true, Status: t.Status, ArchiveReference: t.ArchiveReference,
		Revision: t.Revision, InTrashbin: t.InTrashbin}, nil
}

// DiscardRevision deletes a revision that will not be applied; a promoted one stays.
func (a *Activities) DiscardRevision(ctx context.Context, c ContentRef) error {
	return store.New(a.Pool).DeleteRevision(ctx, c.MessageID, c.Revision.ID)
}

// CheckAndProject runs the checks of an update's content and, when they find no error, its projection
// (projectState), or discards a revision they find invalid: the work of a save or of the checks before
// Archive as one local activity. Each step is idempotent, so a retried attempt does them again, but for
// the checks of a revision already promoted.
func (a *Activities) CheckAndProject(ctx context.Context, in CheckAndProjectInput) (CheckAndProjectResult, error) {
	var res CheckAndProjectResult
	var err error
	if res.Findings, err = a.check(ctx, in); err != nil || len(res.Findings.Errors) > 0 || in.Project == nil {
		return res, err
	}
	pr, err := a.projectState(ctx, *in.Project)
	res.Ref = pr.Ref
	return res, err
}

// CheckAndArchive runs the checks of a submission's revision, if it has one, and, when they find no error,
// archives it (archive), or discards a revision they find invalid: a submission to the archive as one
// local activity. An attempt retried after the archive committed finds the archive (Archive is exactly
// once) and, its revision being promoted, skips the checks.
func (a *Activities) CheckAndArchive(ctx context.Context, in CheckAndArchiveInput) (CheckAndArchiveResult, error) {
	var res CheckAndArchiveResult
	var err error
	if in.Archive.Content.Revision.ID != 0 {
		res.Findings, err = a.check(ctx, CheckAndProjectInput{Content: in.Archive.Content, Forms: true, Attachments: true,
			ServiceCode: in.ServiceCode, ServiceEdition: in.ServiceEdition, Final: true})
		if err != nil || len(res.Findings.Errors) > 0 {
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
	r := newReads(store.New(a.Pool), in.Content)
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
