package formtask

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postbox/postbox/store"
)

// Revisions of a form task: the payloads of one PUT or POST, stored before the workflow is asked to take
// them, and promoted to the message's content when it does.

// RevisionKind says what a revision changes.
type RevisionKind string

// Kinds of revision: a PUT of the whole form set, a PUT of one sub-form, a POST of one attachment, and
// the changes of one existing form or attachment (content_changes.go).
const (
	RevisionKindReplace           RevisionKind = "Replace"
	RevisionKindSubForm           RevisionKind = "SubForm"
	RevisionKindAttachment        RevisionKind = "Attachment"
	RevisionKindDeleteForm        RevisionKind = "DeleteForm"
	RevisionKindDeleteAttachment  RevisionKind = "DeleteAttachment"
	RevisionKindReplaceAttachment RevisionKind = "ReplaceAttachment"
)

// RevisionForm is a form as submitted.
type RevisionForm struct {
	Type              string // MainForm or SubForm
	DataFormatID      string
	DataFormatVersion int
	Name              string
	FormData          string
}

// RevisionAttachment is an attachment as submitted, decoded.
type RevisionAttachment struct {
	Name           string
	FileName       string
	AttachmentType string
	// Data is the content of an attachment that came inside a request body; package formtask saves it in
	// the object store, which fills SHA256 and Size, before the revision is written.
	Data   []byte
	SHA256 []byte
	Size   int64
}

// NewRevision is the content of one PUT or POST on a form task.
type NewRevision struct {
	MessageID    string
	Kind         RevisionKind
	TargetFormID int64 // SubForm: the form to change, 0 adds one; DeleteForm: the form to delete
	// TargetAttachmentID is the attachment a DeleteAttachment or ReplaceAttachment changes.
	TargetAttachmentID int64
	Forms              []RevisionForm
	Attachments        []RevisionAttachment
	// Audit, when set, is written to the message audit log when the revision is promoted, in that
	// transaction and at that time.
	Audit *store.MessageAuditEntry
}

// Revision is a stored revision without its payload.
type Revision struct {
	ID           int64
	MessageID    string
	Kind         RevisionKind
	TargetFormID int64
	// TargetAttachmentID is the attachment a DeleteAttachment or ReplaceAttachment changes.
	TargetAttachmentID int64
	Digest             []byte
	Promoted           bool
	PromotedRef        int64 // the form or attachment id written, once promoted
}

// DigestHex is the digest as the workflow carries it.
func (r Revision) DigestHex() string { return hex.EncodeToString(r.Digest) }

// ErrBadRevision is returned for a revision whose kind does not fit its content or its message.
var ErrBadRevision = errors.New("bad revision")

// CreateRevision stores a revision's payloads in one transaction and returns its id and digest.
func (q Store) CreateRevision(ctx context.Context, nr NewRevision) (Revision, error) {
	switch {
	case nr.Kind == RevisionKindReplace:
	case nr.Kind == RevisionKindSubForm && len(nr.Forms) == 1 && len(nr.Attachments) == 0:
	case nr.Kind == RevisionKindAttachment && len(nr.Forms) == 0 && len(nr.Attachments) == 1:
	case nr.Kind == RevisionKindDeleteForm && nr.TargetFormID > 0 && len(nr.Forms) == 0 && len(nr.Attachments) == 0:
	case nr.Kind == RevisionKindDeleteAttachment && nr.TargetAttachmentID > 0 && len(nr.Forms) == 0 && len(nr.Attachments) == 0:
	case nr.Kind == RevisionKindReplaceAttachment && nr.TargetAttachmentID > 0 && len(nr.Forms) == 0 && len(nr.Attachments) == 1:
	default:
		return Revision{}, fmt.Errorf("%w: kind %q with %d forms and %d attachments", ErrBadRevision, nr.Kind, len(nr.Forms), len(nr.Attachments))
	}
	sums := make([][]byte, len(nr.Attachments))
	for i, a := range nr.Attachments {
		if len(a.SHA256) != sha256.Size {
			return Revision{}, fmt.Errorf("%w: attachment %d is not in the object store", ErrBadRevision, i)
		}
		sums[i] = a.SHA256
	}
	r := Revision{MessageID: nr.MessageID, Kind: nr.Kind, TargetFormID: nr.TargetFormID, TargetAttachmentID: nr.TargetAttachmentID,
		Digest: revisionDigest(nr, sums)}
	if len(nr.Attachments) == 0 { // one statement, where a transaction would take four round trips
		var err error
		r.ID, err = q.insertFormsRevision(ctx, nr, r.Digest)
		return r, err
	}
	err := q.inTx(ctx, func(q Store) error {
		var err error
		if r.ID, err = q.insertRevision(ctx, nr, r.Digest); err != nil {
			return err
		}
		for i, f := range nr.Forms {
			if _, err := q.DB().Exec(ctx, `INSERT INTO revision_forms (revision_id, ordinal, type, data_format_id, data_format_version, name, form_data)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.ID, i, f.Type, f.DataFormatID, f.DataFormatVersion, f.Name, f.FormData); err != nil {
				return fmt.Errorf("form %d: %w", i, err)
			}
		}
		for i, a := range nr.Attachments {
			if _, err := q.DB().Exec(ctx, `INSERT INTO revision_attachments (revision_id, ordinal, name, file_name, attachment_type, file_size, sha256)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.ID, i, a.Name, a.FileName, a.AttachmentType, a.Size, a.SHA256); err != nil {
				return fmt.Errorf("attachment %d: %w", i, err)
			}
		}
		return nil
	})
	return r, err
}

// revisionDigest is the SHA-256 of an unambiguous encoding of the revision (length-prefixed fields), with
// the SHA-256 of each attachment's bytes in sums.
func revisionDigest(nr NewRevision, sums [][]byte) []byte {
	h := sha256.New()
	put := func(h hash.Hash, s string) {
		_ = binary.Write(h, binary.BigEndian, uint64(len(s)))
		h.Write([]byte(s))
	}
	put(h, nr.MessageID)
	put(h, string(nr.Kind))
	put(h, fmt.Sprint(nr.TargetFormID))
	if nr.TargetAttachmentID != 0 { // only the kinds that have one, so the digests of the others stay as they were
		put(h, "target-attachment")
		put(h, fmt.Sprint(nr.TargetAttachmentID))
	}
	for _, f := range nr.Forms {
		put(h, "form")
		put(h, f.Type)
		put(h, f.DataFormatID)
		put(h, fmt.Sprint(f.DataFormatVersion))
		put(h, f.Name)
		put(h, f.FormData)
	}
	for i, a := range nr.Attachments {
		put(h, "attachment")
		put(h, a.Name)
		put(h, a.FileName)
		put(h, a.AttachmentType)
		put(h, string(sums[i]))
	}
	return h.Sum(nil)
}

// insertFormsRevision writes a revision without attachments and its forms in one statement.
func (q Store) insertFormsRevision(ctx context.Context, nr NewRevision, digest []byte) (int64, error) {
	n := len(nr.Forms)
	types, ids, names, data := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	versions := make([]int32, n)
	for i, f := range nr.Forms {
		types[i], ids[i], versions[i], names[i], data[i] = f.Type, f.DataFormatID, int32(f.DataFormatVersion), f.Name, f.FormData
	}
	var id int64
	err := q.DB().QueryRow(ctx, `WITH r AS (
			INSERT INTO form_revisions (message_id, kind, target_form_id, target_attachment_id, digest, audit)
			VALUES ($1, $2, NULLIF($3, 0), NULLIF($4, 0), $5, $6) RETURNING id),
		forms AS (
			INSERT INTO revision_forms (revision_id, ordinal, type, data_format_id, data_format_version, name, form_data)
			SELECT r.id, f.ord - 1, f.type, f.data_format_id, f.data_format_version, f.name, f.form_data
			FROM r, unnest($7::text[], $8::text[], $9::int[], $10::text[], $11::text[])
				WITH ORDINALITY AS f(type, data_format_id, data_format_version, name, form_data, ord))
		SELECT id FROM r`,
		nr.MessageID, nr.Kind, nr.TargetFormID, nr.TargetAttachmentID, digest, nr.Audit, types, ids, versions, names, data).Scan(&id)
	return id, revisionInsertError(err)
}

// revisionInsertError is store.ErrNotFound when the message (or the form or attachment the revision names) was
// deleted since the caller read it: a change racing a delete for good.
func revisionInsertError(err error) error {
	if pg := (*pgconn.PgError)(nil); errors.As(err, &pg) && pg.Code == "23503" {
		return store.ErrNotFound
	}
	return err
}

// insertRevision writes the row of a revision (its digest may follow, as the streamed one's does).
func (q Store) insertRevision(ctx context.Context, nr NewRevision, digest []byte) (int64, error) {
	if digest == nil {
		digest = []byte{}
	}
	var id int64
	err := q.DB().QueryRow(ctx, `INSERT INTO form_revisions (message_id, kind, target_form_id, target_attachment_id, digest, audit)
		VALUES ($1, $2, NULLIF($3, 0), NULLIF($4, 0), $5, $6) RETURNING id`,
		nr.MessageID, nr.Kind, nr.TargetFormID, nr.TargetAttachmentID, digest, nr.Audit).Scan(&id)
	if err = revisionInsertError(err); err != nil {
		return 0, err
	}
	return id, nil
}

// GetRevision returns a revision without its payload, or store.ErrNotFound.
func (q Store) GetRevision(ctx context.Context, id int64) (Revision, error) {
	return scanRevision(q.DB().QueryRow(ctx, getRevisionSQL, id))
}

const getRevisionSQL = `SELECT id, message_id, kind, COALESCE(target_form_id, 0), COALESCE(target_attachment_id, 0), digest,
			promoted_at IS NOT NULL, COALESCE(promoted_ref, 0)
		FROM form_revisions WHERE id = $1`

func scanRevision(row pgx.Row) (Revision, error) {
	var r Revision
	err := row.Scan(&r.ID, &r.MessageID, &r.Kind, &r.TargetFormID, &r.TargetAttachmentID, &r.Digest, &r.Promoted, &r.PromotedRef)
	return r, store.NotFound(err)
}

// RevisionForChecks is what the checks of a revision read: the revision, its forms and attachments, and
// the service edition of its task (ServiceErr the error of that lookup, store.ErrNotFound for none).
type RevisionForChecks struct {
	Revision    Revision
	Forms       []FormContent
	Attachments []AttachmentInfo
	Service     store.ServiceDetail
	ServiceErr  error
}

// ReadRevisionForChecks reads what the checks of revision id need in one round trip instead of four: GetRevision (its error is returned), RevisionContent and GetService.
func (q Store) ReadRevisionForChecks(ctx context.Context, id int64, serviceCode string, serviceEdition int) (RevisionForChecks, error) {
	var rc RevisionForChecks
	b := &pgx.Batch{}
	b.Queue(getRevisionSQL, id)
	b.Queue(revisionFormsSQL, id)
	b.Queue(revisionAttachmentsSQL, id, store.AttachmentHeadBytes)
	b.Queue(store.ServiceDetailSQL, serviceCode, serviceEdition)
	results := q.DB().SendBatch(ctx, b)
	defer results.Close()
	var err error
	if rc.Revision, err = scanRevision(results.QueryRow()); err != nil {
		return rc, err
	}
	if rc.Forms, rc.Attachments, err = collectContent(results.Query); err != nil {
		return rc, err
	}
	rc.ServiceErr = store.ScanServiceDetail(results.QueryRow(), &rc.Service)
	return rc, results.Close()
}

// collectContent collects the rows of forms and of attachments that two queries return, as content does.
func collectContent(query func() (pgx.Rows, error)) ([]FormContent, []AttachmentInfo, error) {
	rows, err := query()
	if err != nil {
		return nil, nil, err
	}
	forms, err := pgx.CollectRows(rows, pgx.RowToStructByPos[FormContent])
	if err != nil {
		return nil, nil, err
	}
	rows, err = query()
	if err != nil {
		return nil, nil, err
	}
	atts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[AttachmentInfo])
	return forms, atts, err
}

// DeleteRevision removes a revision of a message that was not promoted; a promoted one stays as the record
// of its promotion.
func (q Store) DeleteRevision(ctx context.Context, messageID string, id int64) error {
	_, err := q.DB().Exec(ctx, `DELETE FROM form_revisions WHERE id = $1 AND message_id = $2 AND promoted_at IS NULL`, id, messageID)
	return err
}

// DeleteStaleRevisions removes revisions that were never promoted and are older than age: their update
// never reached a workflow, or was refused.
func (q Store) DeleteStaleRevisions(ctx context.Context, age time.Duration) (int64, error) {
	tag, err := q.DB().Exec(ctx, `DELETE FROM form_revisions WHERE promoted_at IS NULL AND created_at < now() - $1::interval`, age)
	return tag.RowsAffected(), err
}

// FormContent is a form with its data, of a message or of a revision.
type FormContent struct {
	ID                int64 // 0 for a revision's form
	Type              string
	DataFormatID      string
	DataFormatVersion int
	Name              string
	FormData          string
}

// AttachmentInfo describes an attachment with only its first bytes.
type AttachmentInfo struct {
	ID             int64 // 0 for a revision's attachment
	Name           string
	FileName       string
	AttachmentType string
	FileSize       int64
	SHA256         []byte
	Head           []byte `json:"-"` // the first store.AttachmentHeadBytes bytes (fewer for a smaller file)
}

// MessageContent returns the current forms and attachments of a message, in order.
func (q Store) MessageContent(ctx context.Context, messageID string) ([]FormContent, []AttachmentInfo, error) {
	return q.content(ctx, messageFormsSQL, messageAttachmentsSQL, messageID)
}

// The statements of MessageContent and RevisionContent: the forms of $1, and its attachments with the
// first $2 bytes of each.
const (
	messageFormsSQL       = `SELECT id, type, data_format_id, data_format_version, name, form_data FROM forms WHERE message_id = $1 ORDER BY ordinal`
	messageAttachmentsSQL = `SELECT a.id, a.name, a.file_name, a.attachment_type, a.file_size, a.sha256,
			(SELECT substring(b.head FROM 1 FOR $2) FROM blobs b WHERE b.sha256 = a.sha256)
		FROM attachments a WHERE a.message_id = $1 ORDER BY a.ordinal`
	revisionFormsSQL       = `SELECT 0::bigint, type, data_format_id, data_format_version, name, form_data FROM revision_forms WHERE revision_id = $1 ORDER BY ordinal`
	revisionAttachmentsSQL = `SELECT 0::bigint, a.name, a.file_name, a.attachment_type, a.file_size, a.sha256,
			(SELECT substring(b.head FROM 1 FOR $2) FROM blobs b WHERE b.sha256 = a.sha256)
		FROM revision_attachments a WHERE a.revision_id = $1 ORDER BY a.ordinal`
)

// RevisionContent returns the forms and attachments of a revision, in order.
func (q Store) RevisionContent(ctx context.Context, revisionID int64) ([]FormContent, []AttachmentInfo, error) {
	return q.content(ctx, revisionFormsSQL, revisionAttachmentsSQL, revisionID)
}

func (q Store) content(ctx context.Context, formsSQL, attachmentsSQL string, key any) ([]FormContent, []AttachmentInfo, error) {
	sqls, args := []string{formsSQL, attachmentsSQL}, [][]any{{key}, {key, store.AttachmentHeadBytes}}
	return collectContent(func() (pgx.Rows, error) {
		sql, a := sqls[0], args[0]
		sqls, args = sqls[1:], args[1:]
		return q.DB().Query(ctx, sql, a...)
	})
}
