package api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/client"
	"github.com/postbox/postbox/client/pull"
)

// The agency's download queue, on the real router, database, Temporal dev server and worker: a task P1
// submits for O1 on FJE's service 4711/2 reaches FJE's queue with every part byte-exact, as single
// downloads and as one ZIP, and leaves the unconfirmed queue once FJE confirms it.

const (
	scopeQueueRead    = "platform:serviceowner/submissions.read"
	scopeQueueConfirm = "platform:serviceowner/submissions.write"
)

func fjeQueue(t testing.TB) soCaller {
	return soCaller{name: "FJE queue", key: keyFJE, token: orgToken(t, orgFJE, scopeQueueRead+" "+scopeQueueConfirm)}
}

// send makes a request of the service-owner area with any method.
func (sc soCaller) send(t *testing.T, h http.Handler, method, path string, header ...string) response {
	t.Helper()
	hdr := map[string]string{"ApiKey": sc.key, "Authorization": "Bearer " + sc.token}
	for i := 0; i+1 < len(header); i += 2 {
		hdr[header[i]] = header[i+1]
	}
	return do(t, h, request{method: method, path: path, header: hdr})
}

// submitted is what P1 sent with a task, to compare the agency's downloads with.
type submitted struct {
	ref, messagePath string
	formData         string
	attachment       []byte
}

// submitWithAttachment creates a task of O1 and submits it at once with its main form and one PDF
// attachment of unique bytes.
func submitWithAttachment(t *testing.T, h http.Handler) submitted {
	t.Helper()
	path, _ := newTask(t, h, "")
	s := submitted{messagePath: path, formData: demoFormData(t, "a3101102"),
		attachment: []byte(fmt.Sprintf("%%PDF-1.4 revisjonsberetning %d\n%s", time.Now().UnixNano(), strings.Repeat("\x00\xff", 300_000)))}
	body := putBody(t, []map[string]any{mainForm(s.formData)}, []map[string]any{{"FileName": "revisjon.pdf",
		"AttachmentType": "Revisjonsberetning", "Data": base64.StdEncoding.EncodeToString(s.attachment)}})
	r := sendAs(t, h, ssnP1, http.MethodPut, path, body)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	require.Equal(t, "Sendt og arkivert", r.json(t)["Status"])
	s.ref = r.json(t)["ArchiveReference"].(string)
	return s
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// findSubmission walks the queue at path and returns the entry of ref, or nil.
func findSubmission(t *testing.T, h http.Handler, sc soCaller, path, ref string) map[string]any {
	t.Helper()
	items, _ := sc.walk(t, h, path, "submissions")
	for _, it := range items {
		if it["ArchiveReference"] == ref {
			return it
		}
	}
	return nil
}

func TestTheAgencyReceivesASubmissionByteExact(t *testing.T) {
	srv, _ := formTaskServer(t)
	s := submitWithAttachment(t, srv)
	fje := fjeQueue(t)

	entry := findSubmission(t, srv, fje, "/api/serviceowner/submissions?serviceCode=4711&serviceEdition=2&reportee="+orgO1, s.ref)
	require.NotNil(t, entry, "the archive is in its owner's unconfirmed queue")
	assert.Equal(t, map[string]any{"ReporteeId": entry["Reportee"].(map[string]any)["ReporteeId"], "Name": entry["Reportee"].(map[string]any)["Name"],
		"OrganizationNumber": orgO1}, entry["Reportee"])
	assert.Equal(t, "4711", entry["ServiceCode"])
	assert.NotEmpty(t, entry["SignedBy"])
	assert.Nil(t, entry["ConfirmedDateTime"])
	forms := entry["Forms"].([]any)
	require.Len(t, forms, 1)
	assert.Equal(t, sha256Hex([]byte(s.formData)), forms[0].(map[string]any)["SHA256"])
	attachments := entry["Attachments"].([]any)
	require.Len(t, attachments, 1)
	att := attachments[0].(map[string]any)
	assert.Equal(t, sha256Hex(s.attachment), att["SHA256"])
	assert.Equal(t, float64(len(s.attachment)), att["FileSize"])
	assert.Equal(t, "application/pdf", att["ContentType"])

	// Every part, byte for byte, by the links of the entry.
	self := requestURI(t, link(t, entry, "self"))
	formPath := requestURI(t, entry["_links"].(map[string]any)["formdata"].([]any)[0].(map[string]any)["href"].(string))
	form := fje.get(t, srv, formPath)
	require.Equal(t, http.StatusOK, form.Code, form.Body.String())
	assert.Equal(t, s.formData, form.Body.String())
	assert.Equal(t, `"`+sha256Hex([]byte(s.formData))+`"`, form.Header().Get("ETag"))

	attPath := requestURI(t, entry["_links"].(map[string]any)["attachment"].([]any)[0].(map[string]any)["href"].(string))
	dl := fje.get(t, srv, attPath)
	require.Equal(t, http.StatusOK, dl.Code, dl.Body.String())
	assert.True(t, bytes.Equal(s.attachment, dl.Body.Bytes()), "the attachment is byte-exact")
	assert.Equal(t, `"`+sha256Hex(s.attachment)+`"`, dl.Header().Get("ETag"))
	part := fje.get(t, srv, attPath, "Range", "bytes=262140-262150")
	require.Equal(t, http.StatusPartialContent, part.Code)
	assert.Equal(t, s.attachment[262140:262151], part.Body.Bytes(), "a range")
	notModified := fje.get(t, srv, attPath, "If-None-Match", dl.Header().Get("ETag"))
	assert.Equal(t, http.StatusNotModified, notModified.Code)

	printed := fje.get(t, srv, requestURI(t, link(t, entry, "print")))
	require.Equal(t, http.StatusOK, printed.Code, printed.Body.String())
	assert.True(t, strings.HasPrefix(printed.Body.String(), "%PDF-"))
	assert.Equal(t, entry["Print"].(map[string]any)["SHA256"], sha256Hex(printed.Body.Bytes()))

	// All of it as one ZIP, each entry as its manifest says.
	z := fje.get(t, srv, self, "Accept", "application/zip")
	require.Equal(t, http.StatusOK, z.Code, z.Body.String())
	assert.Equal(t, "application/zip", z.Header().Get("Content-Type"))
	zr, err := zip.NewReader(bytes.NewReader(z.Body.Bytes()), int64(z.Body.Len()))
	require.NoError(t, err)
	entries := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		entries[f.Name] = b
	}
	var manifest struct {
		ArchiveReference string
		Parts            []struct{ Path, Kind, SHA256 string }
	}
	require.NoError(t, json.Unmarshal(entries["manifest.json"], &manifest))
	assert.Equal(t, s.ref, manifest.ArchiveReference)
	require.Len(t, manifest.Parts, 3)
	assert.Len(t, entries, 4, "the manifest and its three parts")
	for _, p := range manifest.Parts {
		require.Contains(t, entries, p.Path)
		assert.Equal(t, p.SHA256, sha256Hex(entries[p.Path]), p.Path)
	}
	assert.Equal(t, s.formData, string(entries[manifest.Parts[0].Path]))
	assert.Equal(t, s.attachment, entries[manifest.Parts[1].Path])

	// The description in XML, and the log of the four downloads.
	x := fje.get(t, srv, self, "Accept", "application/hal+xml")
	require.Equal(t, http.StatusOK, x.Code, x.Body.String())
	requireWellFormedXML(t, x.Body.Bytes())
	log := fje.list(t, srv, self+"/log", "log")
	var parts []string
	for _, l := range log {
		assert.Equal(t, "Download", l["Action"])
		assert.Equal(t, orgFJE, l["OrganizationNumber"])
		parts = append(parts, l["Part"].(string))
	}
	assert.Equal(t, []string{"forms/" + fmt.Sprint(forms[0].(map[string]any)["FormId"]) + ".xml",
		"attachments/" + fmt.Sprint(att["AttachmentId"]), "attachments/" + fmt.Sprint(att["AttachmentId"]),
		"attachments/" + fmt.Sprint(att["AttachmentId"]), "print.pdf", "submission.zip"}, parts,
		"every request for a part is logged: the whole, the range and the conditional one")
}

func TestConfirmingTakesASubmissionOffTheQueueOnce(t *testing.T) {
	srv, pool := formTaskServer(t)
	s := submitWithAttachment(t, srv)
	fje := fjeQueue(t)
	self := "/api/serviceowner/submissions/" + s.ref
	var after int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT last_seq FROM event_sequence`).Scan(&after))

	first := fje.send(t, srv, http.MethodPut, self+"/confirm")
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	confirmedAt := first.json(t)["ConfirmedDateTime"]
	require.NotNil(t, confirmedAt)
	assert.Equal(t, orgFJE, first.json(t)["ConfirmedBy"])
	again := fje.send(t, srv, http.MethodPut, self+"/confirm")
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	assert.Equal(t, confirmedAt, again.json(t)["ConfirmedDateTime"], "a repeat answers the same")

	assert.Nil(t, findSubmission(t, srv, fje, "/api/serviceowner/submissions?serviceCode=4711", s.ref), "off the unconfirmed queue")
	assert.NotNil(t, findSubmission(t, srv, fje, "/api/serviceowner/submissions?serviceCode=4711&confirmed=true", s.ref))
	assert.NotNil(t, findSubmission(t, srv, fje, "/api/serviceowner/submissions?serviceCode=4711&confirmed=all", s.ref))

	var confirms int
	for _, l := range fje.list(t, srv, self+"/log", "log") {
		if l["Action"] == "Confirm" {
			confirms++
		}
	}
	assert.Equal(t, 1, confirms, "one confirmation, however often it is repeated")

	// The party sees that the agency has it, and can filter on it.
	m := getAs(t, srv, ssnP1, s.messagePath)
	require.Equal(t, http.StatusOK, m.Code)
	assert.Equal(t, confirmedAt, m.json(t)["ReceivedByServiceOwnerDateTime"])
	mx := getAs(t, srv, ssnP1, s.messagePath, "Accept", "application/xml")
	assert.Contains(t, mx.Body.String(), "<ReceivedByServiceOwnerDateTime>")
	id := s.messagePath[strings.LastIndex(s.messagePath, "/")+1:]
	received := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages?$filter="+url.QueryEscape("ReceivedByServiceOwnerDateTime ne null and MessageId eq '"+id+"'"))
	require.Equal(t, http.StatusOK, received.Code, received.Body.String())
	assert.Len(t, received.embedded(t, "messages"), 1)
	notYet := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages?$filter="+url.QueryEscape("ReceivedByServiceOwnerDateTime eq null and MessageId eq '"+id+"'"))
	require.Equal(t, http.StatusOK, notYet.Code, notYet.Body.String())
	assert.Empty(t, notYet.embedded(t, "messages"))

	// One submission.confirmed event, in the owner's feed and in the party's.
	confirmed := func(batch []map[string]any) (n int) {
		for _, e := range eventsOf(batch, id) {
			if e["type"] == "no.postbox.submission.confirmed.v1" {
				assert.Equal(t, s.ref, e["data"].(map[string]any)["ArchiveReference"])
				n++
			}
		}
		return n
	}
	o := fjeToken(t).get(t, srv, fmt.Sprintf("/api/serviceowner/events/feed?eventOffset=%d&fetch=200", after), "Accept", cloudEventsBatch)
	require.Equal(t, http.StatusOK, o.Code, o.Body.String())
	var owned []map[string]any
	require.NoError(t, json.Unmarshal(o.Body.Bytes(), &owned))
	assert.Equal(t, 1, confirmed(owned))
	assert.Equal(t, 1, confirmed(feedOf(t, srv, ssnP1, orgO1, after)))
}

// Another owner's reference, an unknown one and a malformed one answer one and the same 404; another
// owner never lists the submission; a token without the queue's scopes is refused.
func TestNobodyReceivesWhatIsNotTheirs(t *testing.T) {
	srv, pool := formTaskServer(t)
	s := submitWithAttachment(t, srv)
	nsf := soCaller{name: "NSF queue", key: keyNSF, token: orgToken(t, orgNSF, scopeQueueRead+" "+scopeQueueConfirm)}
	var logBefore int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM submission_log`).Scan(&logBefore))

	var details []string
	for _, path := range []string{"/api/serviceowner/submissions/" + s.ref, "/api/serviceowner/submissions/AR999999999",
		"/api/serviceowner/submissions/not-a-reference", "/api/serviceowner/submissions/" + s.ref + "/print",
		"/api/serviceowner/submissions/" + s.ref + "/log", "/api/serviceowner/submissions/" + s.ref + "/attachments/1"} {
		p := requireProblem(t, nsf.get(t, srv, path), http.StatusNotFound)
		details = append(details, p["detail"].(string))
	}
	p := requireProblem(t, nsf.send(t, srv, http.MethodPut, "/api/serviceowner/submissions/"+s.ref+"/confirm"), http.StatusNotFound)
	details = append(details, p["detail"].(string))
	for _, d := range details {
		assert.Equal(t, details[0], d, "the same answer whatever the reason")
	}
	assert.Nil(t, findSubmission(t, srv, nsf, "/api/serviceowner/submissions?confirmed=all", s.ref))
	fje := fjeQueue(t)
	requireProblem(t, fje.get(t, srv, "/api/serviceowner/submissions/"+s.ref+"/attachments/1"), http.StatusNotFound)
	requireProblem(t, fje.get(t, srv, "/api/serviceowner/submissions/"+s.ref+"/forms/x/formdata"), http.StatusNotFound)

	// Scopes: reading needs the read scope (or platform:serviceowner), confirming the write scope.
	readOnly := soCaller{name: "FJE read", key: keyFJE, token: orgToken(t, orgFJE, scopeQueueRead)}
	p = requireProblem(t, readOnly.send(t, srv, http.MethodPut, "/api/serviceowner/submissions/"+s.ref+"/confirm"), http.StatusForbidden)
	assert.Contains(t, p["detail"], scopeQueueConfirm)
	other := soCaller{name: "FJE organizations", key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/organizations")}
	requireProblem(t, other.get(t, srv, "/api/serviceowner/submissions"), http.StatusForbidden)
	person := getAs(t, srv, ssnP1, "/api/serviceowner/submissions")
	assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, person.Code)

	var logAfter int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM submission_log`).Scan(&logAfter))
	assert.Equal(t, logBefore, logAfter, "refusals log nothing and change nothing")
	var confirmed *time.Time
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT confirmed_at FROM submissions WHERE archive_reference = $1`, s.ref).Scan(&confirmed))
	assert.Nil(t, confirmed)
}

// Malformed filters are answered 400 naming each parameter, never with an unfiltered queue.
func TestQueueFiltersAreChecked(t *testing.T) {
	srv, _ := formTaskServer(t)
	fje := fjeQueue(t)
	p := requireProblem(t, fje.get(t, srv, "/api/serviceowner/submissions?confirmed=maybe&archivedAfter=yesterday"), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:invalid-filter", p["type"])
	assert.Contains(t, p["detail"], "confirmed")
	assert.Contains(t, p["detail"], "archivedAfter")
	p = requireProblem(t, fje.get(t, srv, "/api/serviceowner/submissions?$filter=ServiceCode%20eq%20%274711%27"), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "$filter")
	requireProblem(t, fje.get(t, srv, "/api/serviceowner/submissions?continuation=bm9wZQ"), http.StatusBadRequest)
	requireProblem(t, fje.get(t, srv, "/api/serviceowner/submissions?$top=51"), http.StatusBadRequest)
}

// postbox submissions pull drains the queue over a real listener with the generated client: every part
// on disk byte-exact, every submission confirmed, and a partial folder left by a crash fetched anew.
func TestPullDrainsTheQueueIntoAFolder(t *testing.T) {
	srv, pool := formTaskServer(t)
	web := listenChecked(t, srv)
	defer web.Close()
	first, second := submitWithAttachment(t, srv), submitWithAttachment(t, srv)
	dir := t.TempDir()
	// A crash in the middle of fetching second left this behind.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "."+second.ref+".partial", "forms"), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "."+second.ref+".partial", "forms", "1.xml"), []byte("torn"), 0o640))

	fje := fjeQueue(t)
	c, err := client.New(web.URL, fje.key, client.WithBearerToken(fje.token))
	require.NoError(t, err)
	var progress bytes.Buffer
	n, err := (&pull.Puller{Client: c, Dir: dir, Progress: &progress}).Pull(context.Background())
	require.NoError(t, err, progress.String())
	assert.GreaterOrEqual(t, n, 2)
	assert.Contains(t, progress.String(), first.ref+": 1 forms, 1 attachments, print: stored and confirmed")

	for _, s := range []submitted{first, second} {
		folder := filepath.Join(dir, s.ref)
		var manifest client.Submission
		b, err := os.ReadFile(filepath.Join(folder, "manifest.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &manifest))
		form, err := os.ReadFile(filepath.Join(folder, "forms", fmt.Sprint(manifest.Forms[0].FormId)+".xml"))
		require.NoError(t, err)
		assert.Equal(t, s.formData, string(form))
		att, err := os.ReadFile(filepath.Join(folder, "attachments", fmt.Sprint(manifest.Attachments[0].AttachmentId), "revisjon.pdf"))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(s.attachment, att), "byte-exact on disk")
		print, err := os.ReadFile(filepath.Join(folder, "print.pdf"))
		require.NoError(t, err)
		assert.Equal(t, manifest.Print.SHA256, sha256Hex(print))
		var confirmed *time.Time
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT confirmed_at FROM submissions WHERE archive_reference = $1`, s.ref).Scan(&confirmed))
		assert.NotNil(t, confirmed, s.ref)
	}
	_, err = os.Stat(filepath.Join(dir, "."+second.ref+".partial"))
	assert.True(t, os.IsNotExist(err), "no partial folder is left")

	// Nothing left: a second pull confirms nothing.
	n, err = (&pull.Puller{Client: c, Dir: dir}).Pull(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}

// The owner sees where every message of its services stands, in every mailbox: the task still being filled
// in, the one sent (with its submission), a correspondence once read; paged by keyset without repeats.
func TestTheOwnerSeesWhereEveryMessageStands(t *testing.T) {
	srv, pool := formTaskServer(t)
	_, open := newTask(t, srv, "")
	sent := submitWithAttachment(t, srv)
	fje := fjeQueue(t)
	idOf := func(items []map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, it := range items {
			out[it["MessageId"].(string)] = it
		}
		return out
	}

	filling := idOf(fje.list(t, srv, "/api/serviceowner/messages?serviceCode=4711&status=Utfylling&reportee="+orgO1, "messages"))
	require.Contains(t, filling, open)
	assert.Equal(t, orgO1, filling[open]["Reportee"].(map[string]any)["OrganizationNumber"])
	sentID := sent.messagePath[strings.LastIndex(sent.messagePath, "/")+1:]
	archived := idOf(fje.list(t, srv, "/api/serviceowner/messages?serviceCode=4711&serviceEdition=2&status="+url.QueryEscape("Sendt og arkivert")+"&reportee="+orgO1, "messages"))
	require.Contains(t, archived, sentID)
	assert.Equal(t, sent.ref, archived[sentID]["ArchiveReference"])
	assert.Equal(t, "/api/serviceowner/submissions/"+sent.ref, requestURI(t, link(t, archived[sentID], "submission")))

	// Every message of FJE's services, five a page: each once, in the list's order, none of another owner's.
	all, pages := fje.walk(t, srv, "/api/serviceowner/messages?$top=5", "messages")
	assert.Greater(t, pages, 2)
	seen := map[string]bool{}
	for _, m := range all {
		assert.False(t, seen[m["MessageId"].(string)], "repeated: %v", m["MessageId"])
		seen[m["MessageId"].(string)] = true
		assert.Contains(t, []string{"4711", "7001"}, m["ServiceCode"], "only FJE's services")
	}
	var want int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM messages m JOIN services s USING (service_code, service_edition)
		WHERE s.service_owner_code = 'FJE'`).Scan(&want))
	assert.Len(t, all, want)
	nsf := soCaller{name: "NSF queue", key: keyNSF, token: orgToken(t, orgNSF, scopeQueueRead)}
	assert.NotContains(t, idOf(nsf.list(t, srv, "/api/serviceowner/messages?reportee="+orgO1, "messages")), sentID)

	// A correspondence read by its party shows when.
	var unread string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT m.id FROM messages m JOIN parties p ON p.id = m.reportee_id
		WHERE p.organization_number = $1 AND m.service_code = '7001' AND m.status = 'Ulest' AND m.deleted_at IS NULL LIMIT 1`, orgO1).Scan(&unread))
	require.Equal(t, http.StatusOK, getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/"+unread).Code)
	correspondence := idOf(fje.list(t, srv, "/api/serviceowner/messages?type=Correspondence&status=Lest&reportee="+orgO1, "messages"))
	require.Contains(t, correspondence, unread)
	assert.NotNil(t, correspondence[unread]["ReadDateTime"])

	p := requireProblem(t, fje.get(t, srv, "/api/serviceowner/messages?status=Done&type=Letter"), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "status")
	assert.Contains(t, p["detail"], "type")
	requireProblem(t, fje.get(t, srv, "/api/serviceowner/messages?continuation=xyz"), http.StatusBadRequest)
}
