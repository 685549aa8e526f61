package api_test

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createAs sends a creating POST as a person, with the Idempotency-Key given (none when "").
func createAs(t *testing.T, h http.Handler, ssn, path, contentType, body, key string) response {
	t.Helper()
	hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssn, "platform:enduser"), "Content-Type": contentType}
	if key != "" {
		hdr["Idempotency-Key"] = key
	}
	return do(t, h, request{method: http.MethodPost, path: path, header: hdr, body: body})
}

func countRows(t *testing.T, pool *pgxpool.Pool, query string, args ...any) (n int) {
	t.Helper()
	require.NoError(t, pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// A retry with the same Idempotency-Key gets the first answer again and creates nothing; the key is the
// caller's own, bound to its request, and its answer expires.
func TestIdempotentRetry(t *testing.T) {
	srv, pool := newServer(t)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"
	body := localRoleBody("Idempotent", localRight("4711", "2", "Read"))
	roles := func() int {
		return countRows(t, pool, `SELECT count(*) FROM role_definitions WHERE role_name = 'Idempotent'`)
	}

	first := createAs(t, srv, ssnP3, defs, "application/json", body, "key-1")
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	assert.Empty(t, first.Header().Get("Idempotent-Replayed"))
	location := first.Header().Get("Location")
	require.NotEmpty(t, location)

	again := createAs(t, srv, ssnP3, defs, "application/json", body, "key-1")
	require.Equal(t, http.StatusCreated, again.Code, again.Body.String())
	assert.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
	assert.Equal(t, location, again.Header().Get("Location"))
	// The draft's sf-string form is the same key.
	quoted := createAs(t, srv, ssnP3, defs, "application/json", body, `"key-1"`)
	assert.Equal(t, "true", quoted.Header().Get("Idempotent-Replayed"))
	assert.Equal(t, 1, roles())

	// The same key for another request is refused; the first answer stays.
	for name, r := range map[string]response{
		"another body":  createAs(t, srv, ssnP3, defs, "application/json", localRoleBody("Idempotent", localRight("4711", "2", "Write")), "key-1"),
		"a longer body": createAs(t, srv, ssnP3, defs, "application/json", body+" ", "key-1"),
		"another path":  createAs(t, srv, ssnP3, "/api/my/authorization/roledefinitions", "application/json", body, "key-1"),
	} {
		p := requireProblem(t, r, http.StatusUnprocessableEntity)
		assert.Equal(t, "urn:postbox:problem:idempotency-key-reused", p["type"], name)
	}
	assert.Equal(t, "true", createAs(t, srv, ssnP3, defs, "application/json", body, "key-1").Header().Get("Idempotent-Replayed"))

	// Another caller's key of the same name is its own: its request runs (and meets the role P3 made).
	other := createAs(t, srv, ssnP1, defs, "application/json", body, "key-1")
	p := requireProblem(t, other, http.StatusConflict)
	assert.Equal(t, "urn:postbox:problem:role-name-taken", p["type"])
	assert.Empty(t, other.Header().Get("Idempotent-Replayed"))

	// A refusal is a complete answer too: its retry gets it again without running.
	bad := createAs(t, srv, ssnP3, defs, "application/json", `{"RoleName":""}`, "key-2")
	requireProblem(t, bad, http.StatusBadRequest)
	replayed := createAs(t, srv, ssnP3, defs, "application/json", `{"RoleName":""}`, "key-2")
	requireProblem(t, replayed, http.StatusBadRequest)
	assert.Equal(t, "true", replayed.Header().Get("Idempotent-Replayed"))
	assert.Equal(t, bad.Body.String(), replayed.Body.String())

	// A request that never read its body (refused before) keeps nothing: its retry runs again.
	forbidden := createAs(t, srv, ssnP5, defs, "application/json", body, "key-3")
	requireProblem(t, forbidden, http.StatusForbidden)
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM idempotent_requests WHERE key = 'key-3'`))

	// A key still held by a running request gets 409; one its request abandoned long ago is taken over.
	_, err := pool.Exec(context.Background(), `UPDATE idempotent_requests SET status = NULL, claimed_at = now() WHERE key = 'key-1'`)
	require.NoError(t, err)
	running := createAs(t, srv, ssnP3, defs, "application/json", body, "key-1")
	p = requireProblem(t, running, http.StatusConflict)
	assert.Equal(t, "urn:postbox:problem:idempotency-key-in-use", p["type"])
	assert.NotEmpty(t, running.Header().Get("Retry-After"))
	_, err = pool.Exec(context.Background(), `UPDATE idempotent_requests SET claimed_at = now() - interval '1 hour' WHERE key = 'key-1'`)
	require.NoError(t, err)
	takenOver := createAs(t, srv, ssnP3, defs, "application/json", body, "key-1")
	requireProblem(t, takenOver, http.StatusConflict) // it ran: the role exists
	assert.Empty(t, takenOver.Header().Get("Idempotent-Replayed"))

	// An expired answer is not replayed: the request runs again.
	_, err = pool.Exec(context.Background(), `UPDATE idempotent_requests SET expires_at = now() - interval '1 second' WHERE key = 'key-2'`)
	require.NoError(t, err)
	assert.Empty(t, createAs(t, srv, ssnP3, defs, "application/json", `{"RoleName":""}`, "key-2").Header().Get("Idempotent-Replayed"))
	assert.Equal(t, 1, roles())
}

func TestIdempotencyKeyRefusals(t *testing.T) {
	srv, pool := newServer(t)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"
	body := localRoleBody("Aldri", localRight("4711", "2", "Read"))
	for name, key := range map[string]string{
		"over-long":        strings.Repeat("k", 256),
		"not ASCII":        "nøkkel",
		"control":          "a\x01b",
		"empty quoted":     `""`,
		"bad quoting":      `"a"b"`,
		"escaped control":  `"\n"`,
		"invalid UTF-8":    "\xff\xfe",
		"quoted over-long": `"` + strings.Repeat("k", 256) + `"`,
	} {
		r := createAs(t, srv, ssnP3, defs, "application/json", body, key)
		requireProblem(t, r, http.StatusBadRequest)
		assert.Contains(t, r.Body.String(), "Idempotency-Key", name)
	}
	req := httptest.NewRequest(http.MethodPost, "http://postbox.test"+defs, strings.NewReader(body))
	req.Header.Set("ApiKey", keyAll)
	req.Header.Set("Authorization", "Bearer "+personToken(t, ssnP3, "platform:enduser"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Idempotency-Key", "a")
	req.Header.Add("Idempotency-Key", "b")
	rec := httptest.NewRecorder()
	serve(t, srv, rec, req)
	requireProblem(t, response{rec}, http.StatusBadRequest)
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM role_definitions WHERE role_name = 'Aldri'`))
	assert.Equal(t, http.StatusCreated, createAs(t, srv, ssnP3, defs, "application/json", body, strings.Repeat("k", 255)).Code)
}

// Parallel requests with one key create once: one runs, the others wait for nothing and get 409 while
// it runs, or its answer once it has.
func TestIdempotentConcurrentRequests(t *testing.T) {
	srv, pool := newServer(t)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"
	body := localRoleBody("Samtidig", localRight("4711", "2", "Read"))
	token := personToken(t, ssnP3, "platform:enduser")
	const n = 8
	results := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, "http://postbox.test"+defs, strings.NewReader(body))
			req.Header.Set("ApiKey", keyAll)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "together")
			<-start
			results[i] = httptest.NewRecorder()
			serve(t, srv, results[i], req)
		}()
	}
	close(start)
	wg.Wait()
	ran := 0
	for _, r := range results {
		switch {
		case r.Code == http.StatusCreated && r.Header().Get("Idempotent-Replayed") == "":
			ran++
		case r.Code == http.StatusCreated:
		default:
			p := requireProblem(t, response{r}, http.StatusConflict)
			assert.Equal(t, "urn:postbox:problem:idempotency-key-in-use", p["type"])
		}
	}
	assert.Equal(t, 1, ran, "exactly one request ran")
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM role_definitions WHERE role_name = 'Samtidig'`))
}

// The creating routes of form tasks are idempotent too: a new task, and a streamed attachment, whose
// body is digested as it streams.
func TestIdempotentFormTaskCreations(t *testing.T) {
	srv, pool := formTaskServer(t)
	messages := "/api/" + orgO1 + "/messages"
	body := `{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2}`
	before := countRows(t, pool, `SELECT count(*) FROM messages`)
	first := createAs(t, srv, ssnP1, messages, "application/hal+json", body, "ny-oppgave")
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	again := createAs(t, srv, ssnP1, messages, "application/hal+json", body, "ny-oppgave")
	require.Equal(t, http.StatusCreated, again.Code, again.Body.String())
	assert.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
	assert.Equal(t, first.Header().Get("Location"), again.Header().Get("Location"))
	assert.Equal(t, first.Body.String(), again.Body.String())
	assert.Equal(t, first.Header().Get("Content-Type"), again.Header().Get("Content-Type"))
	assert.Equal(t, before+1, countRows(t, pool, `SELECT count(*) FROM messages`))

	// A task of its own to attach to, of a service with the attachment type Dokumentasjon.
	task := createAs(t, srv, ssnP1, messages, "application/hal+json", `{"Type":"FormTask","ServiceCode":"6120","ServiceEdition":1}`, "")
	require.Equal(t, http.StatusCreated, task.Code, task.Body.String())
	base := pathOf(t, task.Header().Get("Location")) + "/attachments/streamedattachment?fileName=vedlegg.pdf&attachmentType=Dokumentasjon"
	id := base[strings.LastIndex(strings.Split(base, "/attachments")[0], "/")+1 : strings.Index(base, "/attachments")]
	attachments := func() int {
		return countRows(t, pool, `SELECT count(*) FROM attachments WHERE message_id = $1`, id)
	}
	had := attachments()
	upload := func(body io.Reader, length int64, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://postbox.test"+base, body)
		req.ContentLength = length
		req.Header.Set("ApiKey", keyAll)
		req.Header.Set("Authorization", "Bearer "+personTokenTB(t, ssnP1))
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("Idempotency-Key", key)
		rec := httptest.NewRecorder()
		serve(t, srv, rec, req)
		return rec
	}
	const size = 1<<20 + 7
	up := upload(pdfReader(size), size, "opplasting")
	require.Equal(t, http.StatusCreated, up.Code, up.Body.String())
	re := upload(pdfReader(size), size, "opplasting")
	require.Equal(t, http.StatusCreated, re.Code, re.Body.String())
	assert.Equal(t, "true", re.Header().Get("Idempotent-Replayed"))
	assert.Equal(t, up.Header().Get("Location"), re.Header().Get("Location"))
	requireProblem(t, response{upload(pdfReader(size-1), size-1, "opplasting")}, http.StatusUnprocessableEntity)
	requireProblem(t, response{upload(pdfReader(size+1), -1, "opplasting")}, http.StatusUnprocessableEntity)
	assert.Equal(t, had+1, attachments())
	var digest []byte
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT sha256 FROM attachments WHERE message_id = $1 ORDER BY id DESC LIMIT 1`, id).Scan(&digest))
	want, err := io.ReadAll(pdfReader(size))
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256(want), [32]byte(digest))
}
