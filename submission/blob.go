package submission

import (
	"context"
	"errors"
	"io"

	"github.com/postbox/postbox/store"
)

// blobChunk is how many bytes of an archived attachment one query reads.
const blobChunk = 256 << 10

// BlobReader reads an archived attachment's bytes a chunk per query, only when a read reaches them, so a
// download holds one chunk in memory however large the file and a Range reads only what it covers. It is
// the io.ReadSeeker http.ServeContent needs. It keeps ctx because io.Reader has no place for one; ctx
// bounds every query. It is not safe for concurrent use.
type BlobReader struct {
	ctx    context.Context
	db     store.DBTX
	sha256 []byte
	size   int64
	off    int64
	buf    []byte // the chunk starting at bufOff
	bufOff int64
}

func newBlobReader(ctx context.Context, db store.DBTX, a Attachment) *BlobReader {
	return &BlobReader{ctx: ctx, db: db, sha256: a.SHA256, size: a.FileSize, bufOff: -1}
}

// Read reads from the current offset, at most to the end of the chunk it is in.
func (r *BlobReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	start := r.off - r.off%blobChunk
	if start != r.bufOff {
		r.buf = r.buf[:0]
		if err := r.db.QueryRow(r.ctx, `SELECT substring(data FROM $2 FOR $3) FROM archived_blobs WHERE sha256 = $1`,
			r.sha256, start+1, blobChunk).Scan(&r.buf); err != nil {
			return 0, err
		}
		if int64(len(r.buf)) < min(blobChunk, r.size-start) {
			return 0, io.ErrUnexpectedEOF // the archive names more bytes than are stored: never expected
		}
		r.bufOff = start
	}
	n := copy(p, r.buf[r.off-start:])
	r.off += int64(n)
	return n, nil
}

// Seek sets the offset for the next Read.
func (r *BlobReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("submission: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("submission: seek before the start")
	}
	r.off = offset
	return offset, nil
}
