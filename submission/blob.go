package submission

import (
	"context"
	"io"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/postbox/postbox/store"
)

// blobChunk is how many bytes of an archived attachment one query reads: large enough that a query's cost
// is small beside its bytes (at 1 MiB a download ran at 0.6-0.7 of the bare read, at 4 MiB at 0.8-1.0;
// BenchmarkSubmissionDownload200MB), small enough that a download holds about 17 MB.
const blobChunk = 4 << 20

// BlobReader reads an archived attachment's bytes a chunk per query, only when a read reaches them, so a
// download holds two chunks in memory however large the file and a Range reads only what it covers. While
// one chunk is read out, the next is fetched (one query at a time, so db may be a transaction), so the
// database's time and the client's overlap. It is the io.ReadSeeker http.ServeContent needs. It keeps ctx
// because io.Reader has no place for one; ctx bounds every query. It is not safe for concurrent use.
type BlobReader struct {
	ctx    context.Context
	db     store.DBTX
	sha256 []byte
	size   int64
	off    int64
	buf    []byte // the chunk starting at bufOff
	bufOff int64
	// next is the chunk at nextOff being fetched, nil when none is; spare is the buffer it will not need.
	next    chan fetched
	nextOff int64
	spare   []byte
}

type fetched struct {
	data []byte
	err  error
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
		if err := r.load(start); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.off-start:])
	r.off += int64(n)
	return n, nil
}

// load makes the chunk at start the current one, from the fetch ahead when it is that chunk, and starts
// fetching the chunk after it.
func (r *BlobReader) load(start int64) error {
	var got fetched
	if r.next != nil && r.nextOff == start {
		got = <-r.next
		r.next = nil
	} else {
		r.settle() // the current chunk stays whole until the new one is there: buf and spare never share
		got.data, got.err = r.fetch(start, r.spare[:0])
	}
	if got.err != nil {
		return got.err
	}
	r.spare, r.buf, r.bufOff = r.buf, got.data, start
	if ahead := start + blobChunk; ahead < r.size {
		next := make(chan fetched, 1)
		r.next, r.nextOff = next, ahead
		go func(into []byte) {
			data, err := r.fetch(ahead, into)
			next <- fetched{data, err}
		}(r.spare[:0])
		r.spare = nil
	}
	return nil
}

// settle waits for a fetch ahead that is not wanted and keeps its buffer.
func (r *BlobReader) settle() {
	if r.next != nil {
		r.spare = (<-r.next).data
		r.next = nil
	}
}

// fetch appends the chunk at start to dst, straight from the connection's buffer (DriverBytes): a download
// allocates its two chunks once, not one per query.
func (r *BlobReader) fetch(start int64, dst []byte) ([]byte, error) {
	rows, err := r.db.Query(r.ctx, `SELECT substring(data FROM $2 FOR $3) FROM archived_blobs WHERE sha256 = $1`,
		r.sha256, start+1, blobChunk)
	if err != nil {
		return dst, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return dst, err
		}
		return dst, io.ErrUnexpectedEOF // the archive names bytes that are not stored: never expected
	}
	var chunk pgtype.DriverBytes
	if err := rows.Scan(&chunk); err != nil {
		return dst, err
	}
	if int64(len(chunk)) < min(blobChunk, r.size-start) {
		return dst, io.ErrUnexpectedEOF
	}
	dst = append(dst, chunk...)
	return dst, rows.Err()
}

// Seek sets the offset for the next Read (store.SeekOffset).
func (r *BlobReader) Seek(offset int64, whence int) (int64, error) {
	off, err := store.SeekOffset(r.off, r.size, offset, whence)
	r.off = off
	return off, err
}
