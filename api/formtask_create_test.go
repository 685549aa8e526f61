package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// POST on the messages with complete and sign creates the task and moves it as a PUT with the same body
// would, in one request: 201 with the Location of the task as it now is.
func TestCreateFormTaskAndComplete(t *testing.T) {
	srv, pool := formTaskServer(t)
	messages := "/api/" + orgO1 + "/messages"
	body := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil)
	tasks := func() int { return countRows(t, pool, `SELECT count(*) FROM messages WHERE type = 'FormTask'`) }

	for _, tc := range []struct{ query, status string }{
		{"?complete=true&sign=true", "Sendt og arkivert"},
		{"?complete=true", "Sendt og arkivert"}, // sign defaults to true, as on a PUT
		{"?sign=false", "Signering"},
		{"?complete=false", "Utfylling"},
		{"?complete=false&sign=true", "Utfylling"},
		{"", "Utfylling"},
	} {
		t.Run("POST"+tc.query, func(t *testing.T) {
			r := sendAs(t, srv, ssnP1, http.MethodPost, messages+tc.query, body)
			require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
			m := r.json(t)
			assert.Equal(t, tc.status, m["Status"])
			loc := r.Header().Get("Location")
			assert.Equal(t, "http://postbox.test"+messages+"/"+m["MessageId"].(string), loc)
			stored, ref := messageStatus(t, pool, m["MessageId"].(string))
			assert.Equal(t, tc.status, stored)
			if tc.status == "Sendt og arkivert" {
				assert.Regexp(t, `^AR[0-9]+$`, ref)
				assert.Equal(t, ref, m["ArchiveReference"])
			}
		})
	}

	// Refusals create nothing.
	before := tasks()
	p := requireProblem(t, sendAs(t, srv, ssnP3, http.MethodPost, messages+"?complete=true&sign=true", body), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:sign-refused", p["type"], "P3 may write but not sign")
	p = requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPost, messages+"?complete=true", `{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2}`), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "forms")
	p = requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPost, messages+"?complete=yes", body), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "complete")
	invalid := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101221"))}, nil)
	p = requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPost, messages+"?complete=true&sign=true", invalid), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:validation-failed", p["type"])
	assert.Equal(t, before, tasks())
	refused := fmt.Sprintf("a%d", countRows(t, pool, `SELECT last_value FROM message_id_seq`))
	assert.False(t, workflowRunning(t, refused), "the workflow the refused content started ends with its task")

	// P3 may send it to signing.
	r := sendAs(t, srv, ssnP3, http.MethodPost, messages+"?sign=false", body)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	assert.Equal(t, "Signering", r.json(t)["Status"])
}

// A created and completed task answers in every media type.
func TestCreateFormTaskAndCompleteMediaTypes(t *testing.T) {
	srv, _ := formTaskServer(t)
	body := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil)
	for _, accept := range []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"} {
		t.Run(accept, func(t *testing.T) {
			hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"),
				"Content-Type": "application/hal+json", "Accept": accept}
			r := do(t, srv, request{method: http.MethodPost, path: "/api/" + orgO1 + "/messages?sign=false", header: hdr, body: body})
			require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
			assert.NotEmpty(t, r.Header().Get("Location"))
			if strings.Contains(accept, "xml") {
				assert.Contains(t, r.Header().Get("Content-Type"), "xml")
				requireWellFormedXML(t, r.Body.Bytes())
				assert.Contains(t, r.Body.String(), "<Status>Signering</Status>")
				return
			}
			assert.Equal(t, "Signering", r.json(t)["Status"])
		})
	}
}

// A POST that creates and completes is retried safely with an Idempotency-Key: the retry gets the first
// answer and creates and archives nothing more.
func TestCreateFormTaskAndCompleteIsIdempotent(t *testing.T) {
	srv, pool := formTaskServer(t)
	path := "/api/" + orgO1 + "/messages?complete=true&sign=true"
	body := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil)
	archives := func() int { return countRows(t, pool, `SELECT count(*) FROM archives`) }
	key := fmt.Sprintf("create-and-sign-%d", time.Now().UnixNano()) // the server's keys outlive a test run
	before := archives()
	first := createAs(t, srv, ssnP1, path, "application/hal+json", body, key)
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	again := createAs(t, srv, ssnP1, path, "application/hal+json", body, key)
	require.Equal(t, http.StatusCreated, again.Code, again.Body.String())
	assert.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
	assert.Equal(t, first.Header().Get("Location"), again.Header().Get("Location"))
	assert.Equal(t, first.json(t)["ArchiveReference"], again.json(t)["ArchiveReference"])
	assert.Equal(t, before+1, archives())

	other := createAs(t, srv, ssnP1, "/api/"+orgO1+"/messages?complete=false", "application/hal+json", body, key)
	requireProblem(t, other, http.StatusUnprocessableEntity)
	assert.Equal(t, before+1, archives())
}
