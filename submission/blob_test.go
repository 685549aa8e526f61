package submission_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/submission"
)

// An archived attachment of several chunks reads back byte for byte, read straight through, in odd
// sizes and after seeks across chunk boundaries (the fetch ahead discarded and taken up again), and its
// ZIP holds it with the digests its manifest lists.
func TestArchivedAttachmentReadsByteExact(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	data := make([]byte, 9<<20+12345) // three chunks, the last a short one
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.UintN(256))
	}
	sum := sha256.Sum256(data)
	attachments, err := json.Marshal([]map[string]any{{"ID": 1, "Name": "Stor", "FileName": "stor.bin", "AttachmentType": "Dokumentasjon",
		"FileSize": len(data), "SHA256": base64.StdEncoding.EncodeToString(sum[:])}})
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO archived_blobs (sha256, data) VALUES ($1, $2)`, sum[:], data)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO prints (document_digest, pdf) VALUES (sha256('t'::bytea), '%PDF-1.4 t'::bytea)`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest)
		VALUES ('AR42', 'a42', now(), 'tester', '[{"ID":7,"Type":"MainForm","DataFormatID":"1","DataFormatVersion":1,"Name":"Skjema","FormData":"<Skjema>æøå</Skjema>"}]', $1, sha256('t'::bytea))`, attachments)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO submissions (archive_reference, seq, message_id, service_owner_code, service_code, service_edition, reportee_id, archived_at, filled_by, signed_by)
		SELECT 'AR42', 42, 'a42', 'FJE', '4711', 2, min(id), now(), 'tester', 'tester' FROM parties`)
	require.NoError(t, err)

	subs := submission.New(pool, events.NewBuilder("http://postbox.test"))
	actor := submission.Actor{ServiceOwner: "FJE", OrganizationNumber: "310900028", APIKeyName: "k", AuthMethod: "test", RequestID: "r"}
	_, a, r, err := subs.Attachment(ctx, actor, "AR42", 1)
	require.NoError(t, err)
	assert.Equal(t, "application/octet-stream", a.ContentType())
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got), "read straight through")

	for _, at := range []int64{0, 4<<20 - 3, 8<<20 + 17, 4 << 20, 5, 9 << 20} {
		_, err := r.Seek(at, io.SeekStart)
		require.NoError(t, err)
		buf := make([]byte, 700_001)
		n, err := io.ReadFull(r, buf)
		if err == io.ErrUnexpectedEOF {
			err = nil
		}
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data[at:at+int64(n)], buf[:n]), "from %d", at)
	}
	end, err := r.Seek(-10, io.SeekEnd)
	require.NoError(t, err)
	tail, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, data[end:], tail)

	// The wrong owner, and a part the submission does not have, are not found.
	_, _, _, err = subs.Attachment(ctx, submission.Actor{ServiceOwner: "NSF"}, "AR42", 1)
	assert.ErrorIs(t, err, submission.ErrNotFound)
	_, _, _, err = subs.Attachment(ctx, actor, "AR42", 2)
	assert.ErrorIs(t, err, submission.ErrNotFound)

	sub, err := subs.OpenZIP(ctx, actor, "AR42")
	require.NoError(t, err)
	var zipped bytes.Buffer
	require.NoError(t, subs.WriteZIP(ctx, &zipped, sub))
	m := submission.ManifestOf(sub)
	require.Len(t, m.Parts, 3)
	assert.Equal(t, "attachments/1/stor.bin", m.Parts[1].Path)
	assert.Equal(t, "forms/7.xml", m.Parts[0].Path)
	formSum := sha256.Sum256([]byte("<Skjema>æøå</Skjema>"))
	assert.Equal(t, formSum[:], sub.Forms[0].SHA256, "the digest of the XML's UTF-8 bytes")

	// Bytes that are not what the archive lists never leave as a whole ZIP: the writer stops at that entry.
	_, err = pool.Exec(ctx, `UPDATE archived_blobs SET data = overlay(data PLACING '\x00'::bytea FROM 5000000) WHERE sha256 = $1`, sum[:])
	require.NoError(t, err)
	err = subs.WriteZIP(ctx, io.Discard, sub)
	require.ErrorContains(t, err, "attachments/1/stor.bin does not match its SHA-256")

	var lines int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM submission_log WHERE archive_reference = 'AR42' AND action = 'Download'`).Scan(&lines))
	assert.Equal(t, 2, lines, "the attachment and the ZIP; refusals log nothing")
}
