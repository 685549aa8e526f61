package correspondence

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// Upload is an attachment uploaded for sends to come.
type Upload struct {
	ID          string
	FileName    string
	ContentType string
	Size        int64
	SHA256      [sha256.Size]byte
}

// Upload streams the file fileName from body into the object store for the owner's sends, checking its
// name before a byte is read and its content as it arrives (not empty, not an executable, what its name
// says; at most the store's ceiling, POSTBOX_FILES_MAX_SIZE). No transaction is open while the client
// sends, and a refused or cut upload leaves no upload (bytes already stored are the sweeper's). It
// returns the upload to reference by its ID.
func (s *Service) Upload(ctx context.Context, owner, fileName string, body io.Reader) (Upload, error) {
	if v := formtask.CheckFileName(fileName); v != nil {
		return Upload{}, refuse(BadInput, "fileName: %s", v.Message)
	}
	up := Upload{ID: uuid.NewString(), FileName: fileName, ContentType: store.ContentTypeOf(fileName)}
	f, err := s.files.Save(ctx, formtask.NewCheckedReader(body, fileName), -1, up.ContentType)
	var v *formtask.Violation
	switch {
	case errors.Is(err, files.ErrTooLarge):
		return Upload{}, refuse(TooLarge, "the file is larger than %d bytes", s.files.Ceiling())
	case errors.As(err, &v):
		return Upload{}, refuse(BadInput, "%s", v.Message)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Upload{}, refuse(BadInput, "the body was cut short before its end; nothing was kept")
	case err != nil:
		return Upload{}, err
	}
	up.Size = f.Size
	copy(up.SHA256[:], f.SHA256)
	_, err = s.pool.Exec(ctx, `INSERT INTO correspondence_uploads (id, service_owner_code, file_name, content_type, file_size, sha256, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, up.ID, owner, up.FileName, up.ContentType, up.Size, up.SHA256[:], clock.Now())
	return up, err
}

// UploadCeiling is the most bytes an upload may have.
func (s *Service) UploadCeiling() int64 { return s.files.Ceiling() }

// saveInline saves the bytes of the attachments that came inside a send in the object store, and names
// them by their blobs as uploads are named.
func (s *Service) saveInline(ctx context.Context, list []Attachment) error {
	for i := range list {
		a := &list[i]
		if a.UploadID != "" {
			continue
		}
		f, err := s.files.SaveBytes(ctx, a.Data, store.ContentTypeOf(a.FileName))
		if err != nil {
			return err
		}
		copy(a.sum[:], f.SHA256)
		a.size = f.Size
	}
	return nil
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
