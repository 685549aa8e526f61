package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

const chunk = store.AttachmentChunkSize

// insertAttachment stores data as an attachment of messageID in chunks, as the importer does.
func insertAttachment(t *testing.T, pool *pgxpool.Pool, messageID string, data []byte) int64 {
	t.Helper()
	ctx := context.Background()
	sum := sha256.Sum256(data)
	var id int64
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO attachments (message_id, ordinal, name, file_name, attachment_type,
			content_type, encrypted, signing_locked, signed_by_default, file_size, sha256)
		VALUES ($1, 99, 'Stor fil', 'stor.bin', 'Vedlegg', 'application/octet-stream', false, false, false, $2, $3)
		RETURNING id`, messageID, len(data), sum[:]).Scan(&id))
	for seq := 0; seq*chunk < len(data); seq++ {
		_, err := pool.Exec(ctx, `INSERT INTO attachment_chunks (attachment_id, seq, data) VALUES ($1, $2, $3)`,
			id, seq, data[seq*chunk:min(len(data), (seq+1)*chunk)])
		require.NoError(t, err)
	}
	return id
}

func TestAttachmentsOfTheDataset(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	org := partyID(t, pool, o1)
	demo := demoMessages(t)

	for _, id := range []string{"a3100808", "a3100150", "a3100304", "a3100486"} {
		m, err := q.GetMessage(ctx, org, id)
		require.NoError(t, err)
		require.Len(t, m.Attachments, len(demo[id].Attachments))
		for i, a := range m.Attachments {
			got, err := io.ReadAll(q.OpenAttachment(ctx, a))
			require.NoError(t, err)
			assert.Equal(t, demo[id].Attachments[i].Data, got, "%s attachment %d", id, i)
			sum := sha256.Sum256(got)
			assert.Equal(t, sum[:], a.SHA256)
		}
	}

	m, err := q.GetMessage(ctx, org, "a3100808")
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		reportee  int64
		messageID string
	}{
		{"another reportee", partyID(t, pool, p1), "a3100808"},
		{"an attachment of another message", org, "a3100150"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := q.GetAttachment(ctx, tc.reportee, tc.messageID, m.Attachments[0].ID)
			assert.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}

func TestAttachmentReaderRanges(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	org := partyID(t, pool, o1)

	data := make([]byte, 1_000_000) // three full chunks and a short one
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	id := insertAttachment(t, pool, "a3101102", data)
	a, err := q.GetAttachment(ctx, org, "a3101102", id)
	require.NoError(t, err)
	require.EqualValues(t, len(data), a.FileSize)

	t.Run("whole, one chunk per read at most", func(t *testing.T) {
		r := q.OpenAttachment(ctx, a)
		var got []byte
		buf := make([]byte, 3*chunk)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.LessOrEqual(t, n, chunk)
		}
		assert.True(t, bytes.Equal(data, got))
	})

	size := int64(len(data))
	for _, tc := range []struct {
		name     string
		off, len int64
	}{
		{"start", 0, 10},
		{"across the first boundary", chunk - 5, 10},
		{"exactly the second chunk", chunk, chunk},
		{"across two boundaries", chunk - 1, 2*chunk + 2},
		{"last byte of a chunk", 3*chunk - 1, 1},
		{"into the short last chunk", 3*chunk - 3, 6},
		{"tail", size - 7, 7},
		{"everything", 0, size},
		{"at the end", size, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := q.OpenAttachment(ctx, a)
			pos, err := r.Seek(tc.off, io.SeekStart)
			require.NoError(t, err)
			require.Equal(t, tc.off, pos)
			got, err := io.ReadAll(io.LimitReader(r, tc.len))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data[tc.off:tc.off+tc.len], got), "bytes %d+%d", tc.off, tc.len)
		})
	}

	t.Run("seeking", func(t *testing.T) {
		r := q.OpenAttachment(ctx, a)
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
			{"bytes=262140-262150", data[chunk-4 : chunk+7]},
			{"bytes=999990-", data[size-10:]},
			{"bytes=-5", data[size-5:]},
		} {
			req := httptest.NewRequest(http.MethodGet, "/a", nil)
			req.Header.Set("Range", tc.rangeHeader)
			rec := httptest.NewRecorder()
			http.ServeContent(rec, req, a.FileName, time.Time{}, q.OpenAttachment(ctx, a))
			assert.Equal(t, http.StatusPartialContent, rec.Code, tc.rangeHeader)
			assert.True(t, bytes.Equal(tc.want, rec.Body.Bytes()), tc.rangeHeader)
		}
	})

	t.Run("a damaged chunk table fails instead of sending wrong bytes", func(t *testing.T) {
		_, err := pool.Exec(ctx, `UPDATE attachment_chunks SET data = substring(data from 1 for 100) WHERE attachment_id = $1 AND seq = 1`, id)
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `DELETE FROM attachment_chunks WHERE attachment_id = $1 AND seq = 2`, id)
		require.NoError(t, err)

		r := q.OpenAttachment(ctx, a)
		_, err = r.Seek(chunk, io.SeekStart)
		require.NoError(t, err)
		_, err = r.Read(make([]byte, 10))
		assert.ErrorContains(t, err, "chunk 1 has 100 bytes")
		_, err = r.Seek(2*chunk, io.SeekStart)
		require.NoError(t, err)
		_, err = r.Read(make([]byte, 10))
		assert.ErrorContains(t, err, "chunk 2 is missing")
		got, err := io.ReadAll(io.LimitReader(q.OpenAttachment(ctx, a), 10))
		require.NoError(t, err, "the chunks before are still fine")
		assert.Equal(t, data[:10], got)
	})
}
