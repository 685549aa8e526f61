package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/store/storetest"
)

// The lifecycle tests build their own mailbox: an organization with messages of its own, and three
// persons whose roles give them different rights on its services.
const (
	lifeOrg = "310999993"
	// Persons of the demo dataset, with roles for lifeOrg only from the fixture.
	lifeReader  = ssnP2 // Read and ArchiveRead on 7001/1 and 4711/2
	lifeManager = ssnP3 // every right on 7001/1 and 4711/2
	lifeDeleter = ssnP4 // Read, Delete and ArchiveRead on 7001/1: no ArchiveDelete

	lifeUnread      = "a8800001" // correspondence, Ulest
	lifeRead        = "a8800002" // correspondence, Lest
	lifeFiled       = "a8800003" // correspondence, Arkivert
	lifeConfirm     = "a8800004" // correspondence, Ulest, asks for confirmation
	lifeFilling     = "a8800005" // form task, Utfylling
	lifeSent        = "a8800006" // form task, Sendt og arkivert, with its archive
	lifeContended   = "a8800007" // correspondence, Lest: the one the concurrency test fights over
	lifeOtherUnread = "a8800008" // correspondence, Ulest, created last
)

type lifecycleFixture struct {
	h    *api.Server
	pool *pgxpool.Pool
}

func newLifecycleFixture(t *testing.T) lifecycleFixture {
	t.Helper()
	srv, pool := newServer(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	var org int64
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO parties (kind, organization_number, name, organization_form, status)
		VALUES ('Organization', $1, 'Livsløp AS', 'AS', 'Active') RETURNING id`, lifeOrg).Scan(&org))
	roles := []struct {
		ssn, code string
		rights    []string // "service/edition/action"
	}{
		{lifeReader, "LREAD", []string{"7001/1/Read", "7001/1/ArchiveRead", "4711/2/Read", "4711/2/ArchiveRead"}},
		{lifeManager, "LMGR", []string{"7001/1/Read", "7001/1/Write", "7001/1/Delete", "7001/1/ArchiveRead", "7001/1/ArchiveDelete",
			"4711/2/Read", "4711/2/Write", "4711/2/Delete", "4711/2/ArchiveRead", "4711/2/ArchiveDelete"}},
		{lifeDeleter, "LDEL", []string{"7001/1/Read", "7001/1/Delete", "7001/1/ArchiveRead"}},
	}
	for _, r := range roles {
		var def int
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO role_definitions (role_type, role_definition_code, role_name, role_description)
			VALUES ('Altinn', $1, $1, 'lifecycle test role') RETURNING id`, r.code).Scan(&def))
		for _, right := range r.rights {
			p := strings.Split(right, "/")
			exec(`INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
				VALUES ($1, $2, $3::int, $4, false)`, def, p[0], p[1], p[2])
		}
		exec(`INSERT INTO roles (holder_party_id, reportee_id, role_definition_id, delegator, delegated_time)
			SELECT id, $2, $3, 'test', '2025-01-01' FROM parties WHERE ssn = $1`, r.ssn, org, def)
	}
	messages := []struct {
		id, typ, svc, status string
		confirm              bool
	}{
		{lifeUnread, "Correspondence", "7001", "Ulest", false},
		{lifeRead, "Correspondence", "7001", "Lest", false},
		{lifeFiled, "Correspondence", "7001", "Arkivert", false},
		{lifeConfirm, "Correspondence", "7001", "Ulest", true},
		{lifeFilling, "FormTask", "4711", "Utfylling", false},
		{lifeSent, "FormTask", "4711", "Sendt og arkivert", false},
		{lifeContended, "Correspondence", "7001", "Lest", false},
		{lifeOtherUnread, "Correspondence", "7001", "Ulest", false},
	}
	for i, m := range messages {
		edition, sender := 1, any("Fjordetaten")
		if m.typ == "FormTask" {
			edition, sender = 2, nil
		}
		exec(`INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status, created_date,
				last_changed, last_changed_by, message_sender, summary, body, is_confirmation_needed)
			VALUES ($1, $2, $3, $4, $5, 'Melding ' || $1, $6, timestamp '2025-01-01' + $7 * interval '1 day',
				timestamp '2025-01-01' + $7 * interval '1 day', 'Fjordetaten', $8, 'Kort', '<p>Tekst</p>', $9)`,
			m.id, org, m.typ, m.svc, edition, m.status, i, sender, m.confirm)
	}
	exec(`INSERT INTO prints (document_digest, pdf_sha256) VALUES ('\x01', $1)`, storetest.Blob(t, pool, []byte("%PDF-1.4")))
	exec(`INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest)
		VALUES ('AR8800006', $1, '2025-01-06', 'Sigrid Haugland', '[]', '[]', '\x01')`, lifeSent)
	exec(`UPDATE messages SET archive_reference = 'AR8800006' WHERE id = $1`, lifeSent)
	return lifecycleFixture{h: srv, pool: pool}
}

func (f lifecycleFixture) as(t *testing.T, ssn, method, path string, header ...string) response {
	t.Helper()
	hdr := map[string]string{}
	all := append(bearer(t, ssn), header...)
	for i := 0; i+1 < len(all); i += 2 {
		hdr[all[i]] = all[i+1]
	}
	return do(t, f.h, request{method: method, path: path, header: hdr})
}

func lifePath(id string, rest ...string) string {
	return "/api/" + lifeOrg + "/messages/" + id + strings.Join(rest, "")
}

// audit returns the actions the message audit log holds for a message, oldest first.
func (f lifecycleFixture) audit(t *testing.T, id string) []string {
	t.Helper()
	return auditOf(t, f.pool, id)
}

// mailboxIDs lists the ids the caller sees in the mailbox (in) or the trashbin (trashbin).
func (f lifecycleFixture) mailboxIDs(t *testing.T, ssn string, trashbin bool) []string {
	t.Helper()
	path := "/api/" + lifeOrg + "/messages"
	if trashbin {
		path += "/trashbin"
	}
	return walk(t, f.h, ssn, path)
}

func TestArchiveMessage(t *testing.T) {
	f := newLifecycleFixture(t)
	cases := []struct {
		name, ssn, id string
		status        int
		kind          string
		wantStatus    string
		audited       bool
	}{
		{"a reader files an unread correspondence", lifeReader, lifeUnread, http.StatusOK, "", "Arkivert", true},
		{"again: idempotent, not audited again", lifeReader, lifeUnread, http.StatusOK, "", "Arkivert", false},
		{"an archived correspondence", lifeManager, lifeFiled, http.StatusOK, "", "Arkivert", false},
		{"a sent form task is archived already", lifeManager, lifeSent, http.StatusOK, "", "Sendt og arkivert", false},
		{"a sent form task needs Write", lifeReader, lifeSent, http.StatusForbidden, "missing-right", "", false},
		{"a form task in progress", lifeManager, lifeFilling, http.StatusConflict, "conflict", "", false},
		{"a service the caller may not read", lifeDeleter, lifeSent, http.StatusNotFound, "not-found", "", false},
		{"an unknown message", lifeManager, "a8899999", http.StatusNotFound, "not-found", "", false},
		{"not a message id", lifeManager, "trashbin2", http.StatusNotFound, "not-found", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.audit(t, tc.id))
			r := f.as(t, tc.ssn, http.MethodPut, lifePath(tc.id, "/archive"))
			if tc.kind != "" {
				p := requireProblem(t, r, tc.status)
				assert.Equal(t, "urn:postbox:problem:"+tc.kind, p["type"])
				if tc.status == http.StatusConflict {
					assert.Equal(t, "Utfylling", p["taskStatus"])
				}
			} else {
				require.Equal(t, tc.status, r.Code, r.Body.String())
				assert.Equal(t, tc.wantStatus, r.json(t)["Status"])
			}
			want := before
			if tc.audited {
				want++
			}
			assert.Len(t, f.audit(t, tc.id), want)
		})
	}
}

func TestConfirmMessage(t *testing.T) {
	f := newLifecycleFixture(t)
	single := f.as(t, lifeReader, http.MethodGet, lifePath(lifeConfirm, "?markAsRead=false")).json(t)
	assert.Equal(t, true, single["IsConfirmationNeeded"])
	assert.NotContains(t, single, "ConfirmedDateTime")

	r := f.as(t, lifeReader, http.MethodPut, lifePath(lifeConfirm, "/confirm"))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	m := r.json(t)
	assert.Equal(t, "Lest", m["Status"], "confirming marks it read")
	assert.Equal(t, "Ola Bakketun", m["ConfirmedBy"])
	assert.NotEmpty(t, m["ConfirmedDateTime"])
	again := f.as(t, lifeManager, http.MethodPut, lifePath(lifeConfirm, "/confirm"))
	require.Equal(t, http.StatusOK, again.Code, again.Body.String())
	assert.Equal(t, m["ConfirmedDateTime"], again.json(t)["ConfirmedDateTime"], "a second confirm changes nothing")
	assert.Equal(t, "Ola Bakketun", again.json(t)["ConfirmedBy"])
	assert.Equal(t, []string{"Confirm"}, f.audit(t, lifeConfirm))

	for _, tc := range []struct {
		id, kind string
		status   int
	}{
		{lifeRead, "confirmation-not-needed", http.StatusConflict},
		{lifeFilling, "not-correspondence", http.StatusConflict},
		{"a8899999", "not-found", http.StatusNotFound},
	} {
		p := requireProblem(t, f.as(t, lifeManager, http.MethodPut, lifePath(tc.id, "/confirm")), tc.status)
		assert.Equal(t, "urn:postbox:problem:"+tc.kind, p["type"], tc.id)
	}
	// Someone who does not represent the organization.
	requireProblem(t, f.as(t, ssnP5, http.MethodPut, lifePath(lifeConfirm, "/confirm")), http.StatusForbidden)
	assert.Equal(t, []string{"Confirm"}, f.audit(t, lifeConfirm))
}

func TestTrashbinLifecycle(t *testing.T) {
	f := newLifecycleFixture(t)
	all := f.mailboxIDs(t, lifeManager, false)
	require.Len(t, all, 8)
	counts := func() map[string]float64 {
		r := f.as(t, lifeManager, http.MethodGet, "/api/my/messagebox")
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		for _, box := range r.embedded(t, "mailboxes") {
			if box["Name"] == "Livsløp AS" {
				out := map[string]float64{}
				for _, n := range box["Counts"].([]any) {
					n := n.(map[string]any)
					out[n["Status"].(string)] = n["Count"].(float64)
				}
				return out
			}
		}
		t.Fatal("no mailbox of the fixture's organization")
		return nil
	}
	require.Equal(t, float64(3), counts()["Ulest"])

	// Refusals: rights, state, unknown id.
	p := requireProblem(t, f.as(t, lifeReader, http.MethodDelete, lifePath(lifeUnread)), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:missing-right", p["type"])
	requireProblem(t, f.as(t, lifeDeleter, http.MethodDelete, lifePath(lifeFiled)), http.StatusForbidden) // archived: ArchiveDelete
	// A form task in progress goes through its workflow (lifecycle_formtask_test.go): this API has no Temporal.
	r := f.as(t, lifeManager, http.MethodDelete, lifePath(lifeFilling))
	p = requireProblem(t, r, http.StatusServiceUnavailable)
	assert.Equal(t, "urn:postbox:problem:temporal-unavailable", p["type"])
	assert.NotEmpty(t, r.Header().Get("Retry-After"))
	requireProblem(t, f.as(t, lifeManager, http.MethodDelete, lifePath("a8899999")), http.StatusNotFound)
	requireProblem(t, f.as(t, lifeManager, http.MethodPut, lifePath(lifeUnread, "/restore")), http.StatusConflict)
	requireProblem(t, f.as(t, lifeManager, http.MethodDelete, lifePath("trashbin/"+lifeUnread)), http.StatusNotFound)
	assert.Empty(t, f.audit(t, lifeUnread))

	// The deleter moves two to the trashbin, the manager an archived form task.
	for _, d := range []struct{ ssn, id string }{{lifeDeleter, lifeUnread}, {lifeDeleter, lifeRead}, {lifeManager, lifeSent}} {
		r := f.as(t, d.ssn, http.MethodDelete, lifePath(d.id))
		require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	}
	requireProblem(t, f.as(t, lifeDeleter, http.MethodDelete, lifePath(lifeUnread)), http.StatusNotFound)
	requireProblem(t, f.as(t, lifeManager, http.MethodGet, lifePath(lifeUnread)), http.StatusNotFound)
	requireProblem(t, f.as(t, lifeManager, http.MethodGet, lifePath(lifeRead, "/portalview")), http.StatusNotFound)
	requireProblem(t, f.as(t, lifeManager, http.MethodPut, lifePath(lifeUnread, "/archive")), http.StatusNotFound)
	assert.ElementsMatch(t, []string{lifeFiled, lifeConfirm, lifeFilling, lifeContended, lifeOtherUnread}, f.mailboxIDs(t, lifeManager, false))
	assert.Equal(t, float64(2), counts()["Ulest"], "the messagebox counts leave the trashbin out")
	everyParty := walk(t, f.h, lifeManager, "/api/all/messages")
	assert.Contains(t, everyParty, lifeFiled)
	for _, id := range []string{lifeUnread, lifeRead, lifeSent} {
		assert.NotContains(t, everyParty, id, "the list of every party's messages leaves the trashbin out")
	}

	// The trashbin: newest deletion first, paged and filtered like the mailbox; each caller sees what
	// its rights let it see (the deleter may not read form tasks).
	assert.Equal(t, []string{lifeSent, lifeRead, lifeUnread}, f.mailboxIDs(t, lifeManager, true))
	assert.Equal(t, []string{lifeRead, lifeUnread}, f.mailboxIDs(t, lifeDeleter, true))
	r = f.as(t, lifeManager, http.MethodGet, "/api/"+lifeOrg+"/messages/TrashBin?$top=1&$filter=Type%20eq%20'Correspondence'")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	items := r.embedded(t, "messages")
	require.Len(t, items, 1)
	assert.Equal(t, lifeRead, items[0]["MessageId"])
	assert.Equal(t, "Lest", items[0]["Status"], "the status stays as it was")
	assert.Equal(t, "Per Storvik", items[0]["DeletedBy"])
	assert.NotEmpty(t, items[0]["DeletedDateTime"])
	assert.Contains(t, r.json(t)["_links"], "next")
	restore := link(t, items[0], "restore")
	assert.Equal(t, "http://postbox.test"+lifePath(lifeRead, "/restore"), restore)
	one := f.as(t, lifeManager, http.MethodGet, pathOf(t, link(t, items[0], "self")))
	require.Equal(t, http.StatusOK, one.Code, one.Body.String())
	assert.Equal(t, "Kort", one.json(t)["Summary"])
	requireProblem(t, f.as(t, lifeManager, http.MethodGet, "/api/"+lifeOrg+"/messages/trashbin?$filter=Nope%20eq%201"), http.StatusBadRequest)

	// Restore: back in the mailbox in the status it had; an unread one stays unread.
	r = f.as(t, lifeDeleter, http.MethodPut, lifePath(lifeUnread, "/restore"))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "Ulest", r.json(t)["Status"])
	assert.Equal(t, float64(3), counts()["Ulest"])
	requireProblem(t, f.as(t, lifeReader, http.MethodPut, lifePath(lifeRead, "/restore")), http.StatusForbidden)

	// For good: gone everywhere, the archive of the form task stays.
	requireProblem(t, f.as(t, lifeDeleter, http.MethodDelete, lifePath("trashbin/"+lifeSent)), http.StatusNotFound)
	for _, id := range []string{lifeRead, lifeSent} {
		r := f.as(t, lifeManager, http.MethodDelete, lifePath("trashbin/"+id))
		require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	}
	assert.Empty(t, f.mailboxIDs(t, lifeManager, true))
	requireProblem(t, f.as(t, lifeManager, http.MethodPut, lifePath(lifeRead, "/restore")), http.StatusNotFound)
	var archived int
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT count(*) FROM archives WHERE message_id = $1`, lifeSent).Scan(&archived))
	assert.Equal(t, 1, archived)

	assert.Equal(t, []string{"Delete", "Restore"}, f.audit(t, lifeUnread))
	assert.Equal(t, []string{"Delete", "DeleteForGood"}, f.audit(t, lifeRead))
	assert.Equal(t, []string{"Delete", "DeleteForGood"}, f.audit(t, lifeSent))
}

func TestLifecycleMediaTypes(t *testing.T) {
	f := newLifecycleFixture(t)
	for _, accept := range []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"} {
		t.Run(accept, func(t *testing.T) {
			for _, step := range []struct {
				method, path string
				status       int
			}{
				{http.MethodPut, lifePath(lifeContended, "/archive"), http.StatusOK},
				{http.MethodDelete, lifePath(lifeContended), http.StatusNoContent},
				{http.MethodGet, "/api/" + lifeOrg + "/messages/trashbin", http.StatusOK},
				{http.MethodGet, lifePath("trashbin/" + lifeContended), http.StatusOK},
				{http.MethodPut, lifePath(lifeContended, "/restore"), http.StatusOK},
				{http.MethodPut, lifePath(lifeConfirm, "/confirm"), http.StatusOK},
				{http.MethodPut, lifePath(lifeFilling, "/archive"), http.StatusConflict},
			} {
				r := f.as(t, lifeManager, step.method, step.path, "Accept", accept)
				require.Equal(t, step.status, r.Code, "%s %s: %s", step.method, step.path, r.Body.String())
				if step.status == http.StatusNoContent {
					continue
				}
				ct := r.Header().Get("Content-Type")
				if strings.Contains(accept, "xml") {
					assert.Contains(t, ct, "xml")
					requireWellFormedXML(t, r.Body.Bytes())
					if step.status == http.StatusOK {
						assert.Contains(t, r.Body.String(), "<Status>")
					}
				} else {
					assert.Contains(t, ct, "json")
				}
			}
		})
	}
	requireProblem(t, f.as(t, lifeManager, http.MethodGet, "/api/"+lifeOrg+"/messages/trashbin", "Accept", "text/csv"), http.StatusNotAcceptable)
}

// Parallel archive, delete and restore of one message: each change decides on where the one before left
// it, so the message is in exactly one place and the audit log holds exactly the changes that answered
// success.
func TestLifecycleConcurrentChanges(t *testing.T) {
	f := newLifecycleFixture(t)
	hdr := bearer(t, lifeManager)
	succeeded := race(t, f.h, map[string]string{hdr[0]: hdr[1], hdr[2]: hdr[3]}, 8, []lifecycleCall{
		{http.MethodDelete, lifePath(lifeContended)},
		{http.MethodPut, lifePath(lifeContended, "/restore")},
		{http.MethodPut, lifePath(lifeContended, "/archive")},
	})
	deletes, restores := succeeded[0], succeeded[1]
	require.GreaterOrEqual(t, deletes, 1)
	actions := f.audit(t, lifeContended)
	assert.Equal(t, deletes, countOf(actions, "Delete"))
	assert.Equal(t, restores, countOf(actions, "Restore"))
	assert.LessOrEqual(t, countOf(actions, "Archive"), 1, "archived once at most")
	// Deletes and restores alternate: the message ends in the trashbin exactly when one more delete succeeded.
	inTrash := deletes == restores+1
	require.True(t, inTrash || deletes == restores, "deletes %d, restores %d: %v", deletes, restores, actions)
	mailbox, trash := f.mailboxIDs(t, lifeManager, false), f.mailboxIDs(t, lifeManager, true)
	assert.Equal(t, inTrash, contains(trash, lifeContended), fmt.Sprint(trash))
	assert.Equal(t, !inTrash, contains(mailbox, lifeContended), fmt.Sprint(mailbox))
}

// lifecycleCall is a change a concurrency test sends.
type lifecycleCall struct{ method, path string }

// race sends every call rounds times, all at once, with header, and returns how many of each succeeded
// (200, 204); 404 and 409 are the answers of a message that was somewhere else at that moment, any other
// fails the test.
func race(t *testing.T, h http.Handler, header map[string]string, rounds int, calls []lifecycleCall) []int {
	t.Helper()
	var (
		mu        sync.Mutex
		succeeded = make([]int, len(calls))
		wg        sync.WaitGroup
	)
	for range rounds {
		for i, cl := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := do(t, h, request{method: cl.method, path: cl.path, header: header})
				mu.Lock()
				defer mu.Unlock()
				switch r.Code {
				case http.StatusOK, http.StatusNoContent:
					succeeded[i]++
				case http.StatusNotFound, http.StatusConflict:
				default:
					t.Errorf("%s %s answered %d: %s", cl.method, cl.path, r.Code, r.Body.String())
				}
			}()
		}
	}
	wg.Wait()
	return succeeded
}

// countOf counts the audit actions a.
func countOf(actions []string, a string) int {
	n := 0
	for _, x := range actions {
		if x == a {
			n++
		}
	}
	return n
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestMarkAsReadFalse(t *testing.T) {
	f := newLifecycleFixture(t)
	for _, path := range []string{lifePath(lifeUnread, "?markAsRead=false"), lifePath(lifeUnread, "/portalview?markAsRead=False")} {
		r := f.as(t, lifeReader, http.MethodGet, path)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	}
	requireProblem(t, f.as(t, lifeReader, http.MethodGet, lifePath(lifeUnread, "?markAsRead=maybe")), http.StatusBadRequest)
	r := f.as(t, lifeReader, http.MethodGet, lifePath(lifeUnread, "?markAsRead=false"))
	assert.Equal(t, "Ulest", r.json(t)["Status"], "still unread")
	r = f.as(t, lifeReader, http.MethodGet, lifePath(lifeUnread))
	assert.Equal(t, "Lest", r.json(t)["Status"], "a read without the flag marks it read")
}
