package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/mailpittest"
	"github.com/postbox/postbox/internal/smstest"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// The form-task tests share one Temporal dev server, one database and one worker, started on first use;
// each test works on its own messages of the dataset's pools.
var formTaskEnv struct {
	once   sync.Once
	err    error
	dev    *testsuite.DevServer
	worker *worker.Workers
	pool   *pgxpool.Pool
	drop   func()
	srv    *api.Server
	// The notifications' mail server and SMS gateway stand-in.
	mailpit *mailpittest.Server
	sms     *smstest.Gateway
}

// stopFormTaskEnv ends what formTaskServer started; TestMain calls it, so no dev server outlives the tests.
func stopFormTaskEnv() {
	stopWebhookEnv() // its worker polls the dev server
	e := &formTaskEnv
	if e.worker != nil {
		e.worker.Stop()
	}
	if e.pool != nil {
		e.pool.Close()
	}
	if e.drop != nil {
		e.drop()
	}
	if e.dev != nil {
		_ = e.dev.Stop()
	}
	if e.mailpit != nil {
		e.mailpit.Stop()
	}
	if e.sms != nil {
		e.sms.Close()
	}
}

// nsOwnWorker is the namespace of the dev server for tests that run a worker of their own, apart from the
// shared worker of "default".
const nsOwnWorker = "own-worker"

func formTaskServer(t testing.TB) (*api.Server, *pgxpool.Pool) {
	t.Helper()
	e := &formTaskEnv
	e.once.Do(func() {
		ctx := context.Background()
		if e.dev, e.err = temporaltest.StartDevServer(ctx, "", "", nsOwnWorker); e.err != nil {
			return
		}
		url, _, drop, err := storetest.Create(ctx)
		if err != nil {
			e.err = err
			return
		}
		e.drop = drop
		if e.pool, e.err = store.Open(ctx, url); e.err != nil {
			return
		}
		c := e.dev.Client()
		if e.err = worker.RegisterSearchAttributes(ctx, c, "default"); e.err != nil {
			return
		}
		acts, err := formtask.NewActivities(e.pool, storetest.FilesOf(e.pool))
		if err != nil {
			e.err = err
			return
		}
		acts.Events, acts.PublicURL = events.NewBuilder(testPublicURL), testPublicURL
		if e.mailpit, e.err = mailpittest.Start(ctx, mailpittest.Options{}); e.err != nil {
			return
		}
		e.sms = smstest.Start()
		notices, err := notification.NewActivities(e.pool, testPublicURL,
			notification.SMTPConfig{Addr: e.mailpit.SMTPAddr, TLS: "none", From: "Postbox <varsling@postbox.test>", Connections: 2},
			notification.SMSConfig{URL: e.sms.URL, Account: smstest.Account, Token: smstest.Token, From: "Postbox"})
		if err != nil {
			e.err = err
			return
		}
		w := worker.New(c, acts, worker.Options{MaxConcurrentActivities: 8, MaxConcurrentWorkflowTasks: 8,
			Correspondence: &correspondence.Activities{Pool: e.pool, Events: acts.Events, Forms: acts,
				FormTasks: formtask.New(c, store.New(e.pool), formtask.Options{Files: storetest.FilesOf(e.pool), PublicURL: testPublicURL})}, Notification: notices})
		if e.err = w.Start(); e.err != nil {
			return
		}
		e.worker = w
		e.srv, e.err = newAPIWith(e.pool, c)
	})
	require.NoError(t, e.err)
	return e.srv, e.pool
}

func newAPIWith(pool *pgxpool.Pool, c client.Client) (*api.Server, error) {
	if c == nil {
		return newAPIWithTasks(pool, nil, nil, nil)
	}
	tasks := formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool), PublicURL: testPublicURL})
	notices := notification.New(pool, c, notification.Configured{Email: true, Sms: true})
	return newAPIWithTasks(pool, tasks, correspondence.New(pool, storetest.FilesOf(pool), c, events.NewBuilder(testPublicURL), tasks, notices), notices)
}

func newAPIWithTasks(pool *pgxpool.Pool, tasks *formtask.Service, sends *correspondence.Service, notices *notification.Service) (*api.Server, error) {
	tokens, err := testTokens()
	if err != nil {
		return nil, err
	}
	return api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: 1 << 20, Logger: quiet, Tokens: tokens, FormTasks: tasks,
		Correspondence: sends, Notifications: notices, PublicURL: testPublicURL})
}

func demoFormData(t *testing.T, id string) string {
	return demoMessage(t, id)["Forms"].([]any)[0].(map[string]any)["FormData"].(string)
}

func putBody(t *testing.T, forms []map[string]any, attachments []map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"Type": "FormTask", "ServiceCode": "4711", "ServiceEdition": 2,
		"_embedded": map[string]any{"forms": forms, "attachments": attachments}})
	require.NoError(t, err)
	return string(b)
}

func mainForm(data string) map[string]any {
	return map[string]any{"Type": "MainForm", "DataFormatId": "3106", "DataFormatVersion": "21845", "FormData": data}
}

func sendAs(t *testing.T, h http.Handler, ssn, method, path, body string) response {
	t.Helper()
	hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssn, "platform:enduser"),
		"Content-Type": "application/hal+json"}
	return do(t, h, request{method: method, path: path, header: hdr, body: body})
}

func messageStatus(t *testing.T, pool *pgxpool.Pool, id string) (status, archiveRef string) {
	t.Helper()
	var ref *string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT status, archive_reference FROM messages WHERE id = $1`, id).Scan(&status, &ref))
	if ref != nil {
		archiveRef = *ref
	}
	return status, archiveRef
}

func TestSubmitSignsAndArchives(t *testing.T) {
	srv, pool := formTaskServer(t)
	path := "/api/" + orgO1 + "/messages/a3101102"
	r := sendAs(t, srv, ssnP1, http.MethodPut, path, putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	m := r.json(t)
	assert.Equal(t, "Sendt og arkivert", m["Status"])
	assert.Regexp(t, `^AR[0-9]+$`, m["ArchiveReference"])
	status, ref := messageStatus(t, pool, "a3101102")
	assert.Equal(t, "Sendt og arkivert", status)
	assert.Equal(t, m["ArchiveReference"], ref)

	pdf := getAs(t, srv, ssnP1, path+"/print")
	require.Equal(t, http.StatusOK, pdf.Code, pdf.Body.String())
	assert.Equal(t, "application/pdf", pdf.Header().Get("Content-Type"))
	assert.True(t, strings.HasPrefix(pdf.Body.String(), "%PDF-"))

	// The same submission repeated (its answer was lost) is answered as it was the first time.
	again := sendAs(t, srv, ssnP1, http.MethodPut, path, putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil))
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	assert.Equal(t, m["ArchiveReference"], again.json(t)["ArchiveReference"])
	assert.Equal(t, "Sendt og arkivert", again.json(t)["Status"])

	// Another submission learns the outcome from the problem's members, in JSON and in XML.
	other := putBody(t, []map[string]any{mainForm(strings.Replace(demoFormData(t, "a3101102"), "</Skjema>", "<Merknad>Endret</Merknad></Skjema>", 1))}, nil)
	p := requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path, other), http.StatusConflict)
	assert.Equal(t, m["ArchiveReference"], p["archiveReference"])
	assert.Equal(t, "Sendt og arkivert", p["taskStatus"])
	hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"),
		"Content-Type": "application/hal+json", "Accept": "application/hal+xml"}
	againXML := do(t, srv, request{method: http.MethodPut, path: path, header: hdr, body: other})
	require.Equal(t, http.StatusConflict, againXML.Code, againXML.Body.String())
	assert.Equal(t, "application/problem+xml; charset=utf-8", againXML.Header().Get("Content-Type"))
	var px struct {
		Type             string `xml:"type"`
		TaskStatus       string `xml:"taskStatus"`
		ArchiveReference string `xml:"archiveReference"`
	}
	require.NoError(t, xml.Unmarshal(againXML.Body.Bytes(), &px), againXML.Body.String())
	assert.Equal(t, "urn:postbox:problem:conflict", px.Type)
	assert.Equal(t, m["ArchiveReference"], px.ArchiveReference)
	assert.Equal(t, "Sendt og arkivert", px.TaskStatus)
	requireProblem(t, getAs(t, srv, ssnP1, path+"/validate"), http.StatusConflict)
}

func TestStateTable(t *testing.T) {
	srv, pool := formTaskServer(t)
	data := demoFormData(t, "a3101109")
	edited := strings.Replace(data, "</Skjema>", "<Merknad>Endret i test</Merknad></Skjema>", 1)

	// complete=false: saved, stays in Utfylling, forms replaced.
	path := "/api/" + orgO1 + "/messages/a3101109"
	r := sendAs(t, srv, ssnP1, http.MethodPut, path+"?complete=false", putBody(t, []map[string]any{mainForm(data)}, nil))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Utfylling", r.json(t)["Status"])

	// complete=false&sign=false is the same as complete=false.
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"?complete=false&sign=false", putBody(t, []map[string]any{mainForm(data)}, nil))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Utfylling", r.json(t)["Status"])

	// sign=false: to Signering.
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"?sign=false", putBody(t, []map[string]any{mainForm(data)}, nil))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Signering", r.json(t)["Status"])

	// P3 holds REGNA: Write but no Sign. Signing is refused and the task stays in Signering.
	p := requireProblem(t, sendAs(t, srv, ssnP3, http.MethodPut, path, ""), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:sign-refused", p["type"])
	status, _ := messageStatus(t, pool, "a3101109")
	assert.Equal(t, "Signering", status)

	// P1 signs it as it is.
	r = sendAs(t, srv, ssnP1, http.MethodPut, path, "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Sendt og arkivert", r.json(t)["Status"])

	// An Utfylling task saved with new content keeps exactly that content.
	path = "/api/" + orgO1 + "/messages/a3101151"
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"?complete=false", putBody(t, []map[string]any{mainForm(edited)}, nil))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	form := r.json(t)["_links"].(map[string]any)["form"].([]any)[0].(map[string]any)
	fd := getAs(t, srv, ssnP1, pathOf(t, form["href"].(string))+"/formdata")
	assert.Equal(t, edited, fd.Body.String())
}

// A PUT repeated after its step went through — its answer was lost, or the worker died before reporting —
// is answered with a 409 whose members say where the task is (and, once archived, its ArchiveReference),
// for every combination of complete, sign and body, never with a 400 about the body it did not need.
func TestRepeatedStepsAnswerWhereTheTaskIs(t *testing.T) {
	srv, pool := formTaskServer(t)
	body := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil)
	created := sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", body)
	require.Equal(t, http.StatusCreated, created.Code, created.Body.String())
	path := pathOf(t, created.Header().Get("Location"))
	id := path[strings.LastIndex(path, "/")+1:]
	requireWhere := func(t *testing.T, r response, status string, archiveRef any) { // archiveRef nil: none
		t.Helper()
		p := requireProblem(t, r, http.StatusConflict)
		assert.Equal(t, status, p["taskStatus"])
		assert.Equal(t, archiveRef, p["archiveReference"])
	}

	r := sendAs(t, srv, ssnP1, http.MethodPut, path+"?sign=false", body)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	for _, again := range []struct{ query, body string }{
		{"?sign=false", body}, {"?sign=false", ""}, {"?complete=false", body}, {"?complete=false", ""},
	} {
		requireWhere(t, sendAs(t, srv, ssnP1, http.MethodPut, path+again.query, again.body), "Signering", nil)
	}
	// A client that read the task before the step was projected: the workflow's status is the answer.
	_, err := pool.Exec(context.Background(), `UPDATE messages SET status = 'Utfylling' WHERE id = $1`, id)
	require.NoError(t, err)
	requireWhere(t, sendAs(t, srv, ssnP1, http.MethodPut, path+"?sign=false", body), "Signering", nil)
	_, err = pool.Exec(context.Background(), `UPDATE messages SET status = 'Signering' WHERE id = $1`, id)
	require.NoError(t, err)

	r = sendAs(t, srv, ssnP1, http.MethodPut, path, "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	ref := r.json(t)["ArchiveReference"]
	require.NotEmpty(t, ref)
	// The step that archived it (sign as it is, or sign with the content it was archived from) repeated is
	// answered as it was; every other step learns where the task is, as does a signing by P3, who may not sign.
	for _, query := range []string{"", "?complete=true&sign=true", "?sign=false", "?complete=false", "?complete=false&sign=false"} {
		for _, b := range []string{"", body} {
			t.Run(fmt.Sprintf("archived, PUT%s with %d bytes", query, len(b)), func(t *testing.T) {
				r := sendAs(t, srv, ssnP1, http.MethodPut, path+query, b)
				if query == "" || query == "?complete=true&sign=true" {
					require.Equal(t, http.StatusOK, r.Code, r.Body.String())
					assert.Equal(t, ref, r.json(t)["ArchiveReference"])
					return
				}
				requireWhere(t, r, "Sendt og arkivert", ref)
			})
		}
	}
	requireWhere(t, sendAs(t, srv, ssnP3, http.MethodPut, path, body), "Sendt og arkivert", ref)
	other := putBody(t, []map[string]any{mainForm(strings.Replace(demoFormData(t, "a3101102"), "</Skjema>", "<Merknad>Annet</Merknad></Skjema>", 1))}, nil)
	requireWhere(t, sendAs(t, srv, ssnP1, http.MethodPut, path, other), "Sendt og arkivert", ref)
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n"))
	requireWhere(t, sendAs(t, srv, ssnP1, http.MethodPost, path+"/attachments",
		`{"FileName":"a.pdf","AttachmentType":"Dokumentasjon","Data":"`+pdf+`"}`), "Sendt og arkivert", ref)
	status, stored := messageStatus(t, pool, id)
	assert.Equal(t, "Sendt og arkivert", status)
	assert.Equal(t, ref, stored)
	var revisions int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions WHERE message_id = $1 AND promoted_at IS NULL`, id).Scan(&revisions))
	assert.Zero(t, revisions, "no repeated step leaves a revision")
}

func TestSubmitRefusalsKeepEverything(t *testing.T) {
	srv, pool := formTaskServer(t)
	path := "/api/" + orgO1 + "/messages/a3101179"
	before := demoFormData(t, "a3101179")
	formPath := pathOf(t, getAs(t, srv, ssnP1, path).json(t)["_links"].(map[string]any)["form"].([]any)[0].(map[string]any)["href"].(string))

	invalid := demoFormData(t, "a3101221")
	p := requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path, putBody(t, []map[string]any{mainForm(invalid)}, nil)), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:validation-failed", p["type"])
	errs := p["errors"].([]any)
	require.NotEmpty(t, errs)
	assert.Equal(t, "/Skjema/AntallAnsatte", errs[0].(map[string]any)["FieldXPath"])

	hostile := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><Skjema>&lol2;</Skjema>`
	cases := map[string]struct {
		body   string
		status int
	}{
		"entity expansion":  {putBody(t, []map[string]any{mainForm(hostile)}, nil), http.StatusBadRequest},
		"two main forms":    {putBody(t, []map[string]any{mainForm(before), mainForm(before)}, nil), http.StatusBadRequest},
		"no main form":      {putBody(t, nil, nil), http.StatusBadRequest},
		"unknown format":    {strings.Replace(putBody(t, []map[string]any{mainForm(before)}, nil), `"3106"`, `"9999"`, 1), http.StatusBadRequest},
		"huge version":      {strings.Replace(putBody(t, []map[string]any{mainForm(before)}, nil), `"21845"`, `"99999999999999999999"`, 1), http.StatusBadRequest},
		"other service":     {strings.Replace(putBody(t, []map[string]any{mainForm(before)}, nil), `"4711"`, `"6120"`, 1), http.StatusBadRequest},
		"bad base64":        {putBody(t, []map[string]any{mainForm(before)}, []map[string]any{{"FileName": "a.pdf", "AttachmentType": "Revisjonsberetning", "Data": "%%%"}}), http.StatusBadRequest},
		"path in file name": {putBody(t, []map[string]any{mainForm(before)}, []map[string]any{{"FileName": "../a.pdf", "AttachmentType": "Revisjonsberetning", "Data": "JVBERg=="}}), http.StatusBadRequest},
		"not JSON":          {"{", http.StatusBadRequest},
	}
	for name, tc := range cases {
		requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, path, tc.body), tc.status)
		assert.Equal(t, before, getAs(t, srv, ssnP1, formPath+"/formdata").Body.String(), name)
	}
	status, _ := messageStatus(t, pool, "a3101179")
	assert.Equal(t, "Utfylling", status)
	var revisions int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions WHERE message_id = 'a3101179'`).Scan(&revisions))
	assert.Zero(t, revisions, "refused submissions leave no revision behind")

	// P4 may read 7102 only; P2 represents nobody here.
	requireProblem(t, sendAs(t, srv, ssnP4, http.MethodPut, path, putBody(t, []map[string]any{mainForm(before)}, nil)), http.StatusNotFound)
	requireProblem(t, sendAs(t, srv, ssnP2, http.MethodPut, path, putBody(t, []map[string]any{mainForm(before)}, nil)), http.StatusForbidden)
	// A correspondence is no form task.
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, "/api/"+orgO1+"/messages/a3100808", putBody(t, nil, nil)), http.StatusConflict)
}

func TestSecurityLevelOfTheService(t *testing.T) {
	srv, _ := formTaskServer(t)
	// O2's 4711/1 needs security level 3; a password session is level 1.
	cookie := login(t, srv, "ingrid.fjellheim", "Demo-1-Fjellheim!")
	path := "/api/" + orgO2 + "/messages/a3101081"
	form := demoMessage(t, "a3101081")["Forms"].([]any)[0].(map[string]any)
	body, err := json.Marshal(map[string]any{"_embedded": map[string]any{"forms": []any{map[string]any{"Type": "MainForm",
		"DataFormatId": form["DataFormatId"], "DataFormatVersion": form["DataFormatVersion"], "FormData": form["FormData"]}}}})
	require.NoError(t, err)
	r := do(t, srv, request{method: http.MethodPut, path: path + "?complete=false", body: string(body),
		header: map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + cookie, "Content-Type": "application/json"}})
	requireProblem(t, r, http.StatusForbidden)
	// A Level3 person token may.
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"?complete=false", string(body))
	assert.Equal(t, http.StatusOK, r.Code, r.Body.String())
}

// Creating a form task needs the security level of its service, as every change of it does: the same
// refusal, and no task left behind.
func TestCreateNeedsTheSecurityLevelOfTheService(t *testing.T) {
	srv, pool := formTaskServer(t)
	cookie := login(t, srv, "ingrid.fjellheim", "Demo-1-Fjellheim!")
	path := "/api/" + orgO2 + "/messages"
	body := `{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":1}`
	count := func() (n int) {
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM messages`).Scan(&n))
		return n
	}
	before := count()
	r := do(t, srv, request{method: http.MethodPost, path: path, body: body,
		header: map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + cookie, "Content-Type": "application/json"}})
	created := requireProblem(t, r, http.StatusForbidden)
	assert.Equal(t, before, count(), "no task is created")

	// PUT on a task of the same service is refused with the same problem.
	form := demoMessage(t, "a3101081")["Forms"].([]any)[0].(map[string]any)
	content, err := json.Marshal(map[string]any{"_embedded": map[string]any{"forms": []any{map[string]any{"Type": "MainForm",
		"DataFormatId": form["DataFormatId"], "DataFormatVersion": form["DataFormatVersion"], "FormData": form["FormData"]}}}})
	require.NoError(t, err)
	put := do(t, srv, request{method: http.MethodPut, path: path + "/a3101081?complete=false", body: string(content),
		header: map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + cookie, "Content-Type": "application/json"}})
	changed := requireProblem(t, put, http.StatusForbidden)
	assert.Equal(t, changed["type"], created["type"])
	assert.Equal(t, changed["detail"], created["detail"])

	r = sendAs(t, srv, ssnP1, http.MethodPost, path, body)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
}

func TestValidate(t *testing.T) {
	srv, _ := formTaskServer(t)
	r := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3101221/validate")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	v := r.json(t)
	assert.Equal(t, false, v["Success"])
	errs := v["ValidationErrors"].([]any)
	require.Len(t, errs, 2)
	assert.Equal(t, map[string]any{"FieldName": "AntallAnsatte", "FieldXPath": "/Skjema/AntallAnsatte",
		"ErrorMessage": errs[0].(map[string]any)["ErrorMessage"]}, errs[0])

	ok := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3101186/validate", "Accept", "application/xml")
	require.Equal(t, http.StatusOK, ok.Code, ok.Body.String())
	assert.Contains(t, ok.Body.String(), "<Success>true</Success>")
}

func TestAttachmentsAndSubForms(t *testing.T) {
	srv, _ := formTaskServer(t)
	path := "/api/" + orgO1 + "/messages/a3101067"
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 test"))
	r := sendAs(t, srv, ssnP1, http.MethodPost, path+"/attachments", `{"FileName":"lonn.pdf","AttachmentType":"Dokumentasjon","Data":"`+pdf+`"}`)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	loc := r.Header().Get("Location")
	require.NotEmpty(t, loc)
	dl := getAs(t, srv, ssnP1, pathOf(t, loc))
	require.Equal(t, http.StatusOK, dl.Code)
	assert.Equal(t, "%PDF-1.4 test", dl.Body.String())

	bad := sendAs(t, srv, ssnP1, http.MethodPost, path+"/attachments", `{"FileName":"virus.exe","AttachmentType":"Dokumentasjon","Data":"`+pdf+`"}`)
	requireProblem(t, bad, http.StatusBadRequest)
	unknownType := sendAs(t, srv, ssnP1, http.MethodPost, path+"/attachments", `{"FileName":"a.pdf","AttachmentType":"Hemmelig","Data":"`+pdf+`"}`)
	requireProblem(t, unknownType, http.StatusBadRequest)

	// The content must be what the name says, not empty and not an executable; the name a plain file name.
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct{ name, fileName, data, problem string }{
		{"executable named as a PDF", "lonn.pdf", b64("MZ\x90\x00\x03\x00\x00\x00"), "file-content-not-allowed"},
		{"ELF named as XML", "lonn.xml", b64("\x7fELF\x02\x01\x01"), "file-content-not-allowed"},
		{"text named as a PDF", "lonn.pdf", b64("not a pdf"), "file-content-not-allowed"},
		{"empty", "lonn.pdf", "", "file-content-not-allowed"},
		{"a device name", "nul.pdf", pdf, "file-name-not-allowed"},
		{"a right-to-left override", "lonn\u202Efdp.exe", pdf, "file-name-not-allowed"},
		{"a path", "..\\lonn.pdf", pdf, "file-name-not-allowed"},
		{"only dots", "...", pdf, "file-name-not-allowed"},
	} {
		body, err := json.Marshal(map[string]string{"FileName": tc.fileName, "AttachmentType": "Dokumentasjon", "Data": tc.data})
		require.NoError(t, err)
		p := requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPost, path+"/attachments", string(body)), http.StatusBadRequest)
		assert.Equal(t, "urn:postbox:problem:"+tc.problem, p["type"], tc.name)
		put := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101214"))},
			[]map[string]any{{"FileName": tc.fileName, "AttachmentType": "Revisjonsberetning", "Data": tc.data}})
		p = requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPut, "/api/"+orgO1+"/messages/a3101214?complete=false", put), http.StatusBadRequest)
		assert.Equal(t, "urn:postbox:problem:"+tc.problem, p["type"], "PUT: %s: %v", tc.name, p["detail"])
	}

	// A sub-form on P1's own 5302 task: added with a new id, then changed in place.
	own := "/api/my/messages/a3101116"
	sub := demoMessage(t, "a3101116")["Forms"].([]any)[1].(map[string]any)
	body, err := json.Marshal(map[string]any{"Type": "SubForm", "DataFormatId": sub["DataFormatId"],
		"DataFormatVersion": sub["DataFormatVersion"], "FormData": sub["FormData"]})
	require.NoError(t, err)
	added := sendAs(t, srv, ssnP1, http.MethodPut, own+"/forms/0", string(body))
	require.Equal(t, http.StatusCreated, added.Code, added.Body.String())
	formLoc := added.Header().Get("Location")
	changed := sendAs(t, srv, ssnP1, http.MethodPut, pathOf(t, formLoc), string(body))
	require.Equal(t, http.StatusOK, changed.Code, changed.Body.String())
	assert.Equal(t, formLoc, changed.Header().Get("Location"))
}

func TestCreateFormTask(t *testing.T) {
	srv, pool := formTaskServer(t)
	r := sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2}`)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	loc := r.Header().Get("Location")
	assert.Regexp(t, `/api/`+orgO1+`/messages/a[0-9]+$`, loc)
	m := getAs(t, srv, ssnP1, pathOf(t, loc)).json(t)
	assert.Equal(t, "Utfylling", m["Status"])
	assert.Equal(t, "Årsoppgave for næringsvirksomhet", m["Subject"])

	// With content it is validated like a PUT; refused content leaves no task behind.
	var before int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM messages`).Scan(&before))
	bad := sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101221"))}, nil))
	requireProblem(t, bad, http.StatusBadRequest)
	var after int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM messages`).Scan(&after))
	assert.Equal(t, before, after)

	// Numbers where the interface writes strings, and strings where it writes numbers.
	numbers := sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"Type":"FormTask","ServiceCode":4711,"ServiceEdition":"2"}`)
	require.Equal(t, http.StatusCreated, numbers.Code, numbers.Body.String())
	p := requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"Type":"FormTask","ServiceCode":4711,"ServiceEdition":"2.5"}`), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "ServiceEdition")

	requireProblem(t, sendAs(t, srv, ssnP4, http.MethodPost, "/api/"+orgO1+"/messages", `{"ServiceCode":"4711","ServiceEdition":2}`), http.StatusForbidden)
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"ServiceCode":"7001","ServiceEdition":1}`), http.StatusBadRequest)
	requireProblem(t, sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"ServiceCode":"4711"}`), http.StatusBadRequest)
}

// ownWorkerClient is a client of the form-task tests' dev server in nsOwnWorker, for a test that runs its
// own worker.
func ownWorkerClient(t *testing.T) client.Client {
	formTaskServer(t)
	c, err := client.Dial(client.Options{HostPort: formTaskEnv.dev.FrontendHostPort(), Namespace: nsOwnWorker, Logger: temporaltest.QuietLogger()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.NoError(t, worker.RegisterSearchAttributes(context.Background(), c, nsOwnWorker))
	return c
}

// allowConnections opens or closes the database of pool to new connections, closing those it has when it
// closes it: PostgreSQL is away for whoever uses it.
func allowConnections(pool *pgxpool.Pool, allow bool) error {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, storetest.ServerURL())
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	name := pool.Config().ConnConfig.Database
	if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t", pgx.Identifier{name}.Sanitize(), allow)); err != nil || allow {
		return err
	}
	_, err = admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
	return err
}

// A submission the workflow has archived is answered as archived even when the database goes away right
// after: the answer is built from the update's outcome instead of a failed read.
func TestArchivedSubmissionIsNeverAnsweredAsAFailure(t *testing.T) {
	pool := storetest.New(t)
	c := ownWorkerClient(t)
	acts, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	require.NoError(t, err)
	w := worker.New(c, acts, worker.Options{StopTimeout: 200 * time.Millisecond})
	w.RegisterActivityWithOptions(func(ctx context.Context, in formtask.CheckAndArchiveInput) (formtask.CheckAndArchiveResult, error) {
		res, err := acts.CheckAndArchive(ctx, in)
		if err == nil && res.Archive.ArchiveReference != "" {
			err = allowConnections(pool, false) // the database blips once the archive is committed
		}
		return res, err
	}, activity.RegisterOptions{Name: "CheckAndArchive", DisableAlreadyRegisteredCheck: true})
	require.NoError(t, w.Start())
	defer w.Stop()
	defer func() { require.NoError(t, allowConnections(pool, true)) }()
	srv, err := newAPIWith(pool, c)
	require.NoError(t, err)

	r := sendAs(t, srv, ssnP1, http.MethodPut, "/api/"+orgO1+"/messages/a3101102", putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))}, nil))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	m := r.json(t)
	assert.Equal(t, "Sendt og arkivert", m["Status"])
	assert.Regexp(t, `^AR[0-9]+$`, m["ArchiveReference"])

	require.NoError(t, allowConnections(pool, true))
	status, ref := messageStatus(t, pool, "a3101102")
	assert.Equal(t, "Sendt og arkivert", status)
	assert.Equal(t, m["ArchiveReference"], ref)
}

// Without Temporal the API says so with 503 and Retry-After, and keeps nothing.
func TestFormTasksWithoutTemporal(t *testing.T) {
	srv, pool := newServer(t)
	r := sendAs(t, srv, ssnP1, http.MethodPut, "/api/"+orgO1+"/messages/a3101214", putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101214"))}, nil))
	requireProblem(t, r, http.StatusServiceUnavailable)
	assert.NotEmpty(t, r.Header().Get("Retry-After"))
	var revisions int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions`).Scan(&revisions))
	assert.Zero(t, revisions)
}

// With the Temporal server down — stopped after the client knew it, or never there — a change is a 503
// with Retry-After once the server has not answered within the connect timeout, long before the client
// gives up; and its revision does not stay behind, the task is as it was.
func TestFormTasksTemporalUnreachable(t *testing.T) {
	cases := map[string]func(t *testing.T) client.Client{
		"server stopped": func(t *testing.T) client.Client {
			dev, err := temporaltest.StartDevServer(context.Background(), "", "")
			require.NoError(t, err)
			require.NoError(t, dev.Stop())
			return dev.Client()
		},
		"nothing listens": func(t *testing.T) client.Client {
			c, err := client.NewLazyClient(client.Options{HostPort: storetest.UnusedAddr(t), Logger: temporaltest.QuietLogger()})
			require.NoError(t, err)
			t.Cleanup(c.Close)
			return c
		},
	}
	for name, temporal := range cases {
		t.Run(name, func(t *testing.T) {
			pool := storetest.New(t)
			srv, err := newAPIWithTasks(pool, formtask.New(temporal(t), store.New(pool), formtask.Options{ConnectTimeout: 500 * time.Millisecond}), nil, nil)
			require.NoError(t, err)
			hangsUp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // as a client that gives up waiting
				ctx, cancel := context.WithCancel(r.Context())
				defer time.AfterFunc(30*time.Second, cancel).Stop()
				defer cancel()
				srv.ServeHTTP(w, r.WithContext(ctx))
			})
			before := demoFormData(t, "a3101102")
			edited := strings.Replace(before, "</Skjema>", "<Merknad>ikke lagret</Merknad></Skjema>", 1)

			r := sendAs(t, hangsUp, ssnP1, http.MethodPut, "/api/"+orgO1+"/messages/a3101102?complete=false", putBody(t, []map[string]any{mainForm(edited)}, nil))
			p := requireProblem(t, r, http.StatusServiceUnavailable)
			assert.Equal(t, "urn:postbox:problem:temporal-unavailable", p["type"])
			assert.Equal(t, "5", r.Header().Get("Retry-After"))
			var revisions int
			require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions`).Scan(&revisions))
			assert.Zero(t, revisions, "no revision is left")
			var data string
			require.NoError(t, pool.QueryRow(context.Background(), `SELECT form_data FROM forms WHERE message_id = 'a3101102' AND type = 'MainForm'`).Scan(&data))
			assert.Equal(t, before, data, "the stored form is unchanged")
			status, _ := messageStatus(t, pool, "a3101102")
			assert.Equal(t, "Utfylling", status)
		})
	}
}

// The connect timeout bounds waiting for the server, not the Update: an Update the server runs for longer
// (here: no worker takes it for a while) is answered when it is done.
func TestLongUpdateIsNotCutByTheConnectTimeout(t *testing.T) {
	pool := storetest.New(t)
	c := ownWorkerClient(t)
	srv, err := newAPIWithTasks(pool, formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool), ConnectTimeout: 200 * time.Millisecond}), nil, nil)
	require.NoError(t, err)
	acts, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	require.NoError(t, err)
	w := worker.New(c, acts, worker.Options{StopTimeout: 200 * time.Millisecond})
	// The worker starts some connect timeouts after the Update was sent.
	starter := time.AfterFunc(2*time.Second, func() { _ = w.Start() })
	defer func() {
		starter.Stop()
		w.Stop()
	}()

	r := sendAs(t, srv, ssnP1, http.MethodPut, "/api/"+orgO1+"/messages/a3101109?complete=false", putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101109"))}, nil))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Utfylling", r.json(t)["Status"])
}

// patternReader yields n bytes of a repeating pattern without holding them.
type patternReader struct{ left int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.left))
	for i := range n {
		p[i] = byte((r.left - int64(i)) % 251)
	}
	r.left -= int64(n)
	return n, nil
}

// pdfReader yields a PDF header and then the pattern, n bytes in all.
func pdfReader(n int64) io.Reader {
	const header = "%PDF-1.7\n"
	return io.MultiReader(strings.NewReader(header), &patternReader{n - int64(len(header))})
}

func streamUpload(t testing.TB, h http.Handler, path string, body io.Reader, length int64, contentType string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://postbox.test"+path, body)
	req.ContentLength = length
	req.Header.Set("ApiKey", keyAll)
	req.Header.Set("Authorization", "Bearer "+personTokenTB(t, ssnP1))
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	serve(t, h, rec, req)
	return rec
}

func personTokenTB(t testing.TB, ssn string) string {
	m, err := identity.LoadMinter(demoDir+"/certs/issuer-key.pem", "demo-1", testIssuer, testAudience)
	require.NoError(t, err)
	tok, err := m.Mint(identity.TokenRequest{PID: ssn, Scope: "platform:enduser"})
	require.NoError(t, err)
	return tok
}

func TestStreamedAttachment(t *testing.T) {
	srv, pool := formTaskServer(t)
	base := "/api/" + orgO1 + "/messages/a3101165/attachments/streamedattachment"
	countAttachments := func() (n int) {
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM attachments WHERE message_id = 'a3101165'`).Scan(&n))
		return n
	}
	before := countAttachments()

	const size = 3<<20 + 12345 // several chunks and a short one
	r := streamUpload(t, srv, base+"?fileName=grunnlag.pdf&attachmentType=Dokumentasjon", pdfReader(size), size, "application/octet-stream")
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	loc := r.Header().Get("Location")
	dl := getAs(t, srv, ssnP1, pathOf(t, loc))
	require.Equal(t, http.StatusOK, dl.Code)
	want, err := io.ReadAll(pdfReader(size))
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256(want), sha256.Sum256(dl.Body.Bytes()))
	assert.Equal(t, before+1, countAttachments())

	// The body is the file whatever Content-Type says, as the integrators' collection sends it.
	for _, contentType := range []string{"application/hal+json", "application/json", ""} {
		r := streamUpload(t, srv, base+"?fileName=vedlegg.pdf&attachmentType=Dokumentasjon", pdfReader(1000), 1000, contentType)
		require.Equal(t, http.StatusCreated, r.Code, "%q: %s", contentType, r.Body.String())
	}
	before = countAttachments()

	png := func(n int64) io.Reader {
		return io.MultiReader(strings.NewReader("\x89PNG\r\n\x1a\n"), &patternReader{n - 8})
	}
	// An executable named as a PDF, 3 MiB of it: refused on its first bytes.
	exe := func(n int64) io.Reader { return io.MultiReader(strings.NewReader("MZ\x90\x00"), &patternReader{n - 4}) }
	refusals := []struct {
		name, query, contentType string
		body                     func(int64) io.Reader
		size, length             int64
		status                   int
		problem                  string
	}{
		{"file type", "?fileName=virus.exe&attachmentType=Dokumentasjon", "application/octet-stream", pdfReader, 10, 10, http.StatusUnsupportedMediaType, "file-type-not-allowed"},
		{"unknown type", "?fileName=a.pdf&attachmentType=Hemmelig", "application/octet-stream", pdfReader, 10, 10, http.StatusBadRequest, "bad-request"},
		{"no file name", "?attachmentType=Dokumentasjon", "application/octet-stream", pdfReader, 10, 10, http.StatusBadRequest, "file-name-not-allowed"},
		{"too large, declared", "?fileName=bilde.png&attachmentType=Bilde", "application/octet-stream", png, 2 << 20, 2 << 20, http.StatusRequestEntityTooLarge, "attachment-too-large"},
		{"too large, chunked", "?fileName=bilde.png&attachmentType=Bilde", "application/octet-stream", png, 2 << 20, -1, http.StatusRequestEntityTooLarge, "attachment-too-large"},
		{"executable named as a PDF", "?fileName=grunnlag.pdf&attachmentType=Dokumentasjon", "application/octet-stream", exe, 3 << 20, 3 << 20, http.StatusBadRequest, "file-content-not-allowed"},
		{"executable named as a PDF, chunked", "?fileName=grunnlag.pdf&attachmentType=Dokumentasjon", "application/octet-stream", exe, 3 << 20, -1, http.StatusBadRequest, "file-content-not-allowed"},
		{"a PNG named as a PDF", "?fileName=grunnlag.pdf&attachmentType=Dokumentasjon", "application/octet-stream", png, 100, 100, http.StatusBadRequest, "file-content-not-allowed"},
		{"XML that is not", "?fileName=data.xml&attachmentType=Dokumentasjon", "application/octet-stream", pdfReader, 100, 100, http.StatusBadRequest, "file-content-not-allowed"},
		{"empty", "?fileName=grunnlag.pdf&attachmentType=Dokumentasjon", "application/octet-stream", pdfReader, 0, 0, http.StatusBadRequest, "file-content-not-allowed"},
		{"a device name", "?fileName=CON.pdf&attachmentType=Dokumentasjon", "application/octet-stream", pdfReader, 10, 10, http.StatusBadRequest, "file-name-not-allowed"},
		{"a right-to-left override", "?fileName=" + url.QueryEscape("grunnlag\u202Efdp.exe") + "&attachmentType=Dokumentasjon", "application/octet-stream", pdfReader, 10, 10, http.StatusBadRequest, "file-name-not-allowed"},
		{"an encoded path", "?fileName=..%252Fgrunnlag.pdf&attachmentType=Dokumentasjon", "application/octet-stream", pdfReader, 10, 10, http.StatusBadRequest, "file-name-not-allowed"},
	}
	for _, tc := range refusals {
		body := io.Reader(strings.NewReader(""))
		if tc.size > 0 {
			body = tc.body(tc.size)
		}
		r := streamUpload(t, srv, base+tc.query, body, tc.length, tc.contentType)
		assert.Equal(t, tc.status, r.Code, "%s: %s", tc.name, r.Body.String())
		assert.Contains(t, r.Header().Get("Content-Type"), "application/problem+json", tc.name)
		assert.Contains(t, r.Body.String(), "urn:postbox:problem:"+tc.problem, tc.name)
	}
	assert.Equal(t, before, countAttachments(), "refused uploads keep nothing")
	var revisions int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions WHERE message_id = 'a3101165' AND promoted_at IS NULL`).Scan(&revisions))
	assert.Zero(t, revisions)
}

// rss is the process's resident memory in bytes, from /proc.
func rss(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/statm")
	require.NoError(b, err)
	var pages, resident int64
	_, err = fmt.Sscan(string(raw), &pages, &resident)
	require.NoError(b, err)
	return resident * int64(os.Getpagesize())
}

// BenchmarkStreamedUpload200MB uploads a 200 MB attachment through the real router into PostgreSQL and
// reports the growth of resident memory while it streams (target: under 32 MB) and the throughput.
func BenchmarkStreamedUpload200MB(b *testing.B) {
	const size = 200 << 20
	srv, pool := formTaskServer(b)
	_, err := pool.Exec(context.Background(), `UPDATE attachment_rules SET max_file_size = 300 << 20, max_attachment_count = 1000,
		is_check_sum_allowed = true WHERE attachment_rule_id = 902`)
	require.NoError(b, err)
	sum := sha256.New()
	_, err = io.Copy(sum, pdfReader(size))
	require.NoError(b, err)
	digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum.Sum(nil)) + ":"
	// Without a digest, and with the client's Content-Digest, which the bytes are checked against.
	for _, header := range [][]string{nil, {"Content-Digest", digest}} {
		name := "plain"
		if header != nil {
			name = "content-digest"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				runtime.GC()
				start := rss(b)
				var (
					r       *httptest.ResponseRecorder
					elapsed time.Duration
				)
				peak := rssPeakDuring(b, func() {
					began := time.Now()
					r = streamUpload(b, srv, "/api/"+orgO1+"/messages/a3101172/attachments/streamedattachment?fileName=stor.pdf&attachmentType=Dokumentasjon",
						pdfReader(size), size, "application/octet-stream", header...)
					elapsed = time.Since(began)
				})
				if r.Code != http.StatusCreated {
					b.Fatal(r.Code, r.Body.String())
				}
				b.ReportMetric(float64(max(0, peak-start))/(1<<20), "rss-growth-MB")
				b.ReportMetric(float64(size)/(1<<20)/elapsed.Seconds(), "MB/s")
			}
		})
	}
}

// rssPeakDuring runs f and returns the highest resident memory sampled (every 5 ms) while it ran.
func rssPeakDuring(b *testing.B, f func()) int64 {
	var peak atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				if v := rss(b); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return peak.Load()
}
