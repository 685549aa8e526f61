package api_test

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/store/storetest"
)

// Downloads of files from PresignFrom bytes on are a redirect to a short-lived pre-signed URL of the
// object store, after the same access check as a streamed one; smaller files stream as before. The
// store's outage is a 503 with Retry-After, asked before any header of the file is sent.
func TestDownloadsOfLargeFilesRedirectToTheStore(t *testing.T) {
	pool := storetest.New(t)
	tokens, err := testTokens()
	require.NoError(t, err)
	srv, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), Logger: quiet, Tokens: tokens, PublicURL: testPublicURL,
		PresignFrom: 100, PresignExpiry: time.Minute})
	require.NoError(t, err)
	var id string
	var size int64
	var sum []byte
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id::text, file_size, sha256 FROM attachments
		WHERE message_id = 'a3100808' ORDER BY ordinal LIMIT 1`).Scan(&id, &size, &sum))
	require.Greater(t, size, int64(100), "the demo's attachment is large enough to redirect")
	path := "/api/" + orgO1 + "/messages/a3100808/attachments/" + id

	r := getAs(t, srv, ssnP1, path)
	require.Equal(t, http.StatusTemporaryRedirect, r.Code, r.Body.String())
	assert.Equal(t, "no-store", r.Header().Get("Cache-Control"))
	u := r.Header().Get("Location")
	assert.Contains(t, u, "X-Amz-Expires=60")
	res, err := http.Get(u)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	got := sha256.Sum256(body)
	assert.Equal(t, sum, got[:], "the URL gives the attachment's bytes")

	// A caller who may not see the message gets its refusal, and no URL.
	other := getAs(t, srv, ssnP2, path)
	requireProblem(t, other, http.StatusForbidden)
	assert.Empty(t, other.Header().Get("Location"))

	// Below the threshold the bytes stream.
	small, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), Logger: quiet, Tokens: tokens, PublicURL: testPublicURL,
		PresignFrom: size + 1, PresignExpiry: time.Minute})
	require.NoError(t, err)
	r = getAs(t, small, ssnP1, path)
	require.Equal(t, http.StatusOK, r.Code)
	got = sha256.Sum256(r.Body.Bytes())
	assert.Equal(t, sum, got[:])
	// Last-Modified is the message's last change as an instant: the store keeps Oslo's wall-clock time.
	var changed time.Time
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT last_changed FROM messages WHERE id = 'a3100808'`).Scan(&changed))
	assert.Equal(t, clock.Instant(changed).UTC().Format(http.TimeFormat), r.Header().Get("Last-Modified"))
}

// An object store that does not answer is a 503 with Retry-After, on downloads and on uploads, like an
// outage of the database; nothing is written.
func TestObjectStoreOutageIsUnavailable(t *testing.T) {
	pool := storetest.New(t)
	cfg := storetest.FilesConfig(t, pool.Config().ConnConfig.Database)
	cfg.Endpoint = storetest.UnusedAddr(t)
	objects, err := files.Connect(cfg)
	require.NoError(t, err)
	tokens, err := testTokens()
	require.NoError(t, err)
	srv, err := api.New(api.Options{Pool: pool, Files: files.New(pool, objects, quiet), Logger: quiet, Tokens: tokens, PublicURL: testPublicURL})
	require.NoError(t, err)
	var id string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id::text FROM attachments WHERE message_id = 'a3100808' ORDER BY ordinal LIMIT 1`).Scan(&id))

	r := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3100808/attachments/"+id)
	requireProblem(t, r, http.StatusServiceUnavailable)
	assert.NotEmpty(t, r.Header().Get("Retry-After"))
	assert.Empty(t, r.Header().Get("Content-Disposition"), "no header of the file that was not sent")

	fje := fjeSender(t)
	up := do(t, srv, request{method: http.MethodPost, path: "/api/serviceowner/correspondence/attachments?fileName=vedlegg.pdf",
		header: map[string]string{"ApiKey": fje.key, "Authorization": "Bearer " + fje.token, "Content-Type": "application/octet-stream"},
		body:   "%PDF-1.7 vedlegg"})
	requireProblem(t, up, http.StatusServiceUnavailable)
	assert.NotEmpty(t, up.Header().Get("Retry-After"))
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM correspondence_uploads`))
}
