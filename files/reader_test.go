package files_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reader is the io.ReadSeeker of downloads: every range reads exactly its bytes, whatever the parts
// the content was uploaded in.
func TestReaderRanges(t *testing.T) {
	svc, pool, bucket := newService(t)
	ctx := context.Background()
	const part = 5 << 20
	data := make([]byte, 2*part+1000) // two full parts and a short one
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	f, err := svc.SaveBytes(ctx, data, "")
	require.NoError(t, err)
	size := int64(len(data))

	for _, tc := range []struct {
		name     string
		off, len int64
	}{
		{"start", 0, 10},
		{"across the first part's end", part - 5, 10},
		{"exactly the second part", part, part},
		{"into the short last part", 2*part - 3, 6},
		{"tail", size - 7, 7},
		{"everything", 0, size},
		{"at the end", size, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := svc.Reader(ctx, f.SHA256)
			require.NoError(t, err)
			defer r.Close()
			pos, err := r.Seek(tc.off, io.SeekStart)
			require.NoError(t, err)
			require.Equal(t, tc.off, pos)
			got, err := io.ReadAll(io.LimitReader(r, tc.len))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data[tc.off:tc.off+tc.len], got), "bytes %d+%d", tc.off, tc.len)
		})
	}

	t.Run("seeking", func(t *testing.T) {
		r, err := svc.Reader(ctx, f.SHA256)
		require.NoError(t, err)
		defer r.Close()
		end, err := r.Seek(0, io.SeekEnd)
		require.NoError(t, err)
		assert.Equal(t, size, end)
		_, err = r.Seek(-3, io.SeekCurrent)
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Equal(t, data[size-3:], got)
		_, err = r.Seek(-1, io.SeekStart)
		assert.Error(t, err)
		_, err = r.Seek(0, 7)
		assert.Error(t, err)
		_, err = r.Seek(size+10, io.SeekStart)
		require.NoError(t, err)
		n, err := r.Read(make([]byte, 1))
		assert.Zero(t, n)
		assert.Equal(t, io.EOF, err)
	})

	t.Run("served with http.ServeContent", func(t *testing.T) {
		for _, tc := range []struct {
			rangeHeader string
			want        []byte
		}{
			{"bytes=5242876-5242890", data[part-4 : part+11]},
			{"bytes=10486750-", data[size-10:]},
			{"bytes=-5", data[size-5:]},
		} {
			r, err := svc.Reader(ctx, f.SHA256)
			require.NoError(t, err)
			req := httptest.NewRequest(http.MethodGet, "/a", nil)
			req.Header.Set("Range", tc.rangeHeader)
			rec := httptest.NewRecorder()
			http.ServeContent(rec, req, "a.bin", time.Time{}, r)
			require.NoError(t, r.Close())
			assert.Equal(t, http.StatusPartialContent, rec.Code, tc.rangeHeader)
			assert.True(t, bytes.Equal(tc.want, rec.Body.Bytes()), tc.rangeHeader)
		}
	})

	t.Run("a damaged object fails instead of sending wrong bytes", func(t *testing.T) {
		var key string
		require.NoError(t, pool.QueryRow(ctx, `SELECT object_key FROM blobs WHERE sha256 = $1`, f.SHA256).Scan(&key))
		require.NoError(t, os.Truncate(filepath.Join(server.Dir, bucket, key), part))
		r, err := svc.Reader(ctx, f.SHA256)
		require.NoError(t, err)
		defer r.Close()
		_, err = io.ReadAll(r)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}
