package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Single messages, forms, form data, attachments and role definitions (the user-facing and the
// service-owner view) carry a strong ETag of what is returned; If-None-Match naming it answers 304
// without a body.
func TestETagAndIfNoneMatch(t *testing.T) {
	msg := "/api/" + orgO1 + "/messages/a3100129"
	m := getAs(t, shared, ssnP1, msg)
	require.Equal(t, http.StatusOK, m.Code, m.Body.String())
	form := pathOf(t, m.json(t)["_links"].(map[string]any)["form"].([]any)[0].(map[string]any)["href"].(string))
	attachment := pathOf(t, m.json(t)["_links"].(map[string]any)["attachment"].([]any)[0].(map[string]any)["href"].(string))
	person := func(path string, header ...string) response { return getAs(t, shared, ssnP1, path, header...) }
	owner := func(path string, header ...string) response { return fjeToken(t).get(t, shared, path, header...) }
	resources := []struct {
		path string
		get  func(path string, header ...string) response
	}{
		{msg, person}, {form, person}, {form + "/formdata", person}, {attachment, person},
		{fmt.Sprintf("/api/%s/authorization/roledefinitions/%d", orgO1, roleREGNA), person},
		{fmt.Sprintf("/api/serviceowner/roledefinitions/%d", roleREGNA), owner},
	}
	for _, res := range resources {
		path, get := res.path, res.get
		r := get(path)
		require.Equal(t, http.StatusOK, r.Code, "%s: %s", path, r.Body.String())
		tag := r.Header().Get("ETag")
		require.Regexp(t, `^"[^"]+"$`, tag, "a strong ETag on %s", path)
		assert.Equal(t, tag, get(path).Header().Get("ETag"), "stable on %s", path)

		for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
			nm := get(path, "If-None-Match", inm)
			assert.Equal(t, http.StatusNotModified, nm.Code, "%s with If-None-Match %s", path, inm)
			assert.Empty(t, nm.Body.String())
			assert.Equal(t, tag, nm.Header().Get("ETag"))
		}
		assert.Equal(t, http.StatusOK, get(path, "If-None-Match", `"other"`).Code, path)
	}
	// Another representation is another ETag.
	xml := getAs(t, shared, ssnP1, msg, "Accept", "application/hal+xml")
	require.Equal(t, http.StatusOK, xml.Code)
	assert.NotEqual(t, m.Header().Get("ETag"), xml.Header().Get("ETag"))
}

// If-Match guards changes of a local role definition: a stale or wrong ETag is 412 with the current one,
// checked in the change's transaction, so of two changes made from one read exactly one goes through.
func TestRoleDefinitionIfMatch(t *testing.T) {
	srv, _ := newServer(t)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"
	r := authzDo(t, srv, ssnP3, http.MethodPost, defs, "application/json", localRoleBody("Betinget", localRight("4711", "2", "Read")))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	self := pathOf(t, r.Header().Get("Location"))
	etag := func() string {
		r := authzDo(t, srv, ssnP3, http.MethodGet, self, "", "")
		require.Equal(t, http.StatusOK, r.Code)
		return r.Header().Get("ETag")
	}
	send := func(method, ifMatch, body string) response {
		return do(t, srv, request{method: method, path: self, body: body, header: map[string]string{"ApiKey": keyAll,
			"Authorization": "Bearer " + personToken(t, ssnP3, "platform:enduser"), "Content-Type": "application/json", "If-Match": ifMatch}})
	}
	first := etag()

	for _, wrong := range []string{`"stale"`, "W/" + first} {
		p := requireProblem(t, send(http.MethodPut, wrong, localRoleBody("Endret", localRight("4711", "2", "Read"))), http.StatusPreconditionFailed)
		assert.Equal(t, "urn:postbox:problem:precondition-failed", p["type"])
	}
	stale := send(http.MethodDelete, `"stale"`, "")
	requireProblem(t, stale, http.StatusPreconditionFailed)
	assert.Equal(t, first, stale.Header().Get("ETag"), "the 412 carries the current ETag")
	assert.Equal(t, first, etag(), "nothing changed")

	// Two changes from the same read: one wins, the other is 412.
	codes := twoAtOnce(func(i int) int {
		return send(http.MethodPut, first, localRoleBody(fmt.Sprintf("Samtidig %d", i), localRight("4711", "2", "Read"))).Code
	})
	assert.ElementsMatch(t, []int{http.StatusNoContent, http.StatusPreconditionFailed}, codes)
	second := etag()
	assert.NotEqual(t, first, second)
	requireProblem(t, send(http.MethodDelete, first, ""), http.StatusPreconditionFailed)
	assert.Equal(t, http.StatusNoContent, send(http.MethodDelete, second, "").Code)
	assert.Equal(t, http.StatusNotFound, authzDo(t, srv, ssnP3, http.MethodGet, self, "", "").Code)
}

// If-Match on a form-task PUT: a stale ETag is 412 with the current one and changes nothing; the current
// one lets the change through, whose answer carries the new ETag; of two PUTs made from one read, one
// goes through and the other is 412 (checked again by the workflow, in the step that changes the task).
func TestFormTaskIfMatch(t *testing.T) {
	srv, pool := formTaskServer(t)
	created := sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2}`)
	require.Equal(t, http.StatusCreated, created.Code, created.Body.String())
	path := pathOf(t, created.Header().Get("Location"))
	body := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil)
	put := func(ifMatch string) response {
		return do(t, srv, request{method: http.MethodPut, path: path + "?complete=false", body: body, header: map[string]string{
			"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"),
			"Content-Type": "application/hal+json", "If-Match": ifMatch}})
	}
	revisions := func() int {
		return countRows(t, pool, `SELECT count(*) FROM form_revisions WHERE message_id = $1`, path[strings.LastIndex(path, "/")+1:])
	}
	first := getAs(t, srv, ssnP1, path).Header().Get("ETag")
	require.NotEmpty(t, first)

	stale := put(`"stale"`)
	p := requireProblem(t, stale, http.StatusPreconditionFailed)
	assert.Equal(t, "urn:postbox:problem:precondition-failed", p["type"])
	assert.Equal(t, first, stale.Header().Get("ETag"))
	assert.Zero(t, revisions(), "a refused change stores nothing")

	saved := put(first)
	require.Equal(t, http.StatusOK, saved.Code, saved.Body.String())
	second := saved.Header().Get("ETag")
	assert.NotEqual(t, first, second)
	assert.Equal(t, second, getAs(t, srv, ssnP1, path).Header().Get("ETag"), "the answer carries the ETag a GET gives")
	requireProblem(t, put(first), http.StatusPreconditionFailed)

	codes := twoAtOnce(func(int) int { return put(second).Code })
	assert.ElementsMatch(t, []int{http.StatusOK, http.StatusPreconditionFailed}, codes)
	assert.Equal(t, http.StatusOK, do(t, srv, request{method: http.MethodPut, path: path + "?complete=false", body: body,
		header: map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"),
			"Content-Type": "application/hal+json"}}).Code, "without If-Match a PUT works as before")
}

// A form-task PUT under If-Match reads the message row once before its change (the revision is read
// from the revisions, before the message) and once after it, to answer with the message as it is now.
func TestFormTaskPutReadsTheMessageOnce(t *testing.T) {
	_, pool := formTaskServer(t)
	reads := &messageReads{}
	cfg := pool.Config()
	cfg.ConnConfig.Tracer = reads
	traced, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	defer traced.Close()
	srv, err := newAPIWith(traced, formTaskEnv.dev.Client())
	require.NoError(t, err)

	created := sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2}`)
	require.Equal(t, http.StatusCreated, created.Code, created.Body.String())
	path := pathOf(t, created.Header().Get("Location"))
	etag := getAs(t, srv, ssnP1, path).Header().Get("ETag")
	reads.count(path[strings.LastIndex(path, "/")+1:])
	put := do(t, srv, request{method: http.MethodPut, path: path + "?complete=false",
		body: putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil), header: map[string]string{
			"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"),
			"Content-Type": "application/hal+json", "If-Match": etag}})
	require.Equal(t, http.StatusOK, put.Code, put.Body.String())
	assert.Equal(t, 2, reads.count(""), "the message row is read once to begin the change and once to answer it")
}

// messageReads counts the statements a pool sends that read the messages table with a message's id.
type messageReads struct {
	mu sync.Mutex
	id string
	n  int
}

func (r *messageReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.id != "" && strings.Contains(data.SQL, "FROM messages") && strings.Contains(fmt.Sprint(data.Args), r.id) {
		r.n++
	}
	return ctx
}

func (r *messageReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// count returns the reads counted so far and counts from now on those of message id.
func (r *messageReads) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.id, r.n = id, 0
	return n
}

// twoAtOnce runs send twice at the same time and returns the statuses it got.
func twoAtOnce(send func(i int) int) []int {
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = send(i)
		}()
	}
	wg.Wait()
	return codes
}

// If-Match on a sub-form PUT is checked against the form's ETag, and by the workflow like a task PUT; a
// form that does not exist matches no If-Match.
func TestSubFormIfMatch(t *testing.T) {
	srv, _ := formTaskServer(t)
	created := sendAs(t, srv, ssnP1, http.MethodPost, "/api/my/messages", `{"Type":"FormTask","ServiceCode":"5302","ServiceEdition":1}`)
	require.Equal(t, http.StatusCreated, created.Code, created.Body.String())
	task := pathOf(t, created.Header().Get("Location"))
	sub := demoMessage(t, "a3101116")["Forms"].([]any)[1].(map[string]any)
	body, err := json.Marshal(map[string]any{"Type": "SubForm", "DataFormatId": sub["DataFormatId"],
		"DataFormatVersion": sub["DataFormatVersion"], "FormData": sub["FormData"]})
	require.NoError(t, err)
	put := func(path, ifMatch string) response {
		return do(t, srv, request{method: http.MethodPut, path: path, body: string(body), header: map[string]string{
			"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"),
			"Content-Type": "application/hal+json", "If-Match": ifMatch}})
	}
	requireProblem(t, put(task+"/forms/0", "*"), http.StatusPreconditionFailed)
	added := sendAs(t, srv, ssnP1, http.MethodPut, task+"/forms/0", string(body))
	require.Equal(t, http.StatusCreated, added.Code, added.Body.String())
	form := pathOf(t, added.Header().Get("Location"))
	tag := getAs(t, srv, ssnP1, form).Header().Get("ETag")
	require.NotEmpty(t, tag)

	stale := put(form, `"stale"`)
	requireProblem(t, stale, http.StatusPreconditionFailed)
	assert.Equal(t, tag, stale.Header().Get("ETag"))
	assert.Equal(t, http.StatusOK, put(form, tag).Code)
	assert.Equal(t, http.StatusOK, put(form, "*").Code)
}

// If-Match guards the changes of a message's life (here a delete) against the message as it is, locked.
func TestMessageDeleteIfMatch(t *testing.T) {
	f := newLifecycleFixture(t)
	tag := f.as(t, lifeManager, http.MethodGet, lifePath(lifeRead)).Header().Get("ETag")
	require.NotEmpty(t, tag)
	stale := f.as(t, lifeManager, http.MethodDelete, lifePath(lifeRead), "If-Match", `"stale"`)
	requireProblem(t, stale, http.StatusPreconditionFailed)
	assert.Equal(t, tag, stale.Header().Get("ETag"))
	assert.Equal(t, http.StatusNoContent, f.as(t, lifeManager, http.MethodDelete, lifePath(lifeRead), "If-Match", tag).Code)
}
