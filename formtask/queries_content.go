package formtask

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// The changes of one existing form or attachment of a form task, made by promoting a revision
// (PromoteRevision): a sub-form deleted, an attachment deleted, an attachment given new content.

// errContentGone is returned when the form or attachment a revision changes is no longer on the message
// (another change removed it after the revision was made).
var errContentGone = errors.New("the form or attachment is no longer on the message")

// deleteSubForm deletes a sub-form of a message; the main form is never deleted.
func (q Store) deleteSubForm(ctx context.Context, messageID string, formID int64) error {
	var typ string
	err := q.DB().QueryRow(ctx, `DELETE FROM forms WHERE id = $1 AND message_id = $2 AND type = 'SubForm' RETURNING type`,
		formID, messageID).Scan(&typ)
	if err == nil {
		return nil
	}
	if err = store.NotFound(err); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	err = q.DB().QueryRow(ctx, `SELECT type FROM forms WHERE id = $1 AND message_id = $2`, formID, messageID).Scan(&typ)
	if err == nil {
		return fmt.Errorf("%w: form %d is the %s", ErrBadRevision, formID, typ)
	}
	if errors.Is(store.NotFound(err), store.ErrNotFound) {
		return fmt.Errorf("%w: form %d", errContentGone, formID)
	}
	return err
}

// deleteAttachment deletes an attachment of a message with its bytes and returns it as it was.
func (q Store) deleteAttachment(ctx context.Context, messageID string, attachmentID int64) (AttachmentInfo, error) {
	rows, err := q.DB().Query(ctx, `DELETE FROM attachments WHERE id = $1 AND message_id = $2 RETURNING `+changedAttachmentColumns,
		attachmentID, messageID)
	return changedAttachment(rows, err, attachmentID)
}

// changedAttachment reads the attachment a DELETE or UPDATE … RETURNING changed: none means another change
// removed it first (errContentGone).
func changedAttachment(rows pgx.Rows, err error, attachmentID int64) (AttachmentInfo, error) {
	if err != nil {
		return AttachmentInfo{}, err
	}
	a, err := pgx.CollectExactlyOneRow(rows, scanChangedAttachment)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, fmt.Errorf("%w: attachment %d", errContentGone, attachmentID)
	}
	return a, err
}

// replaceAttachment gives an attachment of a message the name and content (blob) of the revision's attachment and
// returns it as it is then; it keeps its id, its place among the attachments and its type.
func (q Store) replaceAttachment(ctx context.Context, revisionID int64, messageID string, attachmentID int64) (AttachmentInfo, error) {
	var fileName string
	err := q.DB().QueryRow(ctx, `SELECT file_name FROM revision_attachments WHERE revision_id = $1 AND ordinal = 0`, revisionID).Scan(&fileName)
	if err != nil {
		return AttachmentInfo{}, store.NotFound(err)
	}
	rows, err := q.DB().Query(ctx, `UPDATE attachments a SET name = r.name, file_name = r.file_name, content_type = $4,
			file_size = r.file_size, sha256 = r.sha256
		FROM revision_attachments r WHERE r.revision_id = $1 AND r.ordinal = 0 AND a.id = $3 AND a.message_id = $2
		RETURNING a.id, a.name, a.file_name, a.attachment_type, a.file_size, a.sha256`,
		revisionID, messageID, attachmentID, store.ContentTypeOf(fileName))
	return changedAttachment(rows, err, attachmentID)
}

// The actions of the message audit log that change the content of a form task.
const (
	AuditPutSubForm        = "PutSubForm"
	AuditDeleteForm        = "DeleteForm"
	AuditAddAttachment     = "AddAttachment"
	AuditReplaceAttachment = "ReplaceAttachment"
	AuditDeleteAttachment  = "DeleteAttachment"
)
