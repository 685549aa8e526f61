package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// File is a content in the store, as the rows that refer to it name it.
type File struct {
	SHA256 []byte
	Size   int64
	Head   []byte // the first HeadBytes bytes (fewer for a smaller file)
}

// Service saves and reads contents: the objects, and their blobs rows in PostgreSQL.
type Service struct {
	db      store.DBTX
	objects *Objects
	log     *slog.Logger
}

// New is the files service over a database and a bucket.
func New(db store.DBTX, objects *Objects, log *slog.Logger) *Service {
	return &Service{db: db, objects: objects, log: log}
}

// Save streams r into the store (past max bytes, or the ceiling when max is negative, it fails with
// ErrTooLarge and keeps nothing) and returns the content's blob. A content already stored keeps its one object: the new one is
// deleted, and the blob is marked as just saved, so the sweeper leaves it alone while the caller refers
// to it.
func (s *Service) Save(ctx context.Context, r io.Reader, max int64, contentType string) (File, error) {
	w, err := s.objects.put(ctx, r, max, contentType)
	if err != nil {
		return File{}, err
	}
	key, err := registerBlob(ctx, s.db, w)
	if err != nil {
		// The object stays for the sweeper: no row names it.
		return File{}, err
	}
	if key != w.Key {
		if err := s.objects.remove(context.WithoutCancel(ctx), w.Key); err != nil {
			s.log.Warn("a duplicate object is left for the sweeper", "key", w.Key, "error", err)
		}
	}
	return File{SHA256: w.SHA256, Size: w.Size, Head: w.Head}, nil
}

// In is the service with its blobs rows written and read in db (a transaction), so that a row which
// refers to a content is written with its blob, and a caller holding a connection asks for no other.
func (s *Service) In(db store.DBTX) *Service {
	c := *s
	c.db = db
	return &c
}

// Ceiling is the most bytes any one file may have (files.Config.MaxSize).
func (s *Service) Ceiling() int64 { return s.objects.maxSize }

// SaveBytes saves a content held in memory.
func (s *Service) SaveBytes(ctx context.Context, data []byte, contentType string) (File, error) {
	return s.Save(ctx, bytes.NewReader(data), -1, contentType)
}

// Open reads n bytes of a content from off (n < 0: to its end). A digest no blob has is ErrMissing.
func (s *Service) Open(ctx context.Context, sha256 []byte, off, n int64) (io.ReadCloser, error) {
	key, err := objectKey(ctx, s.db, sha256)
	if err != nil {
		return nil, err
	}
	return s.objects.get(ctx, key, off, n)
}

// Reader reads a content as an io.ReadSeeker (http.ServeContent's Range requests). It asks the store at
// once, so that a missing object or an outage is its error rather than a download cut after its headers;
// a read after a seek elsewhere asks again from there, so a range costs what it reads. Close it.
func (s *Service) Reader(ctx context.Context, sha256 []byte) (*Reader, error) {
	r := &Reader{ctx: ctx, objects: s.objects}
	var err error
	if r.key, r.size, err = blobOf(ctx, s.db, sha256); err != nil {
		return nil, err
	}
	if r.body, err = r.objects.get(ctx, r.key, 0, -1); err != nil {
		return nil, err
	}
	return r, nil
}

// Reader is a content being read; see Service.Reader.
type Reader struct {
	ctx     context.Context
	objects *Objects
	key     string
	size    int64
	off     int64
	body    io.ReadCloser // the bytes from bodyOff on
	bodyOff int64
}

// Size is the content's size.
func (r *Reader) Size() int64 { return r.size }

func (r *Reader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.body != nil && r.bodyOff != r.off {
		_ = r.body.Close()
		r.body = nil
	}
	if r.body == nil {
		body, err := r.objects.get(r.ctx, r.key, r.off, -1)
		if err != nil {
			return 0, err
		}
		r.body, r.bodyOff = body, r.off
	}
	n, err := r.body.Read(p)
	r.off += int64(n)
	r.bodyOff = r.off
	if err == io.EOF && r.off < r.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// Seek moves where the next Read starts (the request under way is dropped only if that read is elsewhere).
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	off, err := store.SeekOffset(r.off, r.size, offset, whence)
	r.off = off
	return off, err
}

// Close ends the request under way, if any.
func (r *Reader) Close() error {
	if r.body == nil {
		return nil
	}
	err := r.body.Close()
	r.body = nil
	return err
}

// Bytes reads a whole content that is known to be small (a print).
func (s *Service) Bytes(ctx context.Context, sha256 []byte) ([]byte, error) {
	r, err := s.Open(ctx, sha256, 0, -1)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Presign returns a URL that downloads a content without credentials until it expires, under the name
// and type given. The caller checks access first.
func (s *Service) Presign(ctx context.Context, sha256 []byte, expiry time.Duration, fileName, contentType string) (*url.URL, error) {
	key, err := objectKey(ctx, s.db, sha256)
	if err != nil {
		return nil, err
	}
	return s.objects.presign(ctx, key, expiry, fileName, contentType)
}

// registerBlob makes w the one object of its content, or marks the content's existing blob as just saved;
// it returns the key of the content's object.
func registerBlob(ctx context.Context, db store.DBTX, w written) (string, error) {
	var key string
	err := db.QueryRow(ctx, `INSERT INTO blobs (sha256, object_key, size, head) VALUES ($1, $2, $3, $4)
		ON CONFLICT (sha256) DO UPDATE SET touched_at = now()
		RETURNING object_key`, w.SHA256, w.Key, w.Size, w.Head).Scan(&key)
	return key, err
}

func objectKey(ctx context.Context, db store.DBTX, sha256 []byte) (string, error) {
	key, _, err := blobOf(ctx, db, sha256)
	return key, err
}

// blobOf returns the object key and size of a content; ErrMissing when no blob has that digest.
func blobOf(ctx context.Context, db store.DBTX, sha256 []byte) (key string, size int64, err error) {
	err = db.QueryRow(ctx, `SELECT object_key, size FROM blobs WHERE sha256 = $1`, sha256).Scan(&key, &size)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, fmt.Errorf("%w: no blob of digest %x", ErrMissing, sha256)
	}
	return key, size, err
}
