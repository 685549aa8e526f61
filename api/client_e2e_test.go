package api_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/client"
)

// The submit flow of docs/formtasks.md (Submitting a form task, with its Idempotency-Key and If-Match lines) as an
// integrator's Go program walks it through the generated client: over a real listener, on the real router,
// database, Temporal dev server and worker.
func TestClientWalksTheREADMESubmitFlow(t *testing.T) {
	srv, pool := formTaskServer(t)
	web := listenChecked(t, srv)
	defer web.Close()
	ctx := context.Background()
	c, err := client.New(web.URL, keyAll, client.WithBearerToken(personToken(t, ssnP1, "platform:enduser")))
	require.NoError(t, err)
	const who, task = orgO1, "a3101263"
	forms := []client.FormBody{{Type: "MainForm", DataFormatId: "3106", DataFormatVersion: 21845, FormData: demoFormData(t, task)}}
	body := client.FormTaskBody{Type: "FormTask", ServiceCode: "4711", ServiceEdition: ptr(2), UnderscoreEmbedded: &struct {
		Attachments *[]client.AttachmentBody `json:"attachments,omitempty"`
		Forms       *[]client.FormBody       `json:"forms,omitempty"`
	}{Forms: &forms}}

	validation, err := c.ValidateFormTaskWithResponse(ctx, who, task)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, validation.StatusCode(), string(validation.Body))
	assert.True(t, validation.HALJSON200.Success)

	// Saved with If-Match on the task's ETag; the same ETag again is stale: 412 with the current one.
	read, err := c.GetMessageWithResponse(ctx, who, task, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, read.StatusCode(), string(read.Body))
	etag := read.HTTPResponse.Header.Get("ETag")
	require.NotEmpty(t, etag)
	notModified, err := c.GetMessageWithResponse(ctx, who, task, &client.GetMessageParams{IfNoneMatch: &etag})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotModified, notModified.StatusCode())
	saved, err := c.PutFormTaskWithResponse(ctx, who, task, &client.PutFormTaskParams{Complete: ptr(false), IfMatch: &etag}, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, saved.StatusCode(), string(saved.Body))
	assert.Equal(t, "Utfylling", saved.HALJSON200.Status)
	current := saved.HTTPResponse.Header.Get("ETag")
	assert.NotEqual(t, etag, current)
	stale, err := c.PutFormTaskWithResponse(ctx, who, task, &client.PutFormTaskParams{Complete: ptr(false), IfMatch: &etag}, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusPreconditionFailed, stale.StatusCode(), string(stale.Body))
	assert.Equal(t, current, stale.HTTPResponse.Header.Get("ETag"))

	completed, err := c.PutFormTaskWithResponse(ctx, who, task, &client.PutFormTaskParams{Sign: ptr(false)}, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, completed.StatusCode(), string(completed.Body))
	assert.Equal(t, "Signering", completed.HALJSON200.Status)
	signed, err := c.PutFormTaskWithBodyWithResponse(ctx, who, task, nil, "application/hal+json", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, signed.StatusCode(), string(signed.Body))
	assert.Equal(t, "Sendt og arkivert", signed.HALJSON200.Status)
	require.NotNil(t, signed.HALJSON200.ArchiveReference)
	status, ref := messageStatus(t, pool, task)
	assert.Equal(t, "Sendt og arkivert", status)
	assert.Equal(t, ref, *signed.HALJSON200.ArchiveReference)
	// Repeated steps tell where the task is: the signing with its content answers as the first time, a step
	// that does not sign is a 409 with the task's status and archive reference.
	again, err := c.PutFormTaskWithResponse(ctx, who, task, nil, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, again.StatusCode(), string(again.Body))
	assert.Equal(t, ref, *again.HALJSON200.ArchiveReference)
	late, err := c.PutFormTaskWithResponse(ctx, who, task, &client.PutFormTaskParams{Sign: ptr(false)}, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusConflict, late.StatusCode(), string(late.Body))
	assert.Equal(t, "Sendt og arkivert", *late.ApplicationproblemJSON409.TaskStatus)
	assert.Equal(t, ref, *late.ApplicationproblemJSON409.ArchiveReference)

	print, err := c.GetPrintWithResponse(ctx, who, task, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, print.StatusCode())
	assert.True(t, strings.HasPrefix(string(print.Body), "%PDF-"))

	// A new, empty task, created once however often the creation is retried with its Idempotency-Key.
	key := "readme-flow-" + task
	newTask := client.FormTaskBody{Type: "FormTask", ServiceCode: "4711", ServiceEdition: ptr(2)}
	created, err := c.PostFormTaskWithResponse(ctx, who, &client.PostFormTaskParams{IdempotencyKey: &key}, newTask)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	location := created.HTTPResponse.Header.Get("Location")
	assert.Equal(t, web.URL+"/api/"+who+"/messages/"+created.HALJSON201.MessageId, location)
	replayed, err := c.PostFormTaskWithResponse(ctx, who, &client.PostFormTaskParams{IdempotencyKey: &key}, newTask)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, replayed.StatusCode(), string(replayed.Body))
	assert.Equal(t, "true", replayed.HTTPResponse.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, location, replayed.HTTPResponse.Header.Get("Location"))
}

// The password login of the client: its session cookie opens the end-user routes until EndSession.
func TestClientLogsInWithPassword(t *testing.T) {
	web := listenChecked(t, shared)
	defer web.Close()
	ctx := context.Background()
	c, err := client.New(web.URL, keyAll)
	require.NoError(t, err)
	before, err := c.ListReporteesWithResponse(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, before.StatusCode())

	require.NoError(t, c.LoginWithPassword(ctx, "ingrid.fjellheim", "Demo-1-Fjellheim!"))
	reportees, err := c.ListReporteesWithResponse(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, reportees.StatusCode(), string(reportees.Body))
	assert.NotEmpty(t, reportees.HALJSON200.UnderscoreEmbedded.Reportees)

	require.NoError(t, c.EndSession(ctx))
	after, err := c.ListReporteesWithResponse(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, after.StatusCode())
	assert.Error(t, c.LoginWithPassword(ctx, "nobody.at.all", "wrong"))
}

// listenChecked serves h on a real listener, every answer checked against the OpenAPI document as the
// suite's other requests are (serve).
func listenChecked(t *testing.T, h http.Handler) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		serve(t, h, rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
}

func ptr[T any](v T) *T { return &v }
