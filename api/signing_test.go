package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask/printpdf/pdftext"
)

// Signing by several, on 5302/2 of the demo: its steps are one signature by someone with Sign for the
// party (Right), then every signee the task names (TaskSignees). P1 fills one in her own mailbox and names
// P2 and P3, who hold no rights for her.

// jointApplication creates a 5302/2 task in P1's mailbox with the forms of a3101116, and returns its id
// and the body that submits those forms.
func jointApplication(t *testing.T, h http.Handler) (string, string) {
	t.Helper()
	demo := demoMessage(t, "a3101116")["Forms"].([]any)
	var forms []map[string]any
	for _, f := range demo {
		m := f.(map[string]any)
		forms = append(forms, map[string]any{"Type": m["Type"], "DataFormatId": m["DataFormatId"], "DataFormatVersion": m["DataFormatVersion"],
			"FormData": m["FormData"]})
	}
	b, err := json.Marshal(map[string]any{"Type": "FormTask", "ServiceCode": "5302", "ServiceEdition": 2, "_embedded": map[string]any{"forms": forms}})
	require.NoError(t, err)
	r := sendAs(t, h, ssnP1, http.MethodPost, "/api/"+ssnP1+"/messages", string(b))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	return r.json(t)["MessageId"].(string), string(b)
}

func signees(people ...[2]string) string {
	list := make([]map[string]string, len(people))
	for i, p := range people {
		list[i] = map[string]string{"SocialSecurityNumber": p[0], "LastName": p[1]}
	}
	b, _ := json.Marshal(map[string]any{"Signees": list})
	return string(b)
}

var (
	ola   = [2]string{ssnP2, "Bakketun"}
	sigra = [2]string{ssnP3, "Haugland"}
)

func countEvents(t *testing.T, pool *pgxpool.Pool, id, kind string) int {
	return countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1 AND type = $2`, id, "no.postbox.formtask."+kind+".v1")
}

// The whole life: the filler names the signees, completes and signs (step 1); each signee finds the task
// in their own list, reads what they sign, and signs it (step 2), the last one archiving it. A signature
// repeated gets the same answer; a stranger finds nothing; a signature of content read before it changed
// is 412; a change of signees after completion is 409.
func TestSigningBySeveral(t *testing.T) {
	h, pool := formTaskServer(t)
	id, content := jointApplication(t, h)
	signeesPath := "/api/" + ssnP1 + "/messages/" + id + "/signees"

	// Refused lists change nothing.
	for _, tc := range []struct{ body, detail string }{
		{signees([2]string{ssnP2, "Hansen"}), "Signees[0]: no person has this national identity number and last name"},
		{signees(ola, ola), "Signees[1]: the same signee is named twice"},
		{signees([2]string{ssnP1, "Fjellheim"}), "Signees[0]: the task's own party"},
		{`{"Signees":[{"OrganizationNumber":"999999999"}]}`, "Signees[0]: no organization"},
		{signees(make([][2]string, 51)...), "at most 50"},
		{`{"Signees":[{"SocialSecurityNumber":"` + ssnP2 + `","OrganizationNumber":"310123455"}]}`, "name a person"},
	} {
		p := requireProblem(t, sendAs(t, h, ssnP1, http.MethodPut, signeesPath, tc.body), http.StatusBadRequest)
		assert.Contains(t, p["detail"], tc.detail)
	}
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM task_signees WHERE message_id = $1`, id))

	r := sendAs(t, h, ssnP1, http.MethodPut, signeesPath, signees(ola, sigra))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	list := r.json(t)["Signees"].([]any)
	require.Len(t, list, 2)
	assert.Equal(t, "Ola Bakketun", list[0].(map[string]any)["Name"])
	assert.NotContains(t, r.Body.String(), ssnP2, "no identity number in the answer")

	// Completed and signed by P1: step 1 is signed, the task waits for its signees.
	smsBefore := len(formTaskEnv.sms.Sent())
	r = sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id, content)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Signering", r.json(t)["Status"])

	// Each signee has a call to sign in their own mailbox, linking to where they sign, and is notified of it
	// (by e-mail, else SMS) with a link to the call.
	var call string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM messages WHERE type = 'Correspondence'
		AND reportee_id = (SELECT id FROM parties WHERE ssn = $1) AND body LIKE '%/signing/' || $2`, ssnP2, id).Scan(&call))
	inbox := getAs(t, h, ssnP2, "/api/my/messages/"+call)
	require.Equal(t, http.StatusOK, inbox.Code, inbox.Body.String())
	assert.True(t, strings.HasPrefix(inbox.json(t)["Subject"].(string), "Til signering: "), inbox.Body.String())
	sent := func() (n int) {
		return countRows(t, pool, `SELECT count(*) FROM notification_sends s JOIN notification_recipients r USING (order_id, ordinal)
			JOIN messages m ON m.id = r.message_id WHERE m.body LIKE '%/signing/' || $1 AND s.state = 'sent'`, id)
	}
	require.Eventually(t, func() bool { return sent() == 2 }, 30*time.Second, 50*time.Millisecond, "both signees are notified")
	rows, err := pool.Query(context.Background(), `SELECT id FROM messages WHERE body LIKE '%/signing/' || $1`, id)
	require.NoError(t, err)
	calls, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, calls, 2)
	notices := 0
	for _, c := range calls {
		for _, s := range formTaskEnv.sms.Sent()[smsBefore:] {
			if strings.Contains(s.Body, "/messages/"+c+"/") && strings.HasPrefix(s.Body, "Til signering i Postbox: ") {
				notices++
			}
		}
		mails, err := formTaskEnv.mailpit.Search(context.Background(), `subject:"Til signering i Postbox" "/messages/`+c+`/"`)
		require.NoError(t, err)
		notices += len(mails)
	}
	assert.Equal(t, 2, notices, "one notice each, by mail or SMS, linking to the call")

	// A completion repeated (its answer lost) learns where the task is, as any repeated step does.
	p := requireProblem(t, sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id, content), http.StatusConflict)
	assert.Equal(t, "Signering", p["taskStatus"])
	p = requireProblem(t, sendAs(t, h, ssnP1, http.MethodPut, signeesPath, signees(ola)), http.StatusConflict)
	assert.Contains(t, p["detail"], "Utfylling")

	single := getAs(t, h, ssnP1, "/api/"+ssnP1+"/messages/"+id).json(t)
	assert.Equal(t, "http://postbox.test/api/"+ssnP1+"/messages/"+id+"/signatures",
		single["_links"].(map[string]any)["signatures"].(map[string]any)["href"], "the single view links the signing")
	sig := getAs(t, h, ssnP1, "/api/"+ssnP1+"/messages/"+id+"/signatures")
	require.Equal(t, http.StatusOK, sig.Code, sig.Body.String())
	state := sig.json(t)
	assert.EqualValues(t, 2, state["CurrentStep"])
	require.Len(t, state["Signatures"], 1)
	assert.Equal(t, "Ingrid Fjellheim", state["Signatures"].([]any)[0].(map[string]any)["SignerName"])

	// A stranger finds nothing; P2 finds it in her list and reads what she signs.
	for _, path := range []string{"/api/my/signing/" + id, "/api/" + ssnP4 + "/signing/" + id} {
		requireProblem(t, getAs(t, h, ssnP4, path), http.StatusNotFound)
	}
	requireProblem(t, sendAs(t, h, ssnP4, http.MethodPost, "/api/my/signing/"+id, ""), http.StatusNotFound)
	mine := getAs(t, h, ssnP2, "/api/my/signing")
	require.Equal(t, http.StatusOK, mine.Code, mine.Body.String())
	assert.Contains(t, mine.Body.String(), id)
	read := getAs(t, h, ssnP2, "/api/my/signing/"+id)
	require.Equal(t, http.StatusOK, read.Code, read.Body.String())
	digest := read.json(t)["ContentDigest"].(string)
	assert.Len(t, digest, 64)
	assert.Len(t, read.json(t)["Forms"], 2)

	p = requireProblem(t, sendAs(t, h, ssnP2, http.MethodPost, "/api/my/signing/"+id, `{"ContentDigest":"`+strings.Repeat("0", 64)+`"}`),
		http.StatusPreconditionFailed)
	assert.Contains(t, p["detail"], "changed since you read it")
	first := sendAs(t, h, ssnP2, http.MethodPost, "/api/my/signing/"+id, `{"ContentDigest":"`+digest+`"}`)
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	assert.Equal(t, "Signed", first.json(t)["Outcome"])
	again := sendAs(t, h, ssnP2, http.MethodPost, "/api/my/signing/"+id, "")
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	assert.Equal(t, "Signed", again.json(t)["Outcome"], "a repeated signature answers as the first")

	last := sendAs(t, h, ssnP3, http.MethodPost, "/api/my/signing/"+id, "")
	require.Equal(t, http.StatusOK, last.Code, last.Body.String())
	assert.Equal(t, "Archived", last.json(t)["Outcome"])
	ref := last.json(t)["ArchiveReference"]
	assert.Regexp(t, `^AR[0-9]+$`, ref)
	repeat := sendAs(t, h, ssnP3, http.MethodPost, "/api/my/signing/"+id, "")
	require.Equal(t, http.StatusOK, repeat.Code, repeat.Body.String())
	assert.Equal(t, ref, repeat.json(t)["ArchiveReference"], "a signature repeated after the archive answers as it did")

	status, _ := messageStatus(t, pool, id)
	assert.Equal(t, "Sendt og arkivert", status)
	assert.Equal(t, 3, countRows(t, pool, `SELECT count(*) FROM task_signatures WHERE message_id = $1 AND voided_at IS NULL
		AND content_digest = $2`, id, digest), "each signature records the digest of the content it signed")
	assert.Equal(t, 3, countEvents(t, pool, id, "signed"))
	assert.Equal(t, 1, countEvents(t, pool, id, "signing.completed"))
	assert.NotContains(t, getAs(t, h, ssnP2, "/api/my/signing").Body.String(), id, "gone from the list once archived")

	// NSF's submission lists every signature, and so does the archive's print.
	nsf := soCaller{name: "NSF queue", key: keyNSF, token: orgToken(t, orgNSF, scopeQueueRead)}
	entry := nsf.get(t, h, "/api/serviceowner/submissions/"+ref.(string))
	require.Equal(t, http.StatusOK, entry.Code, entry.Body.String())
	signed := entry.json(t)["Signatures"].([]any)
	require.Len(t, signed, 3)
	var signers []string
	for _, s := range signed {
		signers = append(signers, s.(map[string]any)["SignerName"].(string))
	}
	assert.Equal(t, []string{"Ingrid Fjellheim", "Ola Bakketun", "Sigrid Haugland"}, signers)
	assert.Equal(t, digest, signed[2].(map[string]any)["ContentDigest"])
	print := nsf.get(t, h, "/api/serviceowner/submissions/"+ref.(string)+"/print")
	require.Equal(t, http.StatusOK, print.Code)
	text, err := pdftext.Text(print.Body.Bytes())
	require.NoError(t, err)
	assert.Contains(t, text, "Signaturer")
	assert.Contains(t, text, "Sigrid Haugland")
}

// Signatures sent at the same moment are each counted once, and the task archives once.
func TestSignaturesAtOnce(t *testing.T) {
	h, pool := formTaskServer(t)
	id, content := jointApplication(t, h)
	require.Equal(t, http.StatusOK, sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id+"/signees",
		signees(ola, sigra, [2]string{ssnP5, "Brekke"})).Code)
	require.Equal(t, http.StatusOK, sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id, content).Code)
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for i, ssn := range []string{ssnP2, ssnP3, ssnP5} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = sendAs(t, h, ssn, http.MethodPost, "/api/my/signing/"+id, "").Code
		}()
	}
	wg.Wait()
	assert.Equal(t, []int{200, 200, 200}, codes)
	status, _ := messageStatus(t, pool, id)
	assert.Equal(t, "Sendt og arkivert", status)
	assert.Equal(t, 4, countRows(t, pool, `SELECT count(*) FROM task_signatures WHERE message_id = $1`, id))
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM archives WHERE message_id = $1`, id))
}

// Sending a task in Signering back to Utfylling voids its signatures (each with an event); a signee's
// signature then is 409, and the task can be completed anew.
func TestBackToFillingVoidsTheSignatures(t *testing.T) {
	h, pool := formTaskServer(t)
	id, content := jointApplication(t, h)
	msg := "/api/" + ssnP1 + "/messages/" + id
	require.Equal(t, http.StatusOK, sendAs(t, h, ssnP1, http.MethodPut, msg+"/signees", signees(ola, sigra)).Code)
	require.Equal(t, http.StatusOK, sendAs(t, h, ssnP1, http.MethodPut, msg, content).Code)
	require.Equal(t, http.StatusOK, sendAs(t, h, ssnP2, http.MethodPost, "/api/my/signing/"+id, "").Code)
	var changed map[string]any
	require.NoError(t, json.Unmarshal([]byte(content), &changed))
	emb := changed["_embedded"].(map[string]any)
	emb["forms"] = emb["forms"].([]any)[:1] // without its sub-form
	other, err := json.Marshal(changed)
	require.NoError(t, err)
	p := requireProblem(t, sendAs(t, h, ssnP1, http.MethodPut, msg, string(other)), http.StatusConflict)
	assert.Contains(t, p["detail"], "locked")

	back := sendAs(t, h, ssnP1, http.MethodDelete, msg+"/signatures", "")
	require.Equal(t, http.StatusOK, back.Code, back.Body.String())
	assert.Equal(t, "Utfylling", back.json(t)["Status"])
	assert.Equal(t, 2, countRows(t, pool, `SELECT count(*) FROM task_signatures WHERE message_id = $1 AND voided_at IS NOT NULL`, id))
	assert.Equal(t, 2, countEvents(t, pool, id, "signature.voided"))
	p = requireProblem(t, sendAs(t, h, ssnP3, http.MethodPost, "/api/my/signing/"+id, ""), http.StatusConflict)
	assert.Contains(t, p["detail"], "void")
	requireProblem(t, sendAs(t, h, ssnP1, http.MethodDelete, msg+"/signatures", ""), http.StatusConflict)

	// Completed again, it collects its signatures anew.
	r := sendAs(t, h, ssnP1, http.MethodPut, msg, content)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	state := getAs(t, h, ssnP1, msg+"/signatures").json(t)
	assert.Len(t, state["Signatures"], 3, "two voided, one new")
	assert.EqualValues(t, 2, state["CurrentStep"])
}

// A service whose steps need named signees refuses a completion before they are named; its task stays in
// Utfylling.
func TestCompletionNeedsTheSignees(t *testing.T) {
	h, pool := formTaskServer(t)
	id, content := jointApplication(t, h)
	p := requireProblem(t, sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id, content), http.StatusConflict)
	assert.Contains(t, p["detail"], "PUT …/signees")
	status, _ := messageStatus(t, pool, id)
	assert.Equal(t, "Utfylling", status)
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM task_signatures WHERE message_id = $1`, id).Scan(&n))
	assert.Zero(t, n)
	assert.Equal(t, 0, countEvents(t, pool, id, "signed"), fmt.Sprint("no signature for ", id))
}

// A signing deadline set with the signees goes before the service's: a task still in Signering then gets
// formtask.signing.overdue, once. One already past is refused.
func TestSigningDeadlineSetWithTheSignees(t *testing.T) {
	h, pool := formTaskServer(t)
	id, content := jointApplication(t, h)
	path := "/api/" + ssnP1 + "/messages/" + id + "/signees"
	withDeadline := func(at time.Time) string {
		return strings.Replace(signees(ola), `{"Signees"`, `{"SigningDeadline":"`+at.UTC().Format(time.RFC3339)+`","Signees"`, 1)
	}
	p := requireProblem(t, sendAs(t, h, ssnP1, http.MethodPut, path, withDeadline(time.Now().Add(-time.Hour))), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "SigningDeadline")
	r := sendAs(t, h, ssnP1, http.MethodPut, path, withDeadline(time.Now().Add(3*time.Second)))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.NotNil(t, r.json(t)["SigningDeadline"])
	require.Equal(t, http.StatusOK, sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id, content).Code)
	require.Eventually(t, func() bool { return countEvents(t, pool, id, "signing.overdue") == 1 }, 30*time.Second, 200*time.Millisecond)
	time.Sleep(time.Second)
	assert.Equal(t, 1, countEvents(t, pool, id, "signing.overdue"), "once")
}

// An organization named a signee signs through its main administrator or through someone holding the
// Sign right on the task's service for it (here a single right P1 gives P2); someone who represents it
// without that right finds no task to sign.
func TestAnOrganizationSigns(t *testing.T) {
	h, pool := formTaskServer(t)
	id, content := jointApplication(t, h)
	r := sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id+"/signees", `{"Signees":[{"OrganizationNumber":"`+orgO1+`"}]}`)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	require.Equal(t, http.StatusOK, sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id, content).Code)
	signing := "/api/" + orgO1 + "/signing/" + id
	// The single rights this test gives are taken back: the other tests share the database.
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), `DELETE FROM roles r USING role_definitions d, parties o
			WHERE d.id = r.role_definition_id AND d.role_type = 'SingleRight' AND o.id = r.reportee_id AND o.organization_number = $1`, orgO1)
		assert.NoError(t, err)
	})

	// P3 represents O1 (access manager, accountant) without the Sign right on anything: 403. P5, given Sign
	// on another service for O1, finds no such task.
	p := requireProblem(t, getAs(t, h, ssnP3, signing), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:not-a-signee", p["type"])
	r = authzDo(t, h, ssnP1, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/hal+json",
		jsonRights(`"SocialSecurityNumber":"`+ssnP5+`","LastName":"Brekke"`, `{"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Sign"}`))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	requireProblem(t, getAs(t, h, ssnP5, signing), http.StatusNotFound)
	requireProblem(t, sendAs(t, h, ssnP5, http.MethodPost, signing, ""), http.StatusNotFound)
	list := getAs(t, h, ssnP5, "/api/"+orgO1+"/signing")
	require.Equal(t, http.StatusOK, list.Code, list.Body.String())
	assert.NotContains(t, list.Body.String(), id)

	r = authzDo(t, h, ssnP1, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/hal+json",
		jsonRights(`"SocialSecurityNumber":"`+ssnP2+`","LastName":"Bakketun"`, `{"ServiceCode":"5302","ServiceEditionCode":2,"Action":"Sign"}`))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	assert.Contains(t, getAs(t, h, ssnP2, "/api/"+orgO1+"/signing").Body.String(), id)
	signed := sendAs(t, h, ssnP2, http.MethodPost, signing, "")
	require.Equal(t, http.StatusOK, signed.Code, signed.Body.String())
	assert.Equal(t, "Archived", signed.json(t)["Outcome"])
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM task_signatures s JOIN parties p ON p.id = s.on_behalf_of_party_id
		WHERE s.message_id = $1 AND p.organization_number = $2`, id, orgO1), "signed on behalf of O1")
}

// A service may name an organization that signs every task of it (the auditor of annual accounts): it
// finds the task in its own list once it is in Signering, is called to sign it, and signs for itself
// through its main administrator.
func TestAServiceNamesAnOrganizationThatSigns(t *testing.T) {
	h, pool := formTaskServer(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `UPDATE services SET signing_steps = '[{"Signees": "Right"}, {"Signees": "Organization", "OrganizationNumber": "`+orgO1+`"}]'
		WHERE service_code = '5302' AND service_edition = 2`)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), `UPDATE services SET signing_steps = '[{"Signees": "Right"}, {"Signees": "TaskSignees"}]'
			WHERE service_code = '5302' AND service_edition = 2`)
		assert.NoError(t, err)
	})
	id, content := jointApplication(t, h)
	signing := "/api/" + orgO1 + "/signing/" + id
	requireProblem(t, getAs(t, h, ssnP1, signing), http.StatusNotFound) // not in Signering yet

	r := sendAs(t, h, ssnP1, http.MethodPut, "/api/"+ssnP1+"/messages/"+id, content)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Signering", r.json(t)["Status"], "signed by P1 for herself (step 1), waiting for O1")
	assert.Contains(t, getAs(t, h, ssnP1, "/api/"+orgO1+"/signing").Body.String(), id)
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM messages m JOIN parties o ON o.id = m.reportee_id
		WHERE o.organization_number = $1 AND m.body LIKE '%/signing/' || $2`, orgO1, id), "O1 is called to sign")

	p := requireProblem(t, sendAs(t, h, ssnP1, http.MethodPost, "/api/my/signing/"+id, ""), http.StatusNotFound)
	assert.Contains(t, p["detail"], "no task "+id)
	signed := sendAs(t, h, ssnP1, http.MethodPost, signing, "")
	require.Equal(t, http.StatusOK, signed.Code, signed.Body.String())
	assert.Equal(t, "Archived", signed.json(t)["Outcome"])
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM task_signatures s JOIN parties o ON o.id = s.on_behalf_of_party_id
		WHERE s.message_id = $1 AND s.step = 2 AND o.organization_number = $2`, id, orgO1))
}
