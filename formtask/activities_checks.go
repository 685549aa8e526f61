package formtask

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/postbox/postbox/formtask/xsd"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store"
)

// reads are what the checks of one content read from the store, each read once: validateForms and
// checkAttachments of one CheckAndProject share them.
type reads struct {
	q          Store
	c          ContentRef
	rev        *Revision
	revContent *content
	msgContent *content
	services   map[[2]any]store.ServiceDetail
}

type content struct {
	forms []FormContent
	atts  []AttachmentInfo
}

func newReads(q Store, c ContentRef) *reads {
	return &reads{q: q, c: c, services: map[[2]any]store.ServiceDetail{}}
}

// revision is the revision c refers to, checked (Activities.revision).
func (r *reads) revision(ctx context.Context, a *Activities) (Revision, error) {
	if r.rev == nil {
		rev, err := a.revision(ctx, r.q, r.c)
		if err != nil {
			return rev, err
		}
		r.rev = &rev
	}
	return *r.rev, nil
}

func (r *reads) revisionContent(ctx context.Context) ([]FormContent, []AttachmentInfo, error) {
	if r.revContent == nil {
		forms, atts, err := r.q.RevisionContent(ctx, r.c.Revision.ID)
		if err != nil {
			return nil, nil, err
		}
		r.revContent = &content{forms, atts}
	}
	return r.revContent.forms, r.revContent.atts, nil
}

func (r *reads) messageContent(ctx context.Context) ([]FormContent, []AttachmentInfo, error) {
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
		forms []FormContent
		kind  = RevisionKindReplace // the current content is a whole form set too
		rev   Revision
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
	if kind == RevisionKindReplace {
		types := make([]string, 0, len(forms))
		for _, form := range forms {
			types = append(types, form.Type)
		}
		if v := CheckMainForms(types); v != nil {
			fail(v)
		}
	}
	if kind == RevisionKindSubForm && rev.TargetFormID != 0 {
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
	each, err := a.validateEach(ctx, svc, forms)
	return f.Join(each), err
}

// validateEach checks that each of forms is a form of svc, and validates it against its schema.
func (a *Activities) validateEach(ctx context.Context, svc store.ServiceDetail, forms []FormContent) (Findings, error) {
	var f Findings
	for _, form := range forms {
		if _, v := FormOf(svc, form.Type, form.DataFormatID, form.DataFormatVersion); v != nil {
			f = f.Join(findings(v))
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

// CheckForms validates forms, the whole form set of a form task of svc that is not stored as a revision
// (a pre-fill waiting for its VisibleDateTime), as a submission's forms are validated: one MainForm, each
// a form of the service, each valid against its schema.
func (a *Activities) CheckForms(ctx context.Context, svc store.ServiceDetail, forms []RevisionForm) (Findings, error) {
	var f Findings
	types := make([]string, len(forms))
	contents := make([]FormContent, len(forms))
	for i, fm := range forms {
		types[i] = fm.Type
		contents[i] = FormContent{Type: fm.Type, DataFormatID: fm.DataFormatID, DataFormatVersion: fm.DataFormatVersion,
			Name: fm.Name, FormData: fm.FormData}
	}
	if v := CheckMainForms(types); v != nil {
		f = findings(v)
	}
	each, err := a.validateEach(ctx, svc, contents)
	return f.Join(each), err
}

// findings are rule violations as validation errors.
func findings(vs ...*Violation) Findings {
	var f Findings
	for _, v := range vs {
		f.Errors = append(f.Errors, ValidationEntry{FieldName: v.Field, ErrorMessage: v.Message})
	}
	return f
}

func (a *Activities) validateForm(ctx context.Context, form FormContent) (Findings, error) {
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
	var (
		atts  []AttachmentInfo
		added []AttachmentInfo // of the revision, by ordinal
		rev   Revision
		err   error
	)
	if in.Content.Revision.ID != 0 {
		if rev, err = r.revision(ctx, a); err != nil {
			return Findings{}, err
		}
		switch rev.Kind {
		case RevisionKindSubForm, RevisionKindDeleteForm, RevisionKindDeleteAttachment:
			return Findings{}, nil
		case RevisionKindAttachment, RevisionKindReplaceAttachment: // beside those the message has
			if _, atts, err = r.messageContent(ctx); err != nil {
				return Findings{}, err
			}
			atts = slices.DeleteFunc(slices.Clone(atts), func(att AttachmentInfo) bool { return att.ID == rev.TargetAttachmentID })
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
	for _, att := range added {
		rule, ok := store.RuleFor(svc.AttachmentRules, att.AttachmentType)
		if !ok || !rule.IsXsdValidationRequired {
			continue
		}
		issues, err := a.validateAttachmentXML(ctx, svc, rule, att)
		if err != nil {
			return Findings{}, err
		}
		f = f.Join(issues)
	}
	return f, nil
}

// validateAttachmentXML validates an attachment of a revision against the schema of its rule.
func (a *Activities) validateAttachmentXML(ctx context.Context, svc store.ServiceDetail, rule store.AttachmentRule,
	att AttachmentInfo) (Findings, error) {
	r, err := a.Files.Open(ctx, att.SHA256, 0, xsd.DefaultMaxBytes+1) // more is refused as too large
	if err != nil {
		return Findings{}, err
	}
	data, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil {
		return Findings{}, err
	}
	fileName := att.FileName
	return a.validateXML(ctx, AttachmentRuleSchemaKey(svc.ServiceCode, svc.ServiceEdition, rule.AttachmentRuleID), data,
		func(is xsd.Issue) string {
			return fmt.Sprintf("attachment %s (%s): %s", fileName, rule.AttachmentTypeName, is.ErrorMessage)
		})
}
