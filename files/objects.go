// Package files keeps the bytes of attachments, prints and archived parts in S3-compatible object storage,
// one object per content however many messages, shipments and archives have it, while PostgreSQL keeps
// what names them (the blobs table: each content's SHA-256, size, first bytes and object key).
//
// A content is written before its digest is known (it streams), so each upload goes to a fresh, random
// key that is never written again; the blobs row then makes the key the one object of its digest, and an
// upload whose content was already there deletes its own object. Objects are never overwritten, and only
// the sweeper deletes them: a blob no row refers to after a grace period, an object no blob names.
package files

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/postbox/postbox/store"
)

// Config says where the objects are (POSTBOX_S3_*, read in package config).
type Config struct {
	Endpoint  string // host:port of the S3 API
	TLS       bool   // https to the endpoint
	Region    string
	Bucket    string
	AccessKey string
	SecretKey string
	// Prefix starts every object key this deployment writes, and bounds what its sweeper lists.
	Prefix string
	// PartSize is the size of each part of a multipart upload, and so the memory one upload holds.
	PartSize int64
	// MaxSize is the ceiling of any one file, whatever its rule allows (0: 5 GiB).
	MaxSize int64
}

// HeadBytes is how many of a content's first bytes its blob row keeps, for the checks of a file's format
// (formtask's rules) without reading the object.
const HeadBytes = store.AttachmentHeadBytes

// Objects is the bucket.
type Objects struct {
	client   *minio.Client
	bucket   string
	region   string
	prefix   string
	partSize uint64
	maxSize  int64
	// parts are buffers of a part's size for the first part of each put, reused: most contents fit one.
	parts *sync.Pool
}

// Connect makes the client of the bucket; it asks the store nothing (see EnsureBucket), so a process
// starts while the store is down and answers what needs it as unavailable.
func Connect(cfg Config) (*Objects, error) {
	if cfg.PartSize < 5<<20 {
		return nil, fmt.Errorf("the part size %d is below S3's minimum of 5 MiB", cfg.PartSize)
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.TLS, Region: cfg.Region,
	})
	if err != nil {
		return nil, err
	}
	return &Objects{client: client, bucket: cfg.Bucket, region: cfg.Region, prefix: cfg.Prefix, partSize: uint64(cfg.PartSize),
		maxSize: cmp.Or(cfg.MaxSize, 5<<30), parts: &sync.Pool{New: func() any {
			b := make([]byte, cfg.PartSize)
			return &b
		}}}, nil
}

// EnsureBucket creates the bucket when it is missing (postbox migrate and dev; an operator's bucket
// usually exists, with its retention rules).
func (o *Objects) EnsureBucket(ctx context.Context) error {
	exists, err := o.client.BucketExists(ctx, o.bucket)
	if err != nil || exists {
		return storeError(err)
	}
	err = o.client.MakeBucket(ctx, o.bucket, minio.MakeBucketOptions{Region: o.region})
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.Code == "BucketAlreadyOwnedByYou" || resp.Code == "BucketAlreadyExists") {
		return nil // made by another process meanwhile
	}
	return storeError(err)
}

// Ping tells whether the bucket answers.
func (o *Objects) Ping(ctx context.Context) error {
	_, err := o.client.BucketExists(ctx, o.bucket)
	return storeError(err)
}

// written is what Put stored.
type written struct {
	Key    string
	SHA256 []byte
	Size   int64
	Head   []byte
}

// ErrTooLarge is returned when a content grows past its limit while it streams; nothing of it is kept.
var ErrTooLarge = errors.New("the file is larger than its limit")

// put streams r into a new object under a fresh key, in parts of the configured size (so memory does
// not grow with the file), hashing it as it goes; past max bytes (negative: the ceiling, which bounds any
// max) it stops with ErrTooLarge and the upload is aborted.
func (o *Objects) put(ctx context.Context, r io.Reader, max int64, contentType string) (written, error) {
	if max < 0 || max > o.maxSize {
		max = o.maxSize
	}
	key, err := o.newKey()
	if err != nil {
		return written{}, err
	}
	m := &metered{r: r, max: max, hash: sha256.New(), head: make([]byte, 0, HeadBytes)}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	opts := minio.PutObjectOptions{PartSize: o.partSize, ContentType: contentType, DisableContentSha256: true}
	// A content that fits in one part goes in one PUT (the client would make even the smallest a
	// multipart upload of three requests); a larger one streams on as a multipart upload.
	first := o.parts.Get().(*[]byte)
	defer o.parts.Put(first)
	n, err := io.ReadFull(m, *first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF: // the content's end: the body's own failures are bodyErrors
		_, err = o.client.PutObject(ctx, o.bucket, key, bytes.NewReader((*first)[:n]), int64(n), opts)
	case err == nil:
		_, err = o.client.PutObject(ctx, o.bucket, key, io.MultiReader(bytes.NewReader(*first), m), -1, opts)
	}
	if err != nil {
		if m.tooLarge {
			return written{}, ErrTooLarge
		}
		if m.readErr != nil {
			return written{}, m.readErr
		}
		return written{}, storeError(err)
	}
	// The store must have the object before a row names it: chaos met a store killed while it completed
	// an upload that, restarted, acknowledged it without keeping it.
	info, err := o.client.StatObject(ctx, o.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return written{}, &Unavailable{err: fmt.Errorf("the object just stored cannot be found: %w", err)}
	}
	if info.Size != m.n {
		return written{}, &Unavailable{err: fmt.Errorf("the store kept %d of the object's %d bytes", info.Size, m.n)}
	}
	return written{Key: key, SHA256: m.hash.Sum(nil), Size: m.n, Head: m.head}, nil
}

func (o *Objects) newKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return o.prefix + hex.EncodeToString(b[:]), nil
}

// get reads n bytes of an object from off (n < 0: to its end).
func (o *Objects) get(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	opts := minio.GetObjectOptions{}
	if off > 0 || n >= 0 {
		end := int64(0) // minio: 0 means to the end when start > 0
		if n >= 0 {
			if n == 0 {
				return io.NopCloser(eofReader{}), nil
			}
			end = off + n - 1
		}
		if err := opts.SetRange(off, end); err != nil {
			return nil, err
		}
	}
	obj, err := o.client.GetObject(ctx, o.bucket, key, opts)
	if err != nil {
		return nil, storeError(err)
	}
	// GetObject is lazy: the first read asks. Ask now, so a missing object or an outage is this call's error.
	if _, err := obj.Stat(); err != nil {
		_ = obj.Close()
		return nil, storeError(err)
	}
	return &objectReader{obj: obj}, nil
}

// presign returns a GET URL for an object that works without credentials until it expires.
func (o *Objects) presign(ctx context.Context, key string, expiry time.Duration, fileName, contentType string) (*url.URL, error) {
	params := url.Values{}
	params.Set("response-content-disposition", fmt.Sprintf("attachment; filename=%q", fileName))
	if contentType != "" {
		params.Set("response-content-type", contentType)
	}
	u, err := o.client.PresignedGetObject(ctx, o.bucket, key, expiry, params)
	return u, storeError(err)
}

// remove deletes an object; one already gone is no error.
func (o *Objects) remove(ctx context.Context, key string) error {
	return storeError(o.client.RemoveObject(ctx, o.bucket, key, minio.RemoveObjectOptions{}))
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// objectReader maps the store's errors while an object is read.
type objectReader struct{ obj *minio.Object }

func (r *objectReader) Read(p []byte) (int, error) {
	n, err := r.obj.Read(p)
	if err != nil && err != io.EOF {
		err = storeError(err)
	}
	return n, err
}

func (r *objectReader) Close() error { return r.obj.Close() }

// metered counts, hashes and bounds what an upload reads, and keeps its first HeadBytes bytes.
type metered struct {
	r        io.Reader
	max      int64
	n        int64
	hash     hash.Hash
	head     []byte
	tooLarge bool
	readErr  error // the client's body failed (cut, stalled): not the store's fault
}

func (m *metered) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.n += int64(n)
	if m.n > m.max {
		m.tooLarge = true
		return 0, ErrTooLarge
	}
	m.hash.Write(p[:n])
	if len(m.head) < HeadBytes {
		m.head = append(m.head, p[:min(n, HeadBytes-len(m.head))]...)
	}
	if err != nil && err != io.EOF {
		// Wrapped: the S3 client takes a bare io.ErrUnexpectedEOF for the end of a short body, and would
		// store a body cut short as if it were whole.
		m.readErr = &bodyError{err: err}
		return n, m.readErr
	}
	if c, ok := m.r.(SumChecker); ok && err == io.EOF {
		if refused := c.CheckSum(m.hash.Sum(nil)); refused != nil {
			m.readErr = &bodyError{err: refused}
			return n, m.readErr
		}
	}
	return n, err
}

// SumChecker is a content that knows the SHA-256 it must have (a client's Content-Digest): Save hashes
// the bytes once, as it stores them, and at their end asks CheckSum; a refusal ends the upload before it
// completes, so nothing is kept.
type SumChecker interface {
	io.Reader
	CheckSum(sha256 []byte) error
}

// bodyError is a failure of the body being uploaded (cut, stalled, refused by a check).
type bodyError struct{ err error }

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// Unavailable is an error of the object store that a later try may not meet: it is down, unreachable, or
// answered 5xx. The API answers it 503 with Retry-After, like an outage of the database.
type Unavailable struct{ err error }

func (e *Unavailable) Error() string     { return "object store unavailable: " + e.err.Error() }
func (e *Unavailable) Unwrap() error     { return e.err }
func (e *Unavailable) Unavailable() bool { return true }

// ErrMissing is returned for an object that is not in the store.
var ErrMissing = errors.New("no such object")

// storeError classifies an error of the S3 client.
func storeError(err error) error {
	if err == nil {
		return nil
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch {
		case resp.StatusCode == http.StatusNotFound || resp.Code == "NoSuchKey":
			return fmt.Errorf("%w: %s", ErrMissing, resp.Key)
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			return &Unavailable{err: err}
		}
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) || errors.Is(err, context.DeadlineExceeded) {
		return &Unavailable{err: err}
	}
	return err
}
