package store

import (
	"context"
	"fmt"
	"io"
	"mime"
	"path/filepath"
	"strings"
)

// ContentTypeOf guesses an attachment's media type from its file name.
func ContentTypeOf(fileName string) string {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(fileName))); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Attachment describes an attachment of a message; its bytes are the blob of its SHA256 (package files).
type Attachment struct {
	ID              int64
	Name            string
	FileName        string
	AttachmentType  string
	ContentType     string
	Encrypted       bool
	SigningLocked   bool
	SignedByDefault bool
	FileSize        int64
	SHA256          []byte // of the bytes: names their blob, and is the ETag
}

// attachmentJSONFields builds an Attachment as JSON from attachments a, for GetMessage's aggregate
// (bytea becomes base64, which encoding/json decodes into []byte).
const attachmentJSONFields = `'ID', a.id, 'Name', a.name, 'FileName', a.file_name, 'AttachmentType', a.attachment_type,
	'ContentType', a.content_type, 'Encrypted', a.encrypted, 'SigningLocked', a.signing_locked,
	'SignedByDefault', a.signed_by_default, 'FileSize', a.file_size, 'SHA256', encode(a.sha256, 'base64')`

// GetAttachment returns the metadata of an attachment of a message of the reportee, or ErrNotFound.
func (q *Queries) GetAttachment(ctx context.Context, reporteeID int64, messageID string, attachmentID int64) (Attachment, error) {
	var a Attachment
	err := q.db.QueryRow(ctx, `SELECT a.id, a.name, a.file_name, a.attachment_type, a.content_type, a.encrypted,
			a.signing_locked, a.signed_by_default, a.file_size, a.sha256
		FROM attachments a JOIN messages m ON m.id = a.message_id
		WHERE a.id = $1 AND a.message_id = $2 AND m.reportee_id = $3`, attachmentID, messageID, reporteeID).
		Scan(&a.ID, &a.Name, &a.FileName, &a.AttachmentType, &a.ContentType, &a.Encrypted,
			&a.SigningLocked, &a.SignedByDefault, &a.FileSize, &a.SHA256)
	return a, NotFound(err)
}

// SeekOffset is the offset io.Seeker's Seek(offset, whence) moves to, for a reader at off of size bytes:
// the one rule of the readers of stored bytes. Past the end is allowed, before the start is not.
func SeekOffset(off, size, offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += off
	case io.SeekEnd:
		offset += size
	default:
		return off, fmt.Errorf("invalid whence %d", whence)
	}
	if offset < 0 {
		return off, fmt.Errorf("negative offset %d", offset)
	}
	return offset, nil
}

// AttachmentHeadBytes is how many leading bytes of an attachment a form task's AttachmentInfo carries, for the checks
// of its content.
const AttachmentHeadBytes = 512
