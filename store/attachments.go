package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
)

// AttachmentChunkSize is the size of the pieces attachment bytes are stored in.
const AttachmentChunkSize = 256 << 10

// ContentTypeOf guesses an attachment's media type from its file name.
func ContentTypeOf(fileName string) string {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(fileName))); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Attachment describes an attachment of a message; its bytes are read with OpenAttachment.
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
	SHA256          []byte // of the bytes, e.g. for an ETag
	// Shared: the bytes are stored once for every message that has them (shared_attachment_chunks, by
	// SHA256), as a service owner's shipment sends them; otherwise they are the attachment's own.
	Shared bool
}

// attachmentJSONFields builds an Attachment as JSON from attachments a, for GetMessage's aggregate
// (bytea becomes base64, which encoding/json decodes into []byte).
const attachmentJSONFields = `'ID', a.id, 'Name', a.name, 'FileName', a.file_name, 'AttachmentType', a.attachment_type,
	'ContentType', a.content_type, 'Encrypted', a.encrypted, 'SigningLocked', a.signing_locked,
	'SignedByDefault', a.signed_by_default, 'FileSize', a.file_size, 'SHA256', encode(a.sha256, 'base64'), 'Shared', a.shared`

// GetAttachment returns the metadata of an attachment of a message of the reportee, or ErrNotFound.
func (q *Queries) GetAttachment(ctx context.Context, reporteeID int64, messageID string, attachmentID int64) (Attachment, error) {
	var a Attachment
	err := q.db.QueryRow(ctx, `SELECT a.id, a.name, a.file_name, a.attachment_type, a.content_type, a.encrypted,
			a.signing_locked, a.signed_by_default, a.file_size, a.sha256, a.shared
		FROM attachments a JOIN messages m ON m.id = a.message_id
		WHERE a.id = $1 AND a.message_id = $2 AND m.reportee_id = $3`, attachmentID, messageID, reporteeID).
		Scan(&a.ID, &a.Name, &a.FileName, &a.AttachmentType, &a.ContentType, &a.Encrypted,
			&a.SigningLocked, &a.SignedByDefault, &a.FileSize, &a.SHA256, &a.Shared)
	return a, notFound(err)
}

// AttachmentReader reads the bytes of an attachment from attachment_chunks, one chunk per query and only
// when a read reaches it, so a download never holds more than one chunk in memory and a range reads only
// the chunks it covers. Seeking is arithmetic (chunks are AttachmentChunkSize bytes, the last one shorter),
// so it is the io.ReadSeeker http.ServeContent needs. It keeps ctx because io.Reader has no place for one;
// ctx bounds every query. It is not safe for concurrent use.
type AttachmentReader struct {
	ctx    context.Context
	db     DBTX
	id     int64
	shared []byte // the SHA-256 of shared bytes; nil for the attachment's own
	size   int64
	off    int64
	seq    int64 // chunk held in buf; -1 for none
	buf    []byte
}

// OpenAttachment returns a reader over the bytes of a, at offset 0. Nothing is read until the first Read.
func (q *Queries) OpenAttachment(ctx context.Context, a Attachment) *AttachmentReader {
	r := &AttachmentReader{ctx: ctx, db: q.db, id: a.ID, size: a.FileSize, seq: -1}
	if a.Shared {
		r.shared = a.SHA256
	}
	return r
}

// Read reads from the current offset, at most to the end of the chunk the offset is in.
func (r *AttachmentReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	seq := r.off / AttachmentChunkSize
	if seq != r.seq {
		if err := r.load(seq); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.off-seq*AttachmentChunkSize:])
	r.off += int64(n)
	return n, nil
}

// load reads chunk seq and checks its length, so a chunk table that does not match file_size (a
// replaced or damaged attachment) fails the download instead of sending wrong bytes.
func (r *AttachmentReader) load(seq int64) error {
	r.buf, r.seq = nil, -1
	var data []byte
	var err error
	if r.shared != nil {
		err = r.db.QueryRow(r.ctx, `SELECT data FROM shared_attachment_chunks WHERE sha256 = $1 AND seq = $2`, r.shared, seq).Scan(&data)
	} else {
		err = r.db.QueryRow(r.ctx, `SELECT data FROM attachment_chunks WHERE attachment_id = $1 AND seq = $2`, r.id, seq).Scan(&data)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("attachment %d: chunk %d is missing", r.id, seq)
	}
	if err != nil {
		return fmt.Errorf("attachment %d: chunk %d: %w", r.id, seq, err)
	}
	if want := min(r.size-seq*AttachmentChunkSize, AttachmentChunkSize); int64(len(data)) != want {
		return fmt.Errorf("attachment %d: chunk %d has %d bytes, want %d", r.id, seq, len(data), want)
	}
	r.buf, r.seq = data, seq
	return nil
}

// Seek sets the offset of the next Read. Offsets past the end are allowed (Read then returns io.EOF).
func (r *AttachmentReader) Seek(offset int64, whence int) (int64, error) {
	off, err := SeekOffset(r.off, r.size, offset, whence)
	if err != nil {
		return r.off, fmt.Errorf("attachment %d: %w", r.id, err)
	}
	r.off = off
	return off, nil
}

// SeekOffset is the offset io.Seeker's Seek(offset, whence) moves to, for a reader at off of size bytes:
// the one rule of the chunked readers of stored bytes. Past the end is allowed, before the start is not.
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
