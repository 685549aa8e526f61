package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/correspondence"
)

// The agency sends, on the real router, database, Temporal dev server and worker: FJE sends a
// correspondence of its service 7001/1 to several recipients; the accepted ones get exactly one message
// each, the refused ones nothing, and FJE follows every recipient on the shipment.

const (
	scopeSendRead  = "platform:serviceowner/correspondence.read"
	scopeSendWrite = "platform:serviceowner/correspondence.write"
)

func fjeSender(t testing.TB) soCaller {
	return soCaller{name: "FJE sender", key: keyFJE, token: orgToken(t, orgFJE, scopeSendRead+" "+scopeSendWrite)}
}

// post sends body to path in the service-owner area.
func (sc soCaller) post(t *testing.T, h http.Handler, path string, body any, header ...string) response {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	hdr := map[string]string{"ApiKey": sc.key, "Authorization": "Bearer " + sc.token, "Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		hdr[header[i]] = header[i+1]
	}
	return do(t, h, request{method: http.MethodPost, path: path, header: hdr, body: string(b)})
}

func letter(recipients ...string) map[string]any {
	return map[string]any{"ServiceCode": "7001", "ServiceEdition": 1, "Recipients": recipients,
		"Subject": "Vedtak om tilskudd", "Summary": "Du har fått tilskudd.",
		// Longer than the 256 characters of an ordinary text field.
		"Body": `<p>Vi har <b>innvilget</b> søknaden.</p><script>alert(1)</script><a href="javascript:alert(1)">x</a>` +
			strings.Repeat("<p>Begrunnelse for vedtaket.</p>", 20),
		"SendersReference": "sak-2026-17", "IsConfirmationNeeded": true,
		"CustomMessageData": []map[string]any{{"Key": "Saksnummer", "Value": "2026/17"}},
		"ReplyOptions":      []map[string]any{{"Type": "URL", "URL": "https://fjordetaten.example/svar", "Text": "Svar her"}}}
}

// outcomes maps each recipient of an accepted shipment to its message id or its refusal.
func outcomes(t *testing.T, r response) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range r.embedded(t, "recipients") {
		if id, ok := o["MessageId"].(string); ok {
			out[o["Recipient"].(string)] = id
		} else {
			out[o["Recipient"].(string)+"?"] = o["Refused"].(string)
		}
	}
	return out
}

// awaitMessage waits until the reportee can read message id (its shipment's batch has run): up to 90 s,
// for the whole suite under the race detector on two cores once took more than 30.
func awaitMessage(t *testing.T, h http.Handler, ssn, id string) map[string]any {
	t.Helper()
	var m map[string]any
	require.Eventually(t, func() bool {
		r := getAs(t, h, ssn, "/api/"+ssn+"/messages/"+id+"?markAsRead=false")
		if r.Code == http.StatusOK {
			m = r.json(t)
		}
		return r.Code == http.StatusOK
	}, 90*time.Second, 100*time.Millisecond, "message %s never reached %s's mailbox", id, ssn)
	return m
}

func TestSendCorrespondence(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	r := fje.post(t, h, "/api/serviceowner/correspondence", letter(ssnP1, ssnP2, "12345", orgO6, "999999999", ssnP1))
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	body := r.json(t)
	shipment := body["ShipmentId"].(string)
	assert.Equal(t, "http://postbox.test/api/serviceowner/correspondence/shipments/"+shipment, r.Header().Get("Location"))
	assert.EqualValues(t, 6, body["Recipients"])
	assert.EqualValues(t, 2, body["Accepted"])
	got := outcomes(t, r)
	assert.Equal(t, "malformed", got["12345?"])
	assert.Equal(t, "deleted", got[orgO6+"?"])
	assert.Equal(t, "unknown", got["999999999?"])
	assert.Equal(t, "duplicate", got[ssnP1+"?"])
	require.NotEmpty(t, got[ssnP1])
	require.NotEmpty(t, got[ssnP2])

	m := awaitMessage(t, h, ssnP1, got[ssnP1])
	assert.Equal(t, "Vedtak om tilskudd", m["Subject"])
	assert.Equal(t, "Ulest", m["Status"])
	assert.Equal(t, "Fjordetaten", m["MessageSender"])
	assert.Equal(t, true, m["IsConfirmationNeeded"])
	assert.Contains(t, m["Body"], "<b>innvilget</b>")
	assert.NotContains(t, m["Body"], "script")
	assert.NotContains(t, m["Body"], "javascript:")
	awaitMessage(t, h, ssnP2, got[ssnP2])
	assert.Equal(t, 2, countRows(t, pool, `SELECT count(*) FROM messages WHERE shipment_id = $1`, shipment), "one message per accepted recipient")
	assert.Equal(t, 2, countRows(t, pool, `SELECT count(*) FROM events WHERE type = 'no.postbox.correspondence.published.v1'
		AND message_id IN ($1, $2)`, got[ssnP1], got[ssnP2]))

	// P1 opens hers; FJE sees it on the shipment, and may retract P2's only.
	require.Equal(t, http.StatusOK, getAs(t, h, ssnP1, "/api/"+ssnP1+"/messages/"+got[ssnP1]).Code)
	requireProblem(t, fje.send(t, h, http.MethodDelete, "/api/serviceowner/correspondence/"+got[ssnP1]), http.StatusConflict)
	r = fje.send(t, h, http.MethodDelete, "/api/serviceowner/correspondence/"+got[ssnP2])
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	requireProblem(t, getAs(t, h, ssnP2, "/api/"+ssnP2+"/messages/"+got[ssnP2]), http.StatusNotFound)
	requireProblem(t, fje.send(t, h, http.MethodDelete, "/api/serviceowner/correspondence/"+got[ssnP2]), http.StatusNotFound)

	r = fje.get(t, h, "/api/serviceowner/correspondence/shipments/"+shipment)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	sh := r.json(t)
	assert.EqualValues(t, 2, sh["Created"])
	assert.EqualValues(t, 4, sh["Refused"])
	assert.EqualValues(t, 1, sh["Retracted"])
	statuses := map[string]string{}
	for _, rc := range r.embedded(t, "recipients") {
		statuses[rc["Recipient"].(string)+"/"+rc["Status"].(string)] = rc["Status"].(string)
	}
	assert.Contains(t, statuses, ssnP1+"/Read")
	assert.Contains(t, statuses, ssnP2+"/Retracted")
	assert.Contains(t, statuses, "12345/Refused")

	read := fje.get(t, h, "/api/serviceowner/correspondence/shipments/"+shipment+"?state=read").embedded(t, "recipients")
	require.Len(t, read, 1)
	assert.Equal(t, ssnP1, read[0]["Recipient"])
	page := fje.get(t, h, "/api/serviceowner/correspondence/shipments/"+shipment+"?$top=4")
	assert.Len(t, page.embedded(t, "recipients"), 4)
	assert.Contains(t, link(t, page.json(t), "next"), "continuation=")

	// Another owner's shipment and messages are the same 404 as none.
	nsf := soCaller{key: keyNSF, token: orgToken(t, orgNSF, scopeSendRead+" "+scopeSendWrite)}
	requireProblem(t, nsf.get(t, h, "/api/serviceowner/correspondence/shipments/"+shipment), http.StatusNotFound)
	requireProblem(t, nsf.send(t, h, http.MethodDelete, "/api/serviceowner/correspondence/"+got[ssnP1]), http.StatusNotFound)
}

// A correspondence with a VisibleDateTime does not exist for its recipient until then: it is neither
// readable nor listed, and its published event is written when it appears.
func TestCorrespondenceAppearsAtVisibleDateTime(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	body := letter(ssnP2)
	visible := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)
	body["VisibleDateTime"] = visible.Format(time.RFC3339)
	body["AllowSystemDeleteDateTime"] = visible.Add(time.Hour).Format(time.RFC3339)
	r := fje.post(t, h, "/api/serviceowner/correspondence", body)
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	id := outcomes(t, r)[ssnP2]

	requireProblem(t, getAs(t, h, ssnP2, "/api/"+ssnP2+"/messages/"+id), http.StatusNotFound)
	list := getAs(t, h, ssnP2, "/api/"+ssnP2+"/messages?$filter="+url.QueryEscape("MessageId eq '"+id+"'"))
	require.Equal(t, http.StatusOK, list.Code, list.Body.String())
	assert.Empty(t, list.embedded(t, "messages"))
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1`, id), "no event before it is visible")

	m := awaitMessage(t, h, ssnP2, id)
	assert.False(t, time.Now().Before(visible), "it appeared before its VisibleDateTime")
	assert.NotEmpty(t, m["VisibleDateTime"])
	assert.NotEmpty(t, m["AllowSystemDeleteDateTime"])
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1 AND type = 'no.postbox.correspondence.published.v1'`, id))
}

// Retracting a message still waiting for its VisibleDateTime means it is never made; the shipment's other
// recipient gets hers.
func TestRetractBeforeVisible(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	body := letter(ssnP1, ssnP2)
	body["VisibleDateTime"] = time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	r := fje.post(t, h, "/api/serviceowner/correspondence", body)
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	got := outcomes(t, r)
	require.Equal(t, http.StatusNoContent, fje.send(t, h, http.MethodDelete, "/api/serviceowner/correspondence/"+got[ssnP2]).Code)
	awaitMessage(t, h, ssnP1, got[ssnP1]) // the batch has run
	requireProblem(t, getAs(t, h, ssnP2, "/api/"+ssnP2+"/messages/"+got[ssnP2]), http.StatusNotFound)
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM messages WHERE id = $1`, got[ssnP2]))
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1`, got[ssnP2]), "nobody heard of it")
}

// Every refusal is precise, and leaves nothing stored.
func TestSendCorrespondenceRefusals(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	before := countRows(t, pool, `SELECT count(*) FROM shipments`)
	tooMany := make([]string, 10_001)
	for i := range tooMany {
		tooMany[i] = ssnP1
	}
	cases := []struct {
		name   string
		change func(map[string]any)
		status int
		want   string
	}{
		{"another owner's service", func(b map[string]any) { b["ServiceCode"] = "7102" }, http.StatusForbidden, "not one of yours"},
		{"a form-task service", func(b map[string]any) { b["ServiceCode"] = "4711" }, http.StatusBadRequest, "Correspondence service"},
		{"an unknown service", func(b map[string]any) { b["ServiceCode"] = "9999" }, http.StatusBadRequest, "no service"},
		{"no subject", func(b map[string]any) { b["Subject"] = " " }, http.StatusBadRequest, "Subject"},
		{"due before visible", func(b map[string]any) {
			b["VisibleDateTime"], b["DueDateTime"] = "2030-01-02T10:00:00", "2030-01-01T10:00:00"
		}, http.StatusBadRequest, "DueDateTime"},
		{"delete before due", func(b map[string]any) {
			b["DueDateTime"], b["AllowSystemDeleteDateTime"] = "2030-01-02T10:00:00", "2030-01-01T10:00:00"
		}, http.StatusBadRequest, "AllowSystemDeleteDateTime"},
		{"a malformed date", func(b map[string]any) { b["DueDateTime"] = "tomorrow" }, http.StatusBadRequest, "DueDateTime"},
		{"a body over the limit", func(b map[string]any) { b["Body"] = strings.Repeat("x", 300<<10) }, http.StatusBadRequest, "Body"},
		{"too many recipients", func(b map[string]any) { b["Recipients"] = tooMany }, http.StatusBadRequest, "10000"},
		{"no one can receive it", func(b map[string]any) { b["Recipients"] = []string{"1", orgO6} }, http.StatusBadRequest, "1 malformed, 1 deleted"},
		{"a notification order without a channel", func(b map[string]any) { b["Notification"] = map[string]any{"SmsText": "Hei"} },
			http.StatusBadRequest, "Notification.Channel is one of"},
		{"addresses for many recipients", func(b map[string]any) {
			b["Recipients"] = []string{ssnP1, ssnP2}
			b["Notification"] = map[string]any{"Channel": "Email", "Recipient": map[string]any{"EmailAddress": "a@example.org"}}
		}, http.StatusBadRequest, "only for one recipient"},
		{"a reply URL that is not one", func(b map[string]any) {
			b["ReplyOptions"] = []map[string]any{{"Type": "URL", "URL": "javascript:alert(1)"}}
		}, http.StatusBadRequest, "ReplyOptions[0].URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := letter(ssnP1)
			c.change(b)
			p := requireProblem(t, fje.post(t, h, "/api/serviceowner/correspondence", b), c.status)
			assert.Contains(t, p["detail"], c.want)
		})
	}
	reader := soCaller{key: keyFJE, token: orgToken(t, orgFJE, scopeSendRead)}
	requireProblem(t, reader.post(t, h, "/api/serviceowner/correspondence", letter(ssnP1)), http.StatusForbidden)
	requireProblem(t, fje.get(t, h, "/api/serviceowner/correspondence/shipments/not-a-uuid"), http.StatusNotFound)
	requireProblem(t, fje.get(t, h, "/api/serviceowner/correspondence/shipments/00000000-0000-0000-0000-000000000000?state=lost"), http.StatusBadRequest)
	assert.Equal(t, before, countRows(t, pool, `SELECT count(*) FROM shipments`), "a refused request stores nothing")
}

// Retrying a send with its Idempotency-Key answers the first shipment again and sends nothing twice.
func TestSendCorrespondenceIdempotent(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	key := "send-" + time.Now().Format(time.RFC3339Nano)
	first := fje.post(t, h, "/api/serviceowner/correspondence", letter(ssnP2), "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, first.Code, first.Body.String())
	again := fje.post(t, h, "/api/serviceowner/correspondence", letter(ssnP2), "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, again.Code, again.Body.String())
	assert.Equal(t, first.json(t)["ShipmentId"], again.json(t)["ShipmentId"])
	awaitMessage(t, h, ssnP2, outcomes(t, first)[ssnP2])
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM shipments WHERE id = $1`, first.json(t)["ShipmentId"]))
}

// IdempotentKey in the body makes a send once per owner and key, however the retry comes (it is kept with
// the shipment, so it holds even when the first answer was lost with its process).
func TestSendCorrespondenceIdempotentKey(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	body := letter(ssnP1, "12345")
	body["IdempotentKey"] = "vedtak-" + time.Now().Format(time.RFC3339Nano)
	first := fje.post(t, h, "/api/serviceowner/correspondence", body)
	require.Equal(t, http.StatusAccepted, first.Code, first.Body.String())
	again := fje.post(t, h, "/api/serviceowner/correspondence", body)
	require.Equal(t, http.StatusAccepted, again.Code, again.Body.String())
	assert.Equal(t, first.json(t)["ShipmentId"], again.json(t)["ShipmentId"])
	assert.Equal(t, outcomes(t, first), outcomes(t, again))
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM shipments WHERE idempotent_key = $1`, body["IdempotentKey"]))
	// Another owner's key is its own.
	nsf := soCaller{key: keyNSF, token: orgToken(t, orgNSF, scopeSendRead+" "+scopeSendWrite)}
	body["ServiceCode"] = "7102"
	other := nsf.post(t, h, "/api/serviceowner/correspondence", body)
	require.Equal(t, http.StatusAccepted, other.Code, other.Body.String())
	assert.NotEqual(t, first.json(t)["ShipmentId"], other.json(t)["ShipmentId"])
}

func fjeFormTasks(t testing.TB) soCaller {
	return soCaller{name: "FJE pre-fill", key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/formtasks.write")}
}

func prefill(reportee string, forms ...map[string]any) map[string]any {
	return map[string]any{"Reportee": reportee, "ServiceCode": "4711", "ServiceEdition": 2, "Subject": "Årsoppgave 2026 – forhåndsutfylt",
		"_embedded": map[string]any{"forms": forms}}
}

// FJE puts a pre-filled 4711 task into O1's mailbox: P1 finds it in Utfylling with the owner's subject,
// data and due date, submits it, and it lands in FJE's queue; a task left unsubmitted past its due date gets
// formtask.overdue, once.
func TestPrefilledFormTask(t *testing.T) {
	h, pool := formTaskServer(t)
	owner := fjeFormTasks(t)
	data := demoFormData(t, "a3101102")
	body := prefill(orgO1, mainForm(data))
	body["DueDateTime"] = time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	r := owner.post(t, h, "/api/serviceowner/formtasks", body)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	late := r.json(t)["MessageId"].(string)
	assert.Equal(t, "Utfylling", r.json(t)["Status"])

	m := getAs(t, h, ssnP1, "/api/"+orgO1+"/messages/"+late).json(t)
	assert.Equal(t, "Årsoppgave 2026 – forhåndsutfylt", m["Subject"])
	assert.Equal(t, "Utfylling", m["Status"])
	assert.Equal(t, "Fjordetaten", m["LastChangedBy"])
	assert.NotEmpty(t, m["DueDateTime"])
	awaitDue(t, late)
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1 AND type = 'no.postbox.formtask.overdue.v1'`, late))

	// One submitted before its due date is not overdue; its archive is in FJE's queue.
	body = prefill(orgO1, mainForm(data))
	body["DueDateTime"] = time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	r = owner.post(t, h, "/api/serviceowner/formtasks", body)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	onTime := r.json(t)["MessageId"].(string)
	signed := sendAs(t, h, ssnP1, http.MethodPut, "/api/"+orgO1+"/messages/"+onTime, putBody(t, []map[string]any{mainForm(data)}, nil))
	require.Equal(t, http.StatusOK, signed.Code, signed.Body.String())
	ref := signed.json(t)["ArchiveReference"].(string)
	require.NotEmpty(t, ref)
	require.Equal(t, http.StatusOK, fjeQueue(t).get(t, h, "/api/serviceowner/submissions/"+ref).Code)
	awaitDue(t, onTime)
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1 AND type = 'no.postbox.formtask.overdue.v1'`, onTime))
}

// awaitDue waits until the due timer of pre-filled task id has fired and done its work.
func awaitDue(t *testing.T, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, formTaskEnv.dev.Client().GetWorkflow(ctx, correspondence.TaskDueWorkflowIDPrefix+id, "").Get(ctx, nil))
}

// Pre-filling is refused precisely, and creates nothing.
func TestPrefilledFormTaskRefusals(t *testing.T) {
	h, pool := formTaskServer(t)
	owner := fjeFormTasks(t)
	data := demoFormData(t, "a3101102")
	before := countRows(t, pool, `SELECT count(*) FROM messages`)
	nsf := soCaller{key: keyNSF, token: orgToken(t, orgNSF, "platform:serviceowner/formtasks.write")}
	requireProblem(t, nsf.post(t, h, "/api/serviceowner/formtasks", prefill(orgO1, mainForm(data))), http.StatusForbidden)
	p := requireProblem(t, owner.post(t, h, "/api/serviceowner/formtasks", prefill("999999999", mainForm(data))), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "unknown")
	p = requireProblem(t, owner.post(t, h, "/api/serviceowner/formtasks", prefill(orgO1, mainForm("<not-the-form/>"))), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:validation-failed", p["type"])
	corr := prefill(orgO1)
	corr["ServiceCode"], corr["ServiceEdition"] = "7001", 1
	requireProblem(t, owner.post(t, h, "/api/serviceowner/formtasks", corr), http.StatusBadRequest)
	past := prefill(orgO1, mainForm(data))
	past["DueDateTime"] = "2020-01-01T00:00:00"
	requireProblem(t, owner.post(t, h, "/api/serviceowner/formtasks", past), http.StatusBadRequest)
	requireProblem(t, fjeSender(t).post(t, h, "/api/serviceowner/formtasks", prefill(orgO1, mainForm(data))), http.StatusForbidden)
	assert.Equal(t, before, countRows(t, pool, `SELECT count(*) FROM messages`), "a refused pre-fill leaves nothing")
}

// A shipment's attachment reaches every recipient's message, downloads byte for byte with its digest, and
// is stored once.
func TestCorrespondenceAttachmentsAreStoredOnce(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	file := []byte(fmt.Sprintf("%%PDF-1.4 vedtak %d\n%s", time.Now().UnixNano(), strings.Repeat("\x01\xfe", 200_000)))
	body := letter(ssnP1, ssnP2)
	body["Attachments"] = []map[string]any{{"Name": "Vedtaket", "FileName": "vedtak.pdf", "Data": base64.StdEncoding.EncodeToString(file)}}
	r := fje.post(t, h, "/api/serviceowner/correspondence", body)
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	got := outcomes(t, r)
	for _, ssn := range []string{ssnP1, ssnP2} {
		m := awaitMessage(t, h, ssn, got[ssn])
		links := m["_links"].(map[string]any)["attachment"].([]any)
		require.Len(t, links, 1)
		link := links[0].(map[string]any)
		assert.Equal(t, "Vedtaket", link["name"])
		d := getAs(t, h, ssn, pathOf(t, link["href"].(string)))
		require.Equal(t, http.StatusOK, d.Code, d.Body.String())
		assert.Equal(t, sha256Hex(file), sha256Hex(d.Body.Bytes()), "the bytes %s downloads", ssn)
		assert.Equal(t, "application/pdf", d.Header().Get("Content-Type"))
	}
	sum := sha256.Sum256(file)
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM blobs WHERE sha256 = $1`, sum[:]),
		"one copy of its bytes for both recipients")
	assert.Equal(t, 2, countRows(t, pool, `SELECT count(*) FROM attachments WHERE sha256 = $1`, sum[:]))

	body["Attachments"] = []map[string]any{{"FileName": "../vedtak.pdf", "Data": "AAAA"}}
	requireProblem(t, fje.post(t, h, "/api/serviceowner/correspondence", body), http.StatusBadRequest)
	body["Attachments"] = []map[string]any{{"FileName": "vedtak.pdf", "Data": "not base64!"}}
	requireProblem(t, fje.post(t, h, "/api/serviceowner/correspondence", body), http.StatusBadRequest)
}

// A larger attachment is uploaded first, streamed, and referenced by its AttachmentId: every recipient
// downloads its bytes, stored once; a refused upload keeps nothing, and an id that is not one of the
// caller's uploads is refused.
func TestCorrespondenceUploadedAttachment(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	file := []byte(fmt.Sprintf("%%PDF-1.7 stort vedlegg %d\n%s", time.Now().UnixNano(), strings.Repeat("\x02\xfd", 700_000)))
	upload := func(caller soCaller, name string, data []byte) response {
		return do(t, h, request{method: http.MethodPost, path: "/api/serviceowner/correspondence/attachments?fileName=" + url.QueryEscape(name),
			header: map[string]string{"ApiKey": caller.key, "Authorization": "Bearer " + caller.token, "Content-Type": "application/octet-stream"},
			body:   string(data)})
	}
	r := upload(fje, "vedlegg.pdf", file)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	up := r.json(t)
	assert.Equal(t, sha256Hex(file), up["Sha256"])
	assert.EqualValues(t, len(file), up["FileSize"])
	assert.Equal(t, "application/pdf", up["ContentType"])
	id := up["AttachmentId"].(string)

	body := letter(ssnP1, ssnP2)
	body["Attachments"] = []map[string]any{{"Name": "Stort vedlegg", "AttachmentId": id}}
	r = fje.post(t, h, "/api/serviceowner/correspondence", body)
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	got := outcomes(t, r)
	for _, ssn := range []string{ssnP1, ssnP2} {
		m := awaitMessage(t, h, ssn, got[ssn])
		link := m["_links"].(map[string]any)["attachment"].([]any)[0].(map[string]any)
		assert.Equal(t, "Stort vedlegg", link["name"])
		d := getAs(t, h, ssn, pathOf(t, link["href"].(string)))
		require.Equal(t, http.StatusOK, d.Code, d.Body.String())
		assert.Equal(t, sha256Hex(file), sha256Hex(d.Body.Bytes()))
	}
	sum := sha256.Sum256(file)
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM blobs WHERE sha256 = $1`, sum[:]), "its bytes, once")

	uploads, blobs := countRows(t, pool, `SELECT count(*) FROM correspondence_uploads`), countRows(t, pool, `SELECT count(*) FROM blobs`)
	for _, c := range []struct {
		name, file string
		data       []byte
		status     int
	}{
		{"a path for a name", "../vedlegg.pdf", file, http.StatusBadRequest},
		{"an executable named .pdf", "vedlegg.pdf", append([]byte("MZ\x90\x00"), file...), http.StatusBadRequest},
		{"not what its name says", "vedlegg.pdf", []byte(strings.Repeat("ikke en pdf ", 30_000)), http.StatusBadRequest},
		{"empty", "vedlegg.pdf", nil, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireProblem(t, upload(fje, c.file, c.data), c.status)
		})
	}
	// A body cut short by the connection: the client's answer is lost, and nothing is kept.
	cut := httptest.NewRequest(http.MethodPost, testPublicURL+"/api/serviceowner/correspondence/attachments?fileName=vedlegg.pdf",
		io.MultiReader(bytes.NewReader(file[:400_000]), iotest.ErrReader(io.ErrUnexpectedEOF)))
	cut.Header.Set("ApiKey", fje.key)
	cut.Header.Set("Authorization", "Bearer "+fje.token)
	cut.Header.Set("Content-Type", "application/octet-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, cut)
	assert.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	assert.Equal(t, uploads, countRows(t, pool, `SELECT count(*) FROM correspondence_uploads`), "a refused or cut upload keeps nothing")
	assert.Equal(t, blobs, countRows(t, pool, `SELECT count(*) FROM blobs`), "nor any bytes")

	nsf := soCaller{key: keyNSF, token: orgToken(t, orgNSF, scopeSendRead+" "+scopeSendWrite)}
	other := letter(ssnP1)
	other["ServiceCode"] = "7102"
	other["Attachments"] = []map[string]any{{"AttachmentId": id}}
	p := requireProblem(t, nsf.post(t, h, "/api/serviceowner/correspondence", other), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "none of your uploads has this id", "another owner's upload is no upload of the caller's")
	body["Attachments"] = []map[string]any{{"AttachmentId": id, "Data": "AAAA"}}
	requireProblem(t, fje.post(t, h, "/api/serviceowner/correspondence", body), http.StatusBadRequest)
}
