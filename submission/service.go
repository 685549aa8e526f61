package submission

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

// ErrNotFound answers a reference that is unknown, malformed, or another owner's, and a part that the
// submission does not have: the caller cannot tell them apart.
var ErrNotFound = errors.New("submission: not found")

// MaxPage is the most submissions a page of the queue holds.
const MaxPage = 50

// Service is the queue of every service owner.
type Service struct {
	pool   *pgxpool.Pool
	files  *files.Service
	events events.Builder
}

// New returns the queue over pool and the object store of the archived files; confirmations write their
// events with eb.
func New(pool *pgxpool.Pool, fs *files.Service, eb events.Builder) *Service {
	return &Service{pool: pool, files: fs, events: eb}
}

var referencePattern = regexp.MustCompile(`^AR[0-9]{1,18}$`)

// List returns up to limit (at most MaxPage) submissions of owner after the queue key after (0 from the
// start) that match f, oldest archive first, and whether more follow.
func (s *Service) List(ctx context.Context, owner string, f Filter, after int64, limit int) ([]Submission, bool, error) {
	return listSubmissions(ctx, s.pool, owner, f, after, min(max(limit, 1), MaxPage))
}

// Get returns submission ref of owner.
func (s *Service) Get(ctx context.Context, owner, ref string) (Submission, error) {
	if !referencePattern.MatchString(ref) {
		return Submission{}, ErrNotFound
	}
	return getSubmission(ctx, s.pool, owner, ref, false)
}

// FormData returns the XML of form id of submission ref as it was signed, and logs the download.
func (s *Service) FormData(ctx context.Context, a Actor, ref string, id int64) (Submission, Form, string, error) {
	var (
		form Form
		data string
	)
	sub, err := s.download(ctx, a, ref, func(tx pgx.Tx, sub Submission) (string, error) {
		i := slices.IndexFunc(sub.Forms, func(f Form) bool { return f.ID == id })
		if i < 0 {
			return "", ErrNotFound
		}
		form = sub.Forms[i]
		var err error
		data, err = formData(ctx, tx, ref, id)
		return FormPart(id), err
	})
	return sub, form, data, err
}

// Attachment logs the download of attachment id of submission ref and returns it; its bytes are the blob
// of its SHA256 (package files), read after the log line has committed.
func (s *Service) Attachment(ctx context.Context, a Actor, ref string, id int64) (Submission, Attachment, error) {
	var att Attachment
	sub, err := s.download(ctx, a, ref, func(_ pgx.Tx, sub Submission) (string, error) {
		i := slices.IndexFunc(sub.Attachments, func(at Attachment) bool { return at.ID == id })
		if i < 0 {
			return "", ErrNotFound
		}
		att = sub.Attachments[i]
		return AttachmentPart(id), nil
	})
	return sub, att, err
}

// Print returns the print PDF of submission ref and logs the download.
func (s *Service) Print(ctx context.Context, a Actor, ref string) (Submission, []byte, error) {
	var pdf []byte
	sub, err := s.download(ctx, a, ref, func(tx pgx.Tx, sub Submission) (string, error) {
		var err error
		pdf, err = s.files.In(tx).Bytes(ctx, sub.Print.SHA256)
		return PartPrint, err
	})
	return sub, pdf, err
}

// OpenZIP logs the download of submission ref as a whole and returns it, for WriteZIP.
func (s *Service) OpenZIP(ctx context.Context, a Actor, ref string) (Submission, error) {
	return s.download(ctx, a, ref, func(pgx.Tx, Submission) (string, error) { return PartZIP, nil })
}

// download finds submission ref of a's owner and, in the same transaction, logs the download of the part
// that part names (reading what it must there).
func (s *Service) download(ctx context.Context, a Actor, ref string, part func(pgx.Tx, Submission) (string, error)) (sub Submission, err error) {
	if !referencePattern.MatchString(ref) {
		return Submission{}, ErrNotFound
	}
	err = store.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if sub, err = getSubmission(ctx, tx, a.ServiceOwner, ref, false); err != nil {
			return err
		}
		name, err := part(tx, sub)
		if err != nil {
			return err
		}
		return appendLog(ctx, tx, ref, "Download", name, a)
	})
	return sub, err
}

// Confirm takes submission ref off its owner's unconfirmed queue: in one transaction it records the
// confirmation, logs it, shows it on the party's message and writes the submission.confirmed event. A
// confirmed submission is returned as it is: confirming is idempotent.
func (s *Service) Confirm(ctx context.Context, a Actor, ref string) (sub Submission, err error) {
	if !referencePattern.MatchString(ref) {
		return Submission{}, ErrNotFound
	}
	err = store.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if sub, err = getSubmission(ctx, tx, a.ServiceOwner, ref, true); err != nil || sub.Confirmation != nil {
			return err
		}
		var now time.Time
		if err := tx.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
			return err
		}
		if err := confirmSubmission(ctx, tx, sub, now, a.OrganizationNumber); err != nil {
			return err
		}
		if err := appendLog(ctx, tx, ref, "Confirm", "", a); err != nil {
			return err
		}
		event := s.events.SubmissionEvent(events.Message{MessageID: sub.MessageID, ReporteeID: sub.Reportee.ID, Type: "FormTask",
			ServiceCode: sub.ServiceCode, ServiceEdition: sub.ServiceEdition, Status: taskstatus.Archived, ArchiveReference: sub.ArchiveReference})
		if err := store.NewTx(tx).AppendEvents(ctx, event); err != nil {
			return err
		}
		sub.Confirmation = &Confirmation{At: clock.Local(now), By: a.OrganizationNumber}
		return nil
	})
	return sub, err
}

// Log returns up to limit (at most MaxPage) lines of the log of submission ref of owner after line after,
// oldest first, and whether more follow.
func (s *Service) Log(ctx context.Context, owner, ref string, after int64, limit int) ([]LogEntry, bool, error) {
	if _, err := s.Get(ctx, owner, ref); err != nil {
		return nil, false, err
	}
	return listLog(ctx, s.pool, ref, after, min(max(limit, 1), MaxPage))
}
