package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/postbox/postbox/formtask"
)

// newTask creates a form task of O1 through the API (P1), moved by query as a POST does, and returns its
// path and id.
func newTask(t *testing.T, h http.Handler, query string) (path, id string) {
	t.Helper()
	r := sendAs(t, h, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages"+query, putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	path = pathOf(t, r.Header().Get("Location"))
	return path, path[strings.LastIndex(path, "/")+1:]
}

// place says where a message is: "mailbox", "trashbin" or "gone".
func place(t *testing.T, pool *pgxpool.Pool, id string) string {
	t.Helper()
	var trashed *bool
	err := pool.QueryRow(context.Background(), `SELECT deleted_at IS NOT NULL FROM messages WHERE id = $1`, id).Scan(&trashed)
	switch {
	case err != nil && strings.Contains(err.Error(), "no rows"):
		return "gone"
	case err != nil:
		t.Fatal(err)
	case *trashed:
		return "trashbin"
	}
	return "mailbox"
}

// auditOf returns the actions the message audit log holds for a message, oldest first.
func auditOf(t *testing.T, pool *pgxpool.Pool, id string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT action FROM message_audit WHERE message_id = $1 ORDER BY id`, id)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		require.NoError(t, rows.Scan(&a))
		out = append(out, a)
	}
	require.NoError(t, rows.Err())
	return out
}

// workflowRunning says whether the task's workflow still runs.
func workflowRunning(t *testing.T, id string) bool {
	t.Helper()
	d, err := formTaskEnv.dev.Client().DescribeWorkflowExecution(context.Background(), formtask.WorkflowID(id), "")
	require.NoError(t, err)
	return d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// A form task in progress goes to the trashbin, back and away for good through its workflow: in the
// trashbin it keeps its status and refuses every change (409 in-trashbin); restored it goes on where it
// was; deleted for good it is gone with its revisions and its workflow ends.
func TestFormTaskInProgressTrashbin(t *testing.T) {
	srv, pool := formTaskServer(t)
	path, id := newTask(t, srv, "?complete=false")
	trashbin := "/api/" + orgO1 + "/messages/trashbin/" + id
	body := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil)

	p := requireProblem(t, sendAs(t, srv, ssnP3, http.MethodDelete, path, ""), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:missing-right", p["type"], "P3 may write but not delete")
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path+"/restore", ""), http.StatusConflict)
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodDelete, trashbin, ""), http.StatusNotFound)
	p = requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path+"/archive", ""), http.StatusConflict)
	assert.Equal(t, "Utfylling", p["taskStatus"], "a task in progress is archived by signing it")
	assert.Equal(t, "mailbox", place(t, pool, id))

	r := sendAs(t, srv, ssnP1, http.MethodDelete, path, "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Equal(t, "trashbin", place(t, pool, id))
	assert.Contains(t, walk(t, srv, ssnP1, "/api/"+orgO1+"/messages/trashbin"), id)
	requireProblem(t, getAs(t, srv, ssnP1, path), http.StatusNotFound)
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodDelete, path, ""), http.StatusNotFound)
	for _, change := range []struct{ method, path, body string }{
		{http.MethodPut, path + "?complete=false", body},
		{http.MethodPut, path, body},
		{http.MethodPost, path + "/attachments", `{"FileName":"a.pdf","AttachmentType":"Dokumentasjon","Data":"JVBERi0xLjQK"}`},
		{http.MethodPost, path + "/forms", `{"Type":"SubForm","DataFormatId":"5571","DataFormatVersion":"41234","FormData":"<Skjema/>"}`},
	} {
		p := requireProblem(t, sendAs(t, srv, ssnP1, change.method, change.path, change.body), http.StatusConflict)
		assert.Equal(t, "urn:postbox:problem:in-trashbin", p["type"], change.method+" "+change.path)
		assert.Equal(t, "Utfylling", p["taskStatus"])
	}
	for _, read := range []string{"/validate", "/print"} { // reads of the mailbox: gone while in the trashbin
		requireProblem(t, getAs(t, srv, ssnP1, path+read), http.StatusNotFound)
	}
	requireProblem(t, sendAs(t, srv, ssnP3, http.MethodPut, path+"/restore", ""), http.StatusForbidden)

	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"/restore", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Utfylling", r.json(t)["Status"])
	assert.Equal(t, "mailbox", place(t, pool, id))
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"?sign=false", body)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Signering", r.json(t)["Status"], "restored, it goes on")

	require.Equal(t, http.StatusNoContent, sendAs(t, srv, ssnP1, http.MethodDelete, path, "").Code)
	r = sendAs(t, srv, ssnP1, http.MethodDelete, trashbin, "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Equal(t, "gone", place(t, pool, id))
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM form_revisions WHERE message_id = $1`, id), "its revisions are gone with it")
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM purged_messages WHERE id = $1`, id))
	assert.False(t, workflowRunning(t, id), "its workflow ends")
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path+"/restore", ""), http.StatusNotFound)
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path, body), http.StatusNotFound)
	assert.Equal(t, []string{"Delete", "Restore", "Delete", "DeleteForGood"}, auditOf(t, pool, id))
}

// A signed task's workflow has ended: it goes to the trashbin and away in a plain transaction, needs
// ArchiveDelete, and its archive stays. A task in Signering comes back in Signering.
func TestSignedAndSigningTasksTrashbin(t *testing.T) {
	srv, pool := formTaskServer(t)
	path, id := newTask(t, srv, "?complete=true&sign=true")
	require.Equal(t, http.StatusNoContent, sendAs(t, srv, ssnP1, http.MethodDelete, path, "").Code)
	r := sendAs(t, srv, ssnP1, http.MethodPut, path+"/restore", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Sendt og arkivert", r.json(t)["Status"])
	require.Equal(t, http.StatusNoContent, sendAs(t, srv, ssnP1, http.MethodDelete, path, "").Code)
	require.Equal(t, http.StatusNoContent, sendAs(t, srv, ssnP1, http.MethodDelete, "/api/"+orgO1+"/messages/trashbin/"+id, "").Code)
	assert.Equal(t, "gone", place(t, pool, id))
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM archives WHERE message_id = $1`, id), "the archive stays")

	path, id = newTask(t, srv, "?sign=false")
	require.Equal(t, http.StatusNoContent, sendAs(t, srv, ssnP1, http.MethodDelete, path, "").Code)
	p := requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path, ""), http.StatusConflict)
	assert.Equal(t, "Signering", p["taskStatus"], "a task in the trashbin is not signed")
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"/restore", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Signering", r.json(t)["Status"])
	r = sendAs(t, srv, ssnP1, http.MethodPut, path, "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Sendt og arkivert", r.json(t)["Status"])
	assert.Equal(t, []string{"Delete", "Restore"}, auditOf(t, pool, id))
}

// The restore of a task in progress answers in every media type; If-Match holds its changes to the
// message as the client read it.
func TestFormTaskTrashbinMediaTypesAndIfMatch(t *testing.T) {
	srv, _ := formTaskServer(t)
	path, _ := newTask(t, srv, "?complete=false")
	for _, accept := range []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"} {
		t.Run(accept, func(t *testing.T) {
			hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"), "Accept": accept}
			r := do(t, srv, request{method: http.MethodDelete, path: path, header: hdr})
			require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
			r = do(t, srv, request{method: http.MethodPut, path: path + "/restore", header: hdr})
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			if strings.Contains(accept, "xml") {
				requireWellFormedXML(t, r.Body.Bytes())
				assert.Contains(t, r.Body.String(), "<Status>Utfylling</Status>")
				return
			}
			assert.Equal(t, "Utfylling", r.json(t)["Status"])
		})
	}

	tag := getAs(t, srv, ssnP1, path).Header().Get("ETag")
	require.NotEmpty(t, tag)
	hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"), "If-Match": `"stale"`}
	r := do(t, srv, request{method: http.MethodDelete, path: path, header: hdr})
	require.Equal(t, http.StatusPreconditionFailed, r.Code, r.Body.String())
	hdr["If-Match"] = tag
	r = do(t, srv, request{method: http.MethodDelete, path: path, header: hdr})
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
}

// Parallel deletes, restores and archives of one task in progress: the workflow makes them one at a
// time, so the task is in exactly one place, the audit log holds exactly the changes that answered
// success, and the workflow and the read model agree on where it is.
func TestFormTaskConcurrentPlaceChanges(t *testing.T) {
	srv, pool := formTaskServer(t)
	path, id := newTask(t, srv, "?complete=false")
	succeeded := race(t, srv, map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser")}, 6,
		[]lifecycleCall{{http.MethodDelete, path}, {http.MethodPut, path + "/restore"}, {http.MethodPut, path + "/archive"}})
	deletes, restores := succeeded[0], succeeded[1]
	assert.Zero(t, succeeded[2], "a task in progress is never archived by the archive route")
	require.GreaterOrEqual(t, deletes, 1)
	actions := auditOf(t, pool, id)
	assert.Equal(t, deletes, countOf(actions, "Delete"))
	assert.Equal(t, restores, countOf(actions, "Restore"))

	// Deletes and restores alternate, and the workflow agrees with the read model: it takes the change
	// that leaves the place the message is in.
	if place(t, pool, id) == "trashbin" {
		assert.Equal(t, restores+1, deletes)
		require.Equal(t, http.StatusOK, sendAs(t, srv, ssnP1, http.MethodPut, path+"/restore", "").Code)
	} else {
		assert.Equal(t, restores, deletes)
		require.Equal(t, http.StatusNoContent, sendAs(t, srv, ssnP1, http.MethodDelete, path, "").Code)
	}
}
