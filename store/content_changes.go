package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The changes of one existing form or attachment of a form task, made by promoting a revision
// (PromoteRevision): a sub-form deleted, an attachment deleted, an attachment given new content.

// ErrContentGone is returned when the form or attachment a revision changes is no longer on the message
// (another change removed it after the revision was made).
var ErrContentGone = errors.New("the form or attachment is no longer on the message")

// deleteSubForm deletes a sub-form of a message; the main form is never deleted.
func (q *Queries) deleteSubForm(ctx context.Context, messageID string, formID int64) error {
	var typ string
	err := q.db.QueryRow(ctx, `DELETE FROM forms WHERE id = $1 AND message_id = $2 AND type = 'SubForm' RETURNING type`,
		formID, messageID).Scan(&typ)
	if err == nil {
		return nil
	}
	if err = NotFound(err); !errors.Is(err, ErrNotFound) {
		return err
	}
	err = q.db.QueryRow(ctx, `SELECT type FROM forms WHERE id = $1 AND message_id = $2`, formID, messageID).Scan(&typ)
	if err == nil {
		return fmt.Errorf("%w: form %d is the %s", ErrBadRevision, formID, typ)
	}
	if errors.Is(NotFound(err), ErrNotFound) {
		return fmt.Errorf("%w: form %d", ErrContentGone, formID)
	}
	return err
}

// deleteAttachment deletes an attachment of a message with its bytes and returns it as it was.
func (q *Queries) deleteAttachment(ctx context.Context, messageID string, attachmentID int64) (AttachmentInfo, error) {
	rows, err := q.db.Query(ctx, `DELETE FROM attachments WHERE id = $1 AND message_id = $2 RETURNING `+changedAttachmentColumns,
		attachmentID, messageID)
	if err != nil {
		return AttachmentInfo{}, err
	}
	a, err := pgx.CollectExactlyOneRow(rows, scanChangedAttachment)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, fmt.Errorf("%w: attachment %d", ErrContentGone, attachmentID)
	}
	return a, err
}

// replaceAttachment gives an attachment of a message the name and content (blob) of the revision's attachment and
// returns it as it is then; it keeps its id, its place among the attachments and its type.
func (q *Queries) replaceAttachment(ctx context.Context, revisionID int64, messageID string, attachmentID int64) (AttachmentInfo, error) {
	var fileName string
	err := q.db.QueryRow(ctx, `SELECT file_name FROM revision_attachments WHERE revision_id = $1 AND ordinal = 0`, revisionID).Scan(&fileName)
	if err != nil {
		return AttachmentInfo{}, NotFound(err)
	}
	rows, err := q.db.Query(ctx, `UPDATE attachments a SET name = r.name, file_name = r.file_name, content_type = $4,
			file_size = r.file_size, sha256 = r.sha256
		FROM revision_attachments r WHERE r.revision_id = $1 AND r.ordinal = 0 AND a.id = $3 AND a.message_id = $2
		RETURNING a.id, a.name, a.file_name, a.attachment_type, a.file_size, a.sha256`,
		revisionID, messageID, attachmentID, ContentTypeOf(fileName))
	if err != nil {
		return AttachmentInfo{}, err
	}
	a, err := pgx.CollectExactlyOneRow(rows, scanChangedAttachment)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, fmt.Errorf("%w: attachment %d", ErrContentGone, attachmentID)
	}
	return a, err
}

// The actions of the message audit log that change the content of a form task.
const (
	AuditPutSubForm        = "PutSubForm"
	AuditDeleteForm        = "DeleteForm"
	AuditAddAttachment     = "AddAttachment"
	AuditReplaceAttachment = "ReplaceAttachment"
	AuditDeleteAttachment  = "DeleteAttachment"
)
