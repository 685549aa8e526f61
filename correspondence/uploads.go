package correspondence

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// MaxUploadBytes is the largest attachment an upload takes while the bytes live in PostgreSQL.
const MaxUploadBytes = 512 << 20

// Upload is an attachment uploaded for sends to come.
type Upload struct {
	ID          string
	FileName    string
	ContentType string
	Size        int64
	SHA256      [sha256.Size]byte
}

// Upload streams the file fileName from body into the store for the owner's sends, checking its name
// before a byte is read and its content as it arrives (not empty, not an executable, what its name says;
// at most MaxUploadBytes). Each chunk is written on its own, so no transaction stays open while the client
// sends; a refused or cut upload removes what it wrote. It returns the upload to reference by its ID.
func (s *Service) Upload(ctx context.Context, owner, fileName string, body io.Reader) (Upload, error) {
	if v := formtask.CheckFileName(fileName); v != nil {
		return Upload{}, refuse(BadInput, "fileName: %s", v.Message)
	}
	up := Upload{ID: uuid.NewString(), FileName: fileName, ContentType: store.ContentTypeOf(fileName)}
	check, sum := formtask.NewContentCheck(fileName), sha256.New()
	err := s.streamChunks(ctx, up.ID, io.TeeReader(io.LimitReader(body, MaxUploadBytes+1), io.MultiWriter(sum, check)), &up.Size)
	if err == nil && up.Size > MaxUploadBytes {
		err = refuse(TooLarge, "the file is larger than %d bytes", int64(MaxUploadBytes))
	}
	if err == nil {
		err = check.Close()
	}
	var v *formtask.Violation
	switch {
	case errors.As(err, &v):
		err = refuse(BadInput, "%s", v.Message)
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = refuse(BadInput, "the body was cut short before its end; nothing was kept")
	}
	if err == nil {
		copy(up.SHA256[:], sum.Sum(nil))
		err = store.InTx(ctx, s.pool, func(tx pgx.Tx) error { return keepUpload(ctx, tx, owner, up, clock.Now()) })
	}
	if err != nil {
		// The client may be gone: what was written goes whatever the request's context.
		if _, delErr := s.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM correspondence_upload_chunks WHERE upload_id = $1`, up.ID); delErr != nil {
			return Upload{}, errors.Join(err, delErr)
		}
		return Upload{}, err
	}
	return up, nil
}

// streamChunks writes r as chunks of upload id, one statement each, counting the bytes into size. Only
// io.EOF ends the file: a body cut short (io.ErrUnexpectedEOF from the connection) is an error.
func (s *Service) streamChunks(ctx context.Context, id string, r io.Reader, size *int64) error {
	buf := make([]byte, store.AttachmentChunkSize)
	for seq := 0; ; seq++ {
		n, end, err := fill(r, buf)
		if err != nil {
			return err
		}
		if n > 0 {
			*size += int64(n)
			if *size > MaxUploadBytes {
				return nil
			}
			if _, err := s.pool.Exec(ctx, `INSERT INTO correspondence_upload_chunks (upload_id, seq, data) VALUES ($1, $2, $3)`,
				id, seq, buf[:n]); err != nil {
				return err
			}
		}
		if end {
			return nil
		}
	}
}

// fill reads r until buf is full or r ends (end), and returns how much it read.
func fill(r io.Reader, buf []byte) (n int, end bool, err error) {
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}

// keepUpload moves the chunks of up into the shared chunks under their SHA-256 (unless bytes of that
// digest are there already) and writes the upload's row.
func keepUpload(ctx context.Context, tx pgx.Tx, owner string, up Upload, at time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO shared_attachment_chunks (sha256, seq, data)
		SELECT $2, seq, data FROM correspondence_upload_chunks WHERE upload_id = $1
		ON CONFLICT (sha256, seq) DO NOTHING`, up.ID, up.SHA256[:]); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM correspondence_upload_chunks WHERE upload_id = $1`, up.ID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO correspondence_uploads (id, service_owner_code, file_name, content_type, file_size, sha256, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, up.ID, owner, up.FileName, up.ContentType, up.Size, up.SHA256[:], at)
	return err
}

var uploadIDPattern = shipmentIDPattern

// resolveUploads fills in the attachments of list that reference an upload of owner's (UploadID) with
// its bytes' digest and size, and its file name where the send gives none; an id that is not such an
// upload is refused naming the attachment.
func resolveUploads(ctx context.Context, db store.DBTX, owner string, list []Attachment) error {
	for i := range list {
		a := &list[i]
		if a.UploadID == "" {
			continue
		}
		var fileName string
		var sum []byte
		err := pgx.ErrNoRows
		if uploadIDPattern.MatchString(a.UploadID) {
			err = db.QueryRow(ctx, `SELECT file_name, file_size, sha256 FROM correspondence_uploads
				WHERE id = $1 AND service_owner_code = $2`, a.UploadID, owner).Scan(&fileName, &a.size, &sum)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return refuse(BadInput, "Attachments[%d].AttachmentId: none of your uploads has this id", i)
		}
		if err != nil {
			return err
		}
		copy(a.sum[:], sum)
		if a.FileName == "" {
			a.FileName = fileName
		}
	}
	return nil
}
