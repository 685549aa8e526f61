package formtask

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/store"
)

// The changes a promotion makes to a form task's attachments, as AttachmentChange.Change.
const (
	AttachmentAdded    = "Added"
	AttachmentDeleted  = "Deleted"
	AttachmentReplaced = "Replaced" // new content, the same id
)

// AttachmentChange is an attachment a promotion added, deleted or gave new content (without its head).
type AttachmentChange struct {
	Change string
	AttachmentInfo
}

// PromoteRevision makes a revision the message's content in one transaction and returns the id of the form
// or attachment it wrote (0 for a whole form set) and what it did to the message's attachments (nothing
// when the revision was promoted before). Promoting a promoted revision returns the same id again.
func (q Store) PromoteRevision(ctx context.Context, id int64) (int64, []AttachmentChange, error) {
	_, ref, changes, err := q.PromoteCheckedRevision(ctx, id, func(Revision) error { return nil })
	return ref, changes, err
}

// PromoteCheckedRevision is PromoteRevision once check accepts the revision as it locks it (check's error
// is returned as it is, and nothing is written), and returns that revision too: the lookup of GetRevision
// and the promotion in one statement less.
func (q Store) PromoteCheckedRevision(ctx context.Context, id int64, check func(Revision) error) (Revision, int64, []AttachmentChange, error) {
	var (
		r       Revision
		ref     int64
		changes []AttachmentChange
	)
	err := q.inTx(ctx, func(q Store) error {
		var audit *store.MessageAuditEntry
		// The lock orders promotions of one revision; the message lock orders writers of one message.
		err := q.DB().QueryRow(ctx, `SELECT r.id, r.message_id, r.kind, COALESCE(r.target_form_id, 0), COALESCE(r.target_attachment_id, 0),
				r.digest, r.promoted_at IS NOT NULL, COALESCE(r.promoted_ref, 0), r.audit
			FROM form_revisions r JOIN messages m ON m.id = r.message_id WHERE r.id = $1 FOR UPDATE`, id).
			Scan(&r.ID, &r.MessageID, &r.Kind, &r.TargetFormID, &r.TargetAttachmentID, &r.Digest, &r.Promoted, &r.PromotedRef, &audit)
		if err != nil {
			return store.NotFound(err)
		}
		if err := check(r); err != nil {
			return err
		}
		if r.Promoted {
			ref = r.PromotedRef
			return nil
		}
		var a AttachmentInfo
		switch r.Kind {
		case RevisionKindReplace:
			changes, err = q.replaceContent(ctx, id, r.MessageID)
		case RevisionKindSubForm:
			ref, err = q.putSubForm(ctx, id, r.MessageID, r.TargetFormID)
		case RevisionKindAttachment:
			a, err = q.appendAttachment(ctx, id, 0, r.MessageID)
			ref, changes = a.ID, []AttachmentChange{{AttachmentAdded, a}}
		case RevisionKindDeleteForm:
			ref, err = r.TargetFormID, q.deleteSubForm(ctx, r.MessageID, r.TargetFormID)
		case RevisionKindDeleteAttachment:
			a, err = q.deleteAttachment(ctx, r.MessageID, r.TargetAttachmentID)
			ref, changes = r.TargetAttachmentID, []AttachmentChange{{AttachmentDeleted, a}}
		case RevisionKindReplaceAttachment:
			a, err = q.replaceAttachment(ctx, id, r.MessageID, r.TargetAttachmentID)
			ref, changes = r.TargetAttachmentID, []AttachmentChange{{AttachmentReplaced, a}}
		}
		if err != nil {
			return err
		}
		if audit != nil {
			audit.MessageID, audit.At = r.MessageID, clock.Now()
			if err := q.AppendMessageAudit(ctx, *audit); err != nil {
				return err
			}
		}
		_, err = q.DB().Exec(ctx, `UPDATE form_revisions SET promoted_at = now(), promoted_ref = NULLIF($2, 0) WHERE id = $1`, id, ref)
		return err
	})
	return r, ref, changes, err
}

// replaceContent makes a Replace revision the message's forms and attachments and returns what it did to
// the attachments: the message's deleted, the revision's added.
func (q Store) replaceContent(ctx context.Context, revisionID int64, messageID string) ([]AttachmentChange, error) {
	// One round trip for the forms and the list of attachments to copy.
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM forms WHERE message_id = $1`, messageID)
	b.Queue(`DELETE FROM attachments WHERE message_id = $1 RETURNING `+changedAttachmentColumns, messageID)
	b.Queue(`INSERT INTO forms (message_id, ordinal, type, data_format_id, data_format_version, name, form_data)
		SELECT $2, ordinal, type, data_format_id, data_format_version, name, form_data FROM revision_forms WHERE revision_id = $1`,
		revisionID, messageID)
	b.Queue(`SELECT ordinal FROM revision_attachments WHERE revision_id = $1 ORDER BY ordinal`, revisionID)
	results := q.DB().SendBatch(ctx, b)
	defer results.Close()
	if _, err := results.Exec(); err != nil {
		return nil, err
	}
	rows, err := results.Query()
	if err != nil {
		return nil, err
	}
	deleted, err := pgx.CollectRows(rows, scanChangedAttachment)
	if err != nil {
		return nil, err
	}
	changes := make([]AttachmentChange, 0, len(deleted))
	for _, a := range deleted {
		changes = append(changes, AttachmentChange{AttachmentDeleted, a})
	}
	if _, err := results.Exec(); err != nil {
		return nil, err
	}
	rows, err = results.Query()
	if err != nil {
		return nil, err
	}
	ordinals, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, err
	}
	if err := results.Close(); err != nil {
		return nil, err
	}
	for _, o := range ordinals {
		a, err := q.appendAttachment(ctx, revisionID, o, messageID)
		if err != nil {
			return nil, err
		}
		changes = append(changes, AttachmentChange{AttachmentAdded, a})
	}
	return changes, nil
}

// changedAttachmentColumns are the columns of an attachment a change returns, in scanChangedAttachment's order.
const changedAttachmentColumns = `id, name, file_name, attachment_type, file_size, sha256`

func scanChangedAttachment(row pgx.CollectableRow) (AttachmentInfo, error) {
	var a AttachmentInfo
	return a, row.Scan(&a.ID, &a.Name, &a.FileName, &a.AttachmentType, &a.FileSize, &a.SHA256)
}

func (q Store) putSubForm(ctx context.Context, revisionID int64, messageID string, target int64) (int64, error) {
	if target != 0 {
		var typ string
		err := q.DB().QueryRow(ctx, `SELECT type FROM forms WHERE id = $1 AND message_id = $2`, target, messageID).Scan(&typ)
		switch {
		case err == nil && typ != "SubForm":
			return 0, fmt.Errorf("%w: form %d is a %s", ErrBadRevision, target, typ)
		case err == nil:
			_, err = q.DB().Exec(ctx, `UPDATE forms f SET data_format_id = r.data_format_id, data_format_version = r.data_format_version,
					name = r.name, form_data = r.form_data, validation_status = 'NotValidated'
				FROM revision_forms r WHERE r.revision_id = $1 AND f.id = $2`, revisionID, target)
			return target, err
		case !errors.Is(err, pgx.ErrNoRows):
			return 0, err
		}
	}
	var id int64
	err := q.DB().QueryRow(ctx, `INSERT INTO forms (message_id, ordinal, type, data_format_id, data_format_version, name, form_data)
		SELECT $2, (SELECT COALESCE(max(ordinal) + 1, 0) FROM forms WHERE message_id = $2), type, data_format_id, data_format_version, name, form_data
		FROM revision_forms WHERE revision_id = $1 RETURNING id`, revisionID, messageID).Scan(&id)
	return id, err
}

// appendAttachment copies one attachment of a revision (by its ordinal there) to the end of the message's
// attachments and returns it (without its head); it refers to the same blob, so no byte is copied.
func (q Store) appendAttachment(ctx context.Context, revisionID int64, ordinal int, messageID string) (AttachmentInfo, error) {
	var a AttachmentInfo
	err := q.DB().QueryRow(ctx, `SELECT file_name FROM revision_attachments WHERE revision_id = $1 AND ordinal = $2`,
		revisionID, ordinal).Scan(&a.FileName)
	if err != nil {
		return a, store.NotFound(err)
	}
	err = q.DB().QueryRow(ctx, `INSERT INTO attachments (message_id, ordinal, name, file_name, attachment_type, content_type,
			encrypted, signing_locked, signed_by_default, file_size, sha256)
		SELECT $3, (SELECT COALESCE(max(ordinal) + 1, 0) FROM attachments WHERE message_id = $3),
			name, file_name, attachment_type, $4, false, false, false, file_size, sha256
		FROM revision_attachments WHERE revision_id = $1 AND ordinal = $2 RETURNING `+changedAttachmentColumns,
		revisionID, ordinal, messageID, store.ContentTypeOf(a.FileName)).Scan(&a.ID, &a.Name, &a.FileName, &a.AttachmentType, &a.FileSize, &a.SHA256)
	return a, err
}
