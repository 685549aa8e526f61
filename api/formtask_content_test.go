package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/formtask/printpdf/pdftext"
)

// The forms and attachments tests build their own organization on the form-task server's database, with
// a writer and a reader on 5302/1 (main form and sub-forms) and 6120/1 (attachment types Dokumentasjon,
// which takes checksums, and Bilde), and make their own form tasks there.
const (
	contentOrg    = "310999977"
	contentWriter = ssnP3 // Read, Write and Delete on 5302/1 and 6120/1
	contentReader = ssnP2 // Read on 5302/1 and 6120/1
)

var contentFixture struct {
	once sync.Once
	err  error
}

type contentEnv struct {
	h    *api.Server
	pool *pgxpool.Pool
}

func newContentEnv(t *testing.T) contentEnv {
	t.Helper()
	srv, pool := formTaskServer(t)
	f := &contentFixture
	f.once.Do(func() {
		ctx := context.Background()
		var org int64
		if f.err = pool.QueryRow(ctx, `INSERT INTO parties (kind, organization_number, name, organization_form, status)
			VALUES ('Organization', $1, 'Vedlegg AS', 'AS', 'Active') RETURNING id`, contentOrg).Scan(&org); f.err != nil {
			return
		}
		for _, r := range []struct {
			ssn, code string
			actions   []string
		}{{contentWriter, "CWRITE", []string{"Read", "Write", "Delete"}}, {contentReader, "CREAD", []string{"Read"}}} {
			var def int
			if f.err = pool.QueryRow(ctx, `INSERT INTO role_definitions (role_type, role_definition_code, role_name, role_description)
				VALUES ('Altinn', $1, $1, 'forms and attachments test role') RETURNING id`, r.code).Scan(&def); f.err != nil {
				return
			}
			for _, svc := range [][2]any{{"5302", 1}, {"6120", 1}} {
				for _, action := range r.actions {
					if _, f.err = pool.Exec(ctx, `INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
						VALUES ($1, $2, $3, $4, false)`, def, svc[0], svc[1], action); f.err != nil {
						return
					}
				}
			}
			if _, f.err = pool.Exec(ctx, `INSERT INTO roles (holder_party_id, reportee_id, role_definition_id, delegator, delegated_time)
				SELECT id, $2, $3, 'test', '2025-01-01' FROM parties WHERE ssn = $1`, r.ssn, org, def); f.err != nil {
				return
			}
		}
	})
	require.NoError(t, f.err)
	return contentEnv{h: srv, pool: pool}
}

// send makes a request as ssn with a JSON body and the extra headers given as name, value pairs.
func (e contentEnv) send(t *testing.T, ssn, method, path, body string, header ...string) response {
	t.Helper()
	hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssn, "platform:enduser"),
		"Content-Type": "application/hal+json"}
	for i := 0; i+1 < len(header); i += 2 {
		hdr[header[i]] = header[i+1]
	}
	return do(t, e.h, request{method: method, path: path, header: hdr, body: body})
}

func contentPath(id string, rest ...string) string {
	return "/api/" + contentOrg + "/messages/" + id + strings.Join(rest, "")
}

// newTask makes a form task of the service as the writer, with the forms and attachments given, and
// returns its id.
func (e contentEnv) newTask(t *testing.T, service string, edition int, forms, attachments []map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"Type": "FormTask", "ServiceCode": service, "ServiceEdition": edition,
		"_embedded": map[string]any{"forms": forms, "attachments": attachments}})
	require.NoError(t, err)
	r := e.send(t, contentWriter, http.MethodPost, "/api/"+contentOrg+"/messages", string(b))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	loc := r.Header().Get("Location")
	return loc[strings.LastIndex(loc, "/")+1:]
}

// demoForm is form i of a dataset message as a request body's form.
func demoForm(t *testing.T, messageID string, i int) map[string]any {
	f := demoMessage(t, messageID)["Forms"].([]any)[i].(map[string]any)
	return map[string]any{"Type": f["Type"], "DataFormatId": f["DataFormatId"], "DataFormatVersion": f["DataFormatVersion"], "FormData": f["FormData"]}
}

func jsonOf(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// texts returns the one text column query selects for a message id, in the query's order.
func (e contentEnv) texts(t *testing.T, query, id string) []string {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), query, id)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// eventTypes returns the types of the outbox events of a message, in order, without the prefix and version
// ("formtask.form.added").
func (e contentEnv) eventTypes(t *testing.T, id string) []string {
	types := e.texts(t, `SELECT type FROM events WHERE message_id = $1 ORDER BY seq`, id)
	for i, typ := range types {
		types[i] = strings.TrimSuffix(strings.TrimPrefix(typ, "no.postbox."), ".v1")
	}
	return types
}

func (e contentEnv) auditActions(t *testing.T, id string) []string {
	return e.texts(t, `SELECT action FROM message_audit WHERE message_id = $1 ORDER BY id`, id)
}

// toSigning sends the task with this content to signing (the writer has no Sign right), where its content
// is fixed.
func (e contentEnv) toSigning(t *testing.T, id string, service string, edition int, forms []map[string]any, attachments ...map[string]any) {
	t.Helper()
	body := jsonOf(t, map[string]any{"Type": "FormTask", "ServiceCode": service, "ServiceEdition": edition,
		"_embedded": map[string]any{"forms": forms, "attachments": attachments}})
	r := e.send(t, contentWriter, http.MethodPut, contentPath(id, "?sign=false"), body)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	require.Equal(t, "Signering", r.json(t)["Status"])
}

func TestFormsOfAFormTask(t *testing.T) {
	e := newContentEnv(t)
	main, sub := demoForm(t, "a3101116", 0), demoForm(t, "a3101116", 1)
	id := e.newTask(t, "5302", 1, []map[string]any{main}, nil)

	list := e.send(t, contentReader, http.MethodGet, contentPath(id, "/forms"), "")
	require.Equal(t, http.StatusOK, list.Code, list.Body.String())
	require.NotEmpty(t, list.Header().Get("ETag"))
	forms := list.embedded(t, "forms")
	require.Len(t, forms, 1)
	assert.Equal(t, "MainForm", forms[0]["Type"])
	mainPath := pathOf(t, link(t, forms[0], "self"))

	// Only Write adds a sub-form; a main form is no sub-form.
	requireProblem(t, e.send(t, contentReader, http.MethodPost, contentPath(id, "/forms"), jsonOf(t, sub)), http.StatusForbidden)
	requireProblem(t, e.send(t, contentWriter, http.MethodPost, contentPath(id, "/forms"), jsonOf(t, main)), http.StatusBadRequest)
	// If-Match on the collection: a stale one is refused.
	requireProblem(t, e.send(t, contentWriter, http.MethodPost, contentPath(id, "/forms"), jsonOf(t, sub), "If-Match", `"stale"`), http.StatusPreconditionFailed)

	added := e.send(t, contentWriter, http.MethodPost, contentPath(id, "/forms"), jsonOf(t, sub), "If-Match", list.Header().Get("ETag"))
	require.Equal(t, http.StatusCreated, added.Code, added.Body.String())
	subPath := pathOf(t, added.Header().Get("Location"))
	form := e.send(t, contentReader, http.MethodGet, subPath, "")
	require.Equal(t, http.StatusOK, form.Code, form.Body.String())
	assert.Equal(t, "SubForm", form.json(t)["Type"])
	assert.Len(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/forms"), "").embedded(t, "forms"), 2)

	// The print of one form holds that form alone; the reader may have it.
	print := e.send(t, contentReader, http.MethodGet, subPath+"/print", "")
	require.Equal(t, http.StatusOK, print.Code, print.Body.String())
	assert.Equal(t, "application/pdf", print.Header().Get("Content-Type"))
	text, err := pdftext.Text(print.Body.Bytes())
	require.NoError(t, err)
	assert.Contains(t, text, "NS-5302B Budsjettspesifikasjon")
	assert.NotContains(t, text, "NS-5302 Søknad om næringstilskudd")
	requireProblem(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/forms/9/print"), ""), http.StatusNotFound)

	// The main form stays; the sub-form goes, under If-Match of its own ETag.
	p := requireProblem(t, e.send(t, contentWriter, http.MethodDelete, mainPath, ""), http.StatusConflict)
	assert.Equal(t, "urn:postbox:problem:main-form", p["type"])
	requireProblem(t, e.send(t, contentReader, http.MethodDelete, subPath, ""), http.StatusForbidden)
	requireProblem(t, e.send(t, contentWriter, http.MethodDelete, subPath, "", "If-Match", `"stale"`), http.StatusPreconditionFailed)
	r := e.send(t, contentWriter, http.MethodDelete, subPath, "", "If-Match", form.Header().Get("ETag"))
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	requireProblem(t, e.send(t, contentReader, http.MethodGet, subPath, ""), http.StatusNotFound)
	requireProblem(t, e.send(t, contentWriter, http.MethodDelete, subPath, ""), http.StatusNotFound)
	requireProblem(t, e.send(t, contentWriter, http.MethodDelete, contentPath(id, "/forms/x"), ""), http.StatusNotFound)
	assert.Len(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/forms"), "").embedded(t, "forms"), 1)
	assert.Equal(t, []string{"PutSubForm", "DeleteForm"}, e.auditActions(t, id))
	assert.Equal(t, []string{"formtask.created", "formtask.form.added", "formtask.form.deleted"}, e.eventTypes(t, id))

	// Unknown message, a correspondence, a task past Utfylling.
	requireProblem(t, e.send(t, contentReader, http.MethodGet, contentPath("a9999999", "/forms"), ""), http.StatusNotFound)
	correspondence := "/api/" + orgO1 + "/messages/a3100150"
	requireProblem(t, e.send(t, ssnP1, http.MethodGet, correspondence+"/forms", ""), http.StatusConflict)
	requireProblem(t, e.send(t, ssnP1, http.MethodPost, correspondence+"/forms", jsonOf(t, sub)), http.StatusConflict)
	requireProblem(t, e.send(t, ssnP1, http.MethodDelete, correspondence+"/forms/1", ""), http.StatusConflict)
	requireProblem(t, e.send(t, ssnP1, http.MethodGet, correspondence+"/forms/1/print", ""), http.StatusConflict)

	signing := e.newTask(t, "5302", 1, []map[string]any{main, sub}, nil)
	e.toSigning(t, signing, "5302", 1, []map[string]any{main, sub})
	subOfSigning := pathOf(t, link(t, e.send(t, contentReader, http.MethodGet, contentPath(signing, "/forms"), "").embedded(t, "forms")[1], "self"))
	p = requireProblem(t, e.send(t, contentWriter, http.MethodDelete, subOfSigning, ""), http.StatusConflict)
	assert.Equal(t, "Signering", p["taskStatus"], p)
	requireProblem(t, e.send(t, contentWriter, http.MethodPost, contentPath(signing, "/forms"), jsonOf(t, sub)), http.StatusConflict)
	assert.Len(t, e.send(t, contentReader, http.MethodGet, contentPath(signing, "/forms"), "").embedded(t, "forms"), 2)
}

func pdfBytes(s string) []byte { return []byte("%PDF-1.4 " + s) }

func attachmentOf(name, typ string, data []byte) map[string]any {
	return map[string]any{"FileName": name, "AttachmentType": typ, "Data": base64.StdEncoding.EncodeToString(data)}
}

func TestAttachmentsOfAFormTask(t *testing.T) {
	e := newContentEnv(t)
	main := demoForm(t, "a3101067", 0)
	id := e.newTask(t, "6120", 1, []map[string]any{main}, []map[string]any{
		attachmentOf("grunnlag.pdf", "Dokumentasjon", pdfBytes("grunnlag")),
		attachmentOf("bilde.png", "Bilde", []byte("\x89PNG\r\n\x1a\n bilde")),
	})

	list := e.send(t, contentReader, http.MethodGet, contentPath(id, "/attachments"), "")
	require.Equal(t, http.StatusOK, list.Code, list.Body.String())
	require.NotEmpty(t, list.Header().Get("ETag"))
	atts := list.embedded(t, "attachments")
	require.Len(t, atts, 2)
	assert.Equal(t, "grunnlag.pdf", atts[0]["FileName"])
	assert.Equal(t, "Dokumentasjon", atts[0]["AttachmentType"])
	self := atts[0]["_links"].(map[string]any)["self"].(map[string]any)
	assert.Equal(t, "grunnlag.pdf", self["fileName"])
	doc, png := pathOf(t, self["href"].(string)), pathOf(t, link(t, atts[1], "self"))
	download := func() response { return e.send(t, contentReader, http.MethodGet, doc, "") }

	// New content, as JSON: only with Write; checked as an upload is.
	replacement := pdfBytes("ny versjon")
	requireProblem(t, e.send(t, contentReader, http.MethodPost, doc, jsonOf(t, attachmentOf("ny.pdf", "", replacement))), http.StatusForbidden)
	for name, tc := range map[string]struct {
		body    map[string]any
		status  int
		problem string
	}{
		"executable":          {attachmentOf("ny.pdf", "", []byte("MZ\x90\x00")), http.StatusBadRequest, "file-content-not-allowed"},
		"file type":           {attachmentOf("ny.exe", "", replacement), http.StatusUnsupportedMediaType, "file-type-not-allowed"},
		"other type":          {attachmentOf("ny.pdf", "Bilde", replacement), http.StatusBadRequest, "bad-request"},
		"checksum mismatch":   {withCheckSum(attachmentOf("ny.pdf", "", replacement), pdfBytes("annen")), http.StatusBadRequest, "checksum-mismatch"},
		"checksum not in hex": {map[string]any{"Data": base64.StdEncoding.EncodeToString(replacement), "CheckSum": "xyz"}, http.StatusBadRequest, "bad-checksum"},
	} {
		p := requireProblem(t, e.send(t, contentWriter, http.MethodPost, doc, jsonOf(t, tc.body)), tc.status)
		assert.Equal(t, "urn:postbox:problem:"+tc.problem, p["type"], name)
		assert.Equal(t, string(pdfBytes("grunnlag")), download().Body.String(), name)
	}
	// Bilde takes no checksum.
	p := requireProblem(t, e.send(t, contentWriter, http.MethodPost, png, jsonOf(t, withCheckSum(attachmentOf("b.png", "", []byte("\x89PNG\r\n\x1a\n")), []byte("\x89PNG\r\n\x1a\n")))), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:checksum-not-allowed", p["type"])

	r := e.send(t, contentWriter, http.MethodPost, doc, jsonOf(t, withCheckSum(attachmentOf("ny.pdf", "", replacement), replacement)),
		"If-Match", download().Header().Get("ETag"))
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	got := download()
	assert.Equal(t, string(replacement), got.Body.String())
	assert.Contains(t, got.Header().Get("Content-Disposition"), "ny.pdf")

	// New content, streamed, with its Content-Digest.
	streamed := pdfBytes("strømmet")
	sum := sha256.Sum256(streamed)
	digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
	p = requireProblem(t, e.send(t, contentWriter, http.MethodPost, doc+"?fileName=strom.pdf", string(pdfBytes("noe annet")),
		"Content-Type", "application/octet-stream", "Content-Digest", digest), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:checksum-mismatch", p["type"])
	assert.Equal(t, string(replacement), download().Body.String(), "a refused replacement keeps the content")
	requireProblem(t, e.send(t, contentWriter, http.MethodPost, doc, string(streamed), "Content-Type", "application/octet-stream",
		"Content-Digest", "sha-256=:bm90IGEgc3Vt:"), http.StatusBadRequest)
	r = e.send(t, contentWriter, http.MethodPost, doc+"?fileName=strom.pdf", string(streamed), "Content-Type", "application/octet-stream",
		"Content-Digest", "sha-512=:AAAA:, "+digest)
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Equal(t, string(streamed), download().Body.String())

	// Deleted: under If-Match of its ETag; the minimum counts are not checked here.
	requireProblem(t, e.send(t, contentReader, http.MethodDelete, png, ""), http.StatusForbidden)
	requireProblem(t, e.send(t, contentWriter, http.MethodDelete, png, "", "If-Match", `"stale"`), http.StatusPreconditionFailed)
	r = e.send(t, contentWriter, http.MethodDelete, png, "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	requireProblem(t, e.send(t, contentReader, http.MethodGet, png, ""), http.StatusNotFound)
	requireProblem(t, e.send(t, contentWriter, http.MethodDelete, png, ""), http.StatusNotFound)
	requireProblem(t, e.send(t, contentWriter, http.MethodPost, png, jsonOf(t, attachmentOf("b.png", "", []byte("\x89PNG\r\n\x1a\n")))), http.StatusNotFound)
	assert.Len(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/attachments"), "").embedded(t, "attachments"), 1)
	assert.Equal(t, []string{"ReplaceAttachment", "ReplaceAttachment", "DeleteAttachment"}, e.auditActions(t, id))
	assert.Equal(t, []string{"formtask.created", "formtask.attachment.added", "formtask.attachment.added",
		"formtask.attachment.replaced", "formtask.attachment.replaced", "formtask.attachment.deleted"}, e.eventTypes(t, id))

	// A correspondence has attachments to list, none to change.
	correspondence := "/api/" + orgO1 + "/messages/a3100150"
	require.Equal(t, http.StatusOK, e.send(t, ssnP1, http.MethodGet, correspondence+"/attachments", "").Code)
	requireProblem(t, e.send(t, ssnP1, http.MethodDelete, correspondence+"/attachments/1", ""), http.StatusConflict)
	requireProblem(t, e.send(t, ssnP1, http.MethodPost, correspondence+"/attachments/1", jsonOf(t, attachmentOf("a.pdf", "", replacement))), http.StatusConflict)

	// Past Utfylling nothing changes.
	e.toSigning(t, id, "6120", 1, []map[string]any{main}, attachmentOf("strom.pdf", "Dokumentasjon", streamed))
	doc = pathOf(t, link(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/attachments"), "").embedded(t, "attachments")[0], "self"))
	requireProblem(t, e.send(t, contentWriter, http.MethodDelete, doc, ""), http.StatusConflict)
	requireProblem(t, e.send(t, contentWriter, http.MethodPost, doc, jsonOf(t, attachmentOf("ny.pdf", "", replacement))), http.StatusConflict)
	assert.Equal(t, string(streamed), download().Body.String())
}

func withCheckSum(att map[string]any, of []byte) map[string]any {
	sum := sha256.Sum256(of)
	att["CheckSum"] = hex.EncodeToString(sum[:])
	return att
}

// Parallel deletes of one attachment: one deletes it, the others find it gone (404), none fails.
func TestConcurrentAttachmentDeletes(t *testing.T) {
	e := newContentEnv(t)
	id := e.newTask(t, "6120", 1, []map[string]any{demoForm(t, "a3101067", 0)}, []map[string]any{
		attachmentOf("a.pdf", "Dokumentasjon", pdfBytes("a")), attachmentOf("b.pdf", "Dokumentasjon", pdfBytes("b")),
	})
	atts := e.send(t, contentReader, http.MethodGet, contentPath(id, "/attachments"), "").embedded(t, "attachments")
	target := pathOf(t, link(t, atts[0], "self"))
	const n = 4
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = e.send(t, contentWriter, http.MethodDelete, target, "").Code
		}()
	}
	wg.Wait()
	deleted := 0
	for _, c := range codes {
		switch c {
		case http.StatusNoContent:
			deleted++
		default:
			assert.Equal(t, http.StatusNotFound, c, "codes %v", codes)
		}
	}
	assert.Equal(t, 1, deleted, "codes %v", codes)
	left := e.send(t, contentReader, http.MethodGet, contentPath(id, "/attachments"), "").embedded(t, "attachments")
	require.Len(t, left, 1)
	assert.Equal(t, "b.pdf", left[0]["FileName"])
	assert.Equal(t, []string{"DeleteAttachment"}, e.auditActions(t, id))
	evs := e.eventTypes(t, id)
	assert.Equal(t, []string{"formtask.created", "formtask.attachment.added", "formtask.attachment.added", "formtask.attachment.deleted"}, evs,
		"one event of the one delete")
	var revisions int
	require.NoError(t, e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM form_revisions WHERE message_id = $1 AND promoted_at IS NULL`, id).Scan(&revisions))
	assert.Zero(t, revisions, "refused deletes leave no revision behind")
}

// xsdRule is an attachment type of 6120/1 made for the test whose XML attachments must be valid against
// a schema of their own.
const (
	xsdRuleID   = 9901
	xsdRuleType = "Lonnsdata"
	xsdRuleXSD  = `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xs:element name="Lonn"><xs:complexType><xs:sequence>
    <xs:element name="Belop" type="xs:decimal"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>`
)

func TestAttachmentsValidatedAgainstTheirRuleSchema(t *testing.T) {
	e := newContentEnv(t)
	_, err := e.pool.Exec(context.Background(), `INSERT INTO attachment_rules (attachment_rule_id, service_code, service_edition,
			allowed_file_types, attachment_type_name, attachment_type_name_language, is_check_sum_allowed,
			is_xsd_validation_required, max_attachment_count, min_attachment_count, max_file_size, xsd)
		VALUES ($1, '6120', 1, 'xml', $2, $2, false, true, 3, 0, 65536, $3) ON CONFLICT DO NOTHING`, xsdRuleID, xsdRuleType, xsdRuleXSD)
	require.NoError(t, err)

	schema := e.send(t, contentReader, http.MethodGet, fmt.Sprintf("/api/metadata/formtask/6120/1/attachmentrules/%d/xsd", xsdRuleID), "")
	require.Equal(t, http.StatusOK, schema.Code, schema.Body.String())
	assert.Equal(t, xsdRuleXSD, schema.Body.String())
	assert.Equal(t, "application/xml; charset=utf-8", schema.Header().Get("Content-Type"))
	for _, path := range []string{
		"/api/metadata/formtask/6120/1/attachmentrules/902/xsd",  // no XSD validation
		"/api/metadata/formtask/4711/2/attachmentrules/9901/xsd", // a rule of another service
		"/api/metadata/formtask/6120/1/attachmentrules/77777/xsd",
		"/api/metadata/formtask/6120/1/attachmentrules/x/xsd",
	} {
		requireProblem(t, e.send(t, contentReader, http.MethodGet, path, ""), http.StatusNotFound)
	}

	id := e.newTask(t, "6120", 1, []map[string]any{demoForm(t, "a3101067", 0)}, nil)
	valid, invalid := `<Lonn><Belop>1250.50</Belop></Lonn>`, `<Lonn><Belop>mye</Belop></Lonn>`
	r := e.send(t, contentWriter, http.MethodPost, contentPath(id, "/attachments"), jsonOf(t, attachmentOf("lonn.xml", xsdRuleType, []byte(valid))))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	added := pathOf(t, r.Header().Get("Location"))

	p := requireProblem(t, e.send(t, contentWriter, http.MethodPost, contentPath(id, "/attachments"),
		jsonOf(t, attachmentOf("feil.xml", xsdRuleType, []byte(invalid)))), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:validation-failed", p["type"])
	errs := p["errors"].([]any)
	require.NotEmpty(t, errs)
	assert.Equal(t, "/Lonn/Belop", errs[0].(map[string]any)["FieldXPath"])
	assert.Contains(t, errs[0].(map[string]any)["ErrorMessage"], "feil.xml")
	p = requireProblem(t, e.send(t, contentWriter, http.MethodPost,
		contentPath(id, "/attachments/streamedattachment?fileName=feil.xml&attachmentType="+xsdRuleType), invalid,
		"Content-Type", "application/octet-stream"), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:validation-failed", p["type"])
	requireProblem(t, e.send(t, contentWriter, http.MethodPost, added, invalid, "Content-Type", "application/octet-stream"), http.StatusBadRequest)
	assert.Equal(t, valid, e.send(t, contentReader, http.MethodGet, added, "").Body.String())
	assert.Len(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/attachments"), "").embedded(t, "attachments"), 1)
}

// A form task in the trashbin has left the mailbox: its forms and attachments are not found (404), and
// their changes are refused with 409 in-trashbin; restored, they change again.
func TestContentOfATrashedTask(t *testing.T) {
	e := newContentEnv(t)
	main, sub := demoForm(t, "a3101116", 0), demoForm(t, "a3101116", 1)
	id := e.newTask(t, "5302", 1, []map[string]any{main, sub}, nil)
	subPath := pathOf(t, link(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/forms"), "").embedded(t, "forms")[1], "self"))
	r := e.send(t, contentWriter, http.MethodDelete, contentPath(id), "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())

	requireProblem(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/forms"), ""), http.StatusNotFound)
	requireProblem(t, e.send(t, contentReader, http.MethodGet, contentPath(id, "/attachments"), ""), http.StatusNotFound)
	requireProblem(t, e.send(t, contentReader, http.MethodGet, subPath+"/print", ""), http.StatusNotFound)
	for _, change := range []response{
		e.send(t, contentWriter, http.MethodDelete, subPath, ""),
		e.send(t, contentWriter, http.MethodPost, contentPath(id, "/forms"), jsonOf(t, sub)),
		e.send(t, contentWriter, http.MethodDelete, contentPath(id, "/attachments/1"), ""),
	} {
		p := requireProblem(t, change, http.StatusConflict)
		assert.Equal(t, "urn:postbox:problem:in-trashbin", p["type"])
	}

	r = e.send(t, contentWriter, http.MethodPut, contentPath(id, "/restore"), "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	r = e.send(t, contentWriter, http.MethodDelete, subPath, "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
}
