package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

const cloudEventsBatch = "application/cloudevents-batch+json"

// feedOf reads one page of the events feed of who as a person, in the CloudEvents batch form.
func feedOf(t *testing.T, h http.Handler, ssn, who string, after int64) []map[string]any {
	t.Helper()
	r := getAs(t, h, ssn, fmt.Sprintf("/api/%s/events?after=%d&size=200", who, after), "Accept", cloudEventsBatch)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, cloudEventsBatch+"; charset=utf-8", r.Header().Get("Content-Type"))
	var batch []map[string]any
	require.NoError(t, json.Unmarshal(r.Body.Bytes(), &batch), r.Body.String())
	assert.NotRegexp(t, regexp.MustCompile(`\b\d{11}\b`), r.Body.String(), "no identity number in an event")
	return batch
}

// eventsOf keeps the events of one message, or of no message (roles and role definitions) for "".
func eventsOf(batch []map[string]any, messageID string) []map[string]any {
	var out []map[string]any
	for _, e := range batch {
		if id, _ := e["data"].(map[string]any)["MessageId"].(string); id == messageID {
			out = append(out, e)
		}
	}
	return out
}

func typesOf(batch []map[string]any) []string {
	out := make([]string, len(batch))
	for i, e := range batch {
		out[i] = e["type"].(string)
	}
	return out
}

func reporteeOfOrg(t *testing.T, pool *pgxpool.Pool, orgnr string) string {
	t.Helper()
	var id int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM parties WHERE organization_number = $1`, orgnr).Scan(&id))
	return "r" + strconv.FormatInt(id, 10)
}

// requireMessageEvent checks the CloudEvent attributes and data of an event of a message.
func requireMessageEvent(t *testing.T, e map[string]any, eventType, reportee, messageID, status string) {
	t.Helper()
	assert.Equal(t, "1.0", e["specversion"])
	assert.Equal(t, eventType, e["type"])
	assert.Equal(t, testPublicURL+"/api/"+reportee+"/messages/"+messageID, e["source"])
	assert.Equal(t, "/party/"+reportee, e["subject"])
	assert.Equal(t, "application/json", e["datacontenttype"])
	assert.Regexp(t, `^[0-9a-f-]{36}$`, e["id"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT`, e["time"])
	assert.Regexp(t, `^[1-9][0-9]*$`, e["sequence"])
	data := e["data"].(map[string]any)
	assert.Equal(t, messageID, data["MessageId"])
	assert.Equal(t, reportee, data["ReporteeId"])
	assert.Equal(t, status, data["Status"])
}

// Every change of a message in the mailbox writes its event once, with the change: read, confirmed,
// archived, deleted, restored and deleted for good; repeats and refusals write none.
func TestMessageChangesWriteTheirEvents(t *testing.T) {
	f := newLifecycleFixture(t)
	rep := reporteeOfOrg(t, f.pool, lifeOrg)

	require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodGet, lifePath(lifeUnread)).Code)
	require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodGet, lifePath(lifeUnread)).Code, "read again: no change")
	require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodPut, lifePath(lifeConfirm, "/confirm")).Code)
	require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodPut, lifePath(lifeConfirm, "/confirm")).Code, "confirmed again")
	require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodPut, lifePath(lifeRead, "/archive")).Code)
	require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodPut, lifePath(lifeRead, "/archive")).Code, "archived again")
	require.Equal(t, http.StatusNoContent, f.as(t, lifeManager, http.MethodDelete, lifePath(lifeRead)).Code)
	require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodPut, lifePath(lifeRead, "/restore")).Code)
	require.Equal(t, http.StatusConflict, f.as(t, lifeManager, http.MethodPut, lifePath(lifeRead, "/restore")).Code, "refused")
	require.Equal(t, http.StatusNoContent, f.as(t, lifeManager, http.MethodDelete, lifePath(lifeSent)).Code)
	require.Equal(t, http.StatusNoContent, f.as(t, lifeManager, http.MethodDelete, "/api/"+lifeOrg+"/messages/trashbin/"+lifeSent).Code)
	require.Equal(t, http.StatusForbidden, f.as(t, lifeDeleter, http.MethodDelete, lifePath(lifeFiled)).Code, "refused: no ArchiveDelete")

	batch := feedOf(t, f.h, lifeManager, lifeOrg, 0)
	require.Len(t, batch, 7, "%v", typesOf(batch))
	for i, e := range batch {
		assert.Equal(t, strconv.Itoa(i+1), e["sequence"], "the first events of the outbox, in order")
	}
	requireMessageEvent(t, batch[0], events.CorrespondenceRead, rep, lifeUnread, "Lest")
	requireMessageEvent(t, batch[1], events.CorrespondenceConfirmed, rep, lifeConfirm, "Lest")
	requireMessageEvent(t, batch[2], events.CorrespondenceArchived, rep, lifeRead, "Arkivert")
	requireMessageEvent(t, batch[3], events.MessageDeleted, rep, lifeRead, "Arkivert")
	requireMessageEvent(t, batch[4], events.MessageRestored, rep, lifeRead, "Arkivert")
	requireMessageEvent(t, batch[5], events.MessageDeleted, rep, lifeSent, "Sendt og arkivert")
	requireMessageEvent(t, batch[6], events.MessagePurged, rep, lifeSent, "Sendt og arkivert")
	assert.Equal(t, map[string]any{"MessageId": lifeUnread, "ReporteeId": rep, "Type": "Correspondence", "ServiceCode": "7001",
		"ServiceEdition": 1.0, "Status": "Lest"}, batch[0]["data"], "ids and the new state, nothing else")

	// The feed shows what the mailbox shows: the deleter has no ArchiveRead on 4711/2, the reader sees
	// both services.
	assert.Empty(t, eventsOf(feedOf(t, f.h, lifeDeleter, lifeOrg, 0), lifeSent), "no right on 4711/2")
	assert.Len(t, feedOf(t, f.h, lifeReader, lifeOrg, 0), 7)
	assert.Len(t, feedOf(t, f.h, lifeManager, lifeOrg, 4), 3, "after a sequence")
	requireProblem(t, getAs(t, f.h, ssnP5, "/api/"+lifeOrg+"/events"), http.StatusForbidden)
}

// Delegations, role deletions and local role definitions write their events; only access managers of the
// reportee see them.
func TestAuthorizationChangesWriteTheirEvents(t *testing.T) {
	srv, pool := newServer(t)
	rep := reporteeOfOrg(t, pool, orgO1)
	p5 := selfReporteeID(t, ssnP5)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"

	r := authzDo(t, srv, ssnP3, http.MethodPost, defs, "application/hal+json", localRoleBody("Innsyn", localRight("4711", `"2"`, "Read"), localRight("4711", `"2"`, "ArchiveRead")))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	self := pathOf(t, r.Header().Get("Location"))
	var def int
	_, err := fmt.Sscanf(self, defs+"/%d", &def)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, authzDo(t, srv, ssnP3, http.MethodPut, self, "application/hal+json",
		localRoleBody("Innsyn og arkiv", localRight("4711", `"2"`, "Read"), localRight("4711", `"2"`, "ArchiveRead"))).Code)
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), def, roleREGNA)).Code)
	regna := authzRoleID(t, srv, ssnP5, orgO1, roleREGNA)
	local := authzRoleID(t, srv, ssnP5, orgO1, def)
	require.Equal(t, http.StatusNoContent, authzDo(t, srv, ssnP3, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/roles/%d", orgO1, regna), "", "").Code)
	var right int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM role_definition_rights WHERE role_definition_id = $1 AND action = 'ArchiveRead'`, def).Scan(&right))
	require.Equal(t, http.StatusNoContent, authzDo(t, srv, ssnP3, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/rights/%d", orgO1, right), "", "").Code)
	require.Equal(t, http.StatusNoContent, authzDo(t, srv, ssnP3, http.MethodDelete, self, "", "").Code)

	batch := eventsOf(feedOf(t, srv, ssnP3, orgO1, 0), "")
	require.Equal(t, []string{events.RoleDefinitionCreated, events.RoleDefinitionChanged, events.RoleDelegated, events.RoleDelegated,
		events.RoleDeleted, events.RoleDefinitionChanged, events.RoleDeleted, events.RoleDefinitionDeleted}, typesOf(batch))
	defSource := fmt.Sprintf("%s/api/%s/authorization/roledefinitions/%d", testPublicURL, rep, def)
	for _, i := range []int{0, 1, 5, 7} {
		assert.Equal(t, defSource, batch[i]["source"])
		assert.Equal(t, "/party/"+rep, batch[i]["subject"])
		assert.EqualValues(t, def, batch[i]["data"].(map[string]any)["RoleDefinitionId"])
	}
	assert.Equal(t, "Innsyn og arkiv", batch[1]["data"].(map[string]any)["Name"])
	assert.Equal(t, map[string]any{"RoleId": float64(regna), "RoleDefinitionId": float64(roleREGNA), "ReporteeId": rep, "HolderId": p5},
		batch[4]["data"], "ids only: the holder as a reportee id, never an identity number")
	assert.Equal(t, fmt.Sprintf("%s/api/%s/authorization/roles/%d", testPublicURL, rep, local), batch[6]["source"],
		"the delegation of the deleted definition is deleted with it")

	assert.Equal(t, typesOf(batch), typesOf(eventsOf(feedOf(t, srv, ssnP1, orgO1, 0), "")), "the main administrator sees them")
	assert.Empty(t, feedOf(t, srv, ssnP4, orgO1, 0), "not an access manager of O1: none of them")

	// The receiver routes delete roles too: one by its id, and the one role that alone gives a right.
	last, err := strconv.ParseInt(batch[len(batch)-1]["sequence"].(string), 10, 64)
	require.NoError(t, err)
	r = authzDo(t, srv, ssnP3, http.MethodPost, defs, "application/hal+json", localRoleBody("Bare lesing", localRight("4711", `"2"`, "Read")))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	_, err = fmt.Sscanf(pathOf(t, r.Header().Get("Location")), defs+"/%d", &def)
	require.NoError(t, err)
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM role_definition_rights WHERE role_definition_id = $1`, def).Scan(&right))
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), def, roleREGNA)).Code)
	regna, local = authzRoleID(t, srv, ssnP5, orgO1, roleREGNA), authzRoleID(t, srv, ssnP5, orgO1, def)
	receiver := "/api/" + orgO1 + "/authorization/delegations/" + p5
	require.Equal(t, http.StatusNoContent, authzDo(t, srv, ssnP1, http.MethodDelete, fmt.Sprintf("%s/roles/%d", receiver, regna), "", "").Code)
	r = authzDo(t, srv, ssnP1, http.MethodDelete, fmt.Sprintf("%s/rights/%d", receiver, right), "", "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	batch = eventsOf(feedOf(t, srv, ssnP3, orgO1, last), "")
	require.Equal(t, []string{events.RoleDefinitionCreated, events.RoleDelegated, events.RoleDelegated, events.RoleDeleted, events.RoleDeleted}, typesOf(batch))
	assert.EqualValues(t, regna, batch[3]["data"].(map[string]any)["RoleId"])
	assert.EqualValues(t, local, batch[4]["data"].(map[string]any)["RoleId"])
}

// A form task's life in events, through the real worker: created, its attachments added, replaced and
// deleted, Signering, and Sendt og arkivert with its ArchiveReference, each once.
func TestFormTaskChangesWriteTheirEvents(t *testing.T) {
	srv, pool := formTaskServer(t)
	var after int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT last_seq FROM event_sequence`).Scan(&after))
	rep := reporteeOfOrg(t, pool, orgO1)

	r := sendAs(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/messages", `{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2}`)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	path := pathOf(t, r.Header().Get("Location"))
	id := path[len(path)-len("a5000000"):]
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 beretning"))
	body := putBody(t, []map[string]any{mainForm(demoFormData(t, "a3101102"))},
		[]map[string]any{{"FileName": "beretning.pdf", "AttachmentType": "Revisjonsberetning", "Data": pdf}})
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"?complete=false", body)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	// One attachment more, given new content, and deleted.
	r = sendAs(t, srv, ssnP1, http.MethodPost, path+"/attachments", `{"FileName":"lonn.pdf","AttachmentType":"Revisjonsberetning","Data":"`+pdf+`"}`)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	extra := pathOf(t, r.Header().Get("Location"))
	r = sendAs(t, srv, ssnP1, http.MethodPost, extra, `{"FileName":"lonn-ny.pdf","Data":"`+pdf+`"}`)
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	r = sendAs(t, srv, ssnP1, http.MethodDelete, extra, "")
	require.Less(t, r.Code, 300, r.Body.String())
	r = sendAs(t, srv, ssnP1, http.MethodPut, path+"?sign=false", body)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	r = sendAs(t, srv, ssnP1, http.MethodPut, path, "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	_, ref := messageStatus(t, pool, id)
	require.NotEmpty(t, ref)

	// A PUT with a body replaces the task's content: its attachments are deleted and the body's added anew.
	batch := eventsOf(feedOf(t, srv, ssnP1, orgO1, after), id)
	require.Equal(t, []string{events.FormTaskCreated, events.FormTaskAttachmentAdded,
		events.FormTaskAttachmentAdded, events.FormTaskAttachmentReplaced, events.FormTaskAttachmentDeleted,
		events.FormTaskAttachmentDeleted, events.FormTaskAttachmentAdded,
		events.FormTaskStatusChanged, events.FormTaskStatusChanged}, typesOf(batch))
	requireMessageEvent(t, batch[0], events.FormTaskCreated, rep, id, "Utfylling")
	attachmentOf := func(i int) map[string]any { return batch[i]["data"].(map[string]any) }
	for i := 1; i <= 6; i++ {
		assert.Equal(t, fmt.Sprintf("%s/api/%s/messages/%s/attachments/%v", testPublicURL, rep, id, attachmentOf(i)["AttachmentId"]), batch[i]["source"])
		status := "Utfylling"
		if i >= 5 {
			status = "Signering" // the task as the projection that made the change left it
		}
		assert.Equal(t, status, attachmentOf(i)["Status"])
	}
	assert.True(t, strings.HasSuffix(extra, fmt.Sprintf("/attachments/%v", attachmentOf(2)["AttachmentId"])))
	for _, i := range []int{3, 4} {
		assert.Equal(t, attachmentOf(2)["AttachmentId"], attachmentOf(i)["AttachmentId"], "the extra attachment, replaced and deleted")
		assert.Equal(t, "Revisjonsberetning", attachmentOf(i)["AttachmentType"])
	}
	assert.Equal(t, attachmentOf(1)["AttachmentId"], attachmentOf(5)["AttachmentId"], "the first deleted by the second PUT")
	assert.NotEqual(t, attachmentOf(1)["AttachmentId"], attachmentOf(6)["AttachmentId"], "and added anew")
	assert.Equal(t, "Revisjonsberetning", attachmentOf(6)["AttachmentType"])
	requireMessageEvent(t, batch[7], events.FormTaskStatusChanged, rep, id, "Signering")
	requireMessageEvent(t, batch[8], events.FormTaskStatusChanged, rep, id, "Sendt og arkivert")
	assert.Equal(t, ref, batch[8]["data"].(map[string]any)["ArchiveReference"])
	for _, e := range batch {
		assert.NotContains(t, e["data"], "FormData", "never form data")
	}

	// The service owner of 4711 reads them in its own feed, under Altinn 2's parameter names.
	o := fjeToken(t).get(t, srv, fmt.Sprintf("/api/serviceowner/events/feed?eventOffset=%d&fetch=200", after), "Accept", cloudEventsBatch)
	require.Equal(t, http.StatusOK, o.Code, o.Body.String())
	var owned []map[string]any
	require.NoError(t, json.Unmarshal(o.Body.Bytes(), &owned))
	assert.Equal(t, typesOf(batch), typesOf(eventsOf(owned, id)))
	n := nsfToken(t).get(t, srv, fmt.Sprintf("/api/serviceowner/events/feed?eventOffset=%d", after), "Accept", cloudEventsBatch)
	require.Equal(t, http.StatusOK, n.Code, n.Body.String())
	assert.NotContains(t, n.Body.String(), id, "another owner's services")
}

// A form task in progress goes to the trashbin, back and away through its workflow: the ChangePlace
// activity writes each move's event with it, once.
func TestFormTaskInProgressPlaceChangesWriteTheirEvents(t *testing.T) {
	srv, pool := formTaskServer(t)
	var after int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT last_seq FROM event_sequence`).Scan(&after))
	rep := reporteeOfOrg(t, pool, orgO1)
	path, id := newTask(t, srv, "?complete=false")
	for _, step := range []struct{ method, path string }{
		{http.MethodDelete, path}, {http.MethodPut, path + "/restore"}, {http.MethodDelete, path},
		{http.MethodDelete, "/api/" + orgO1 + "/messages/trashbin/" + id},
	} {
		r := sendAs(t, srv, ssnP1, step.method, step.path, "")
		require.Less(t, r.Code, 300, "%s %s: %s", step.method, step.path, r.Body.String())
	}
	batch := eventsOf(feedOf(t, srv, ssnP1, orgO1, after), id)
	require.Equal(t, []string{events.FormTaskCreated, events.MessageDeleted, events.MessageRestored, events.MessageDeleted, events.MessagePurged},
		typesOf(batch))
	for _, e := range batch {
		requireMessageEvent(t, e, e["type"].(string), rep, id, "Utfylling")
	}
}

// The feed in its five forms, its next link and its refusals.
func TestEventFeedFormsAndPaging(t *testing.T) {
	f := newLifecycleFixture(t)
	for _, id := range []string{lifeUnread, lifeOtherUnread} {
		require.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodGet, lifePath(id)).Code)
	}
	feed := "/api/" + lifeOrg + "/events"

	r := f.as(t, lifeManager, http.MethodGet, feed+"?size=1")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "application/hal+json; charset=utf-8", r.Header().Get("Content-Type"))
	page := r.embedded(t, "events")
	require.Len(t, page, 1)
	assert.Equal(t, lifeUnread, page[0]["data"].(map[string]any)["MessageId"])
	next := link(t, r.json(t), "next")
	assert.Equal(t, testPublicURL+feed+"?after=1&size=1", next)
	assert.Equal(t, `<`+next+`>; rel="next"`, r.Header().Get("Link"))
	r = f.as(t, lifeManager, http.MethodGet, pathOf(t, next))
	page = r.embedded(t, "events")
	require.Len(t, page, 1)
	assert.Equal(t, lifeOtherUnread, page[0]["data"].(map[string]any)["MessageId"])
	r = f.as(t, lifeManager, http.MethodGet, pathOf(t, link(t, r.json(t), "next")))
	assert.Empty(t, r.embedded(t, "events"))
	assert.Equal(t, testPublicURL+feed+"?after=2&size=1", link(t, r.json(t), "next"), "an empty page continues where it was")

	for _, accept := range []string{"application/hal+xml", "application/xml"} {
		x := f.as(t, lifeManager, http.MethodGet, feed, "Accept", accept)
		require.Equal(t, http.StatusOK, x.Code, x.Body.String())
		requireWellFormedXML(t, x.Body.Bytes())
		assert.Contains(t, x.Body.String(), "<MessageId>"+lifeUnread+"</MessageId>")
	}
	requireProblem(t, f.as(t, lifeManager, http.MethodGet, feed, "Accept", "text/csv"), http.StatusNotAcceptable)

	for _, q := range []string{"after=-1", "after=x", "after=1.5", "size=0", "size=201", "size=ten", "after=99999999999999999999"} {
		p := requireProblem(t, f.as(t, lifeManager, http.MethodGet, feed+"?"+q), http.StatusBadRequest)
		assert.Regexp(t, `^(after|size) must be`, p["detail"], q)
	}
	p := requireProblem(t, fjeToken(t).get(t, f.h, "/api/serviceowner/events/feed?fetch=500"), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "fetch must be")
}

// A reader paging through the feed while changes commit concurrently gets every event once, in order.
func TestEventFeedPagesWithoutGapsOrRepeatsUnderConcurrentWrites(t *testing.T) {
	f := newLifecycleFixture(t)
	var wg sync.WaitGroup
	done := make(chan struct{})
	const rounds = 12
	for _, id := range []string{lifeRead, lifeContended, lifeFiled} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				assert.Equal(t, http.StatusNoContent, f.as(t, lifeManager, http.MethodDelete, lifePath(id)).Code)
				assert.Equal(t, http.StatusOK, f.as(t, lifeManager, http.MethodPut, lifePath(id, "/restore")).Code)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	var seen []string
	next := "/api/" + lifeOrg + "/events?size=5"
	storetest.ReadWhileWriting(done, func() int {
		r := f.as(t, lifeManager, http.MethodGet, next)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		page := r.embedded(t, "events")
		for _, e := range page {
			seen = append(seen, e["sequence"].(string))
		}
		next = pathOf(t, link(t, r.json(t), "next"))
		return len(page)
	})
	require.Len(t, seen, 3*rounds*2)
	for i, s := range seen {
		require.Equal(t, strconv.Itoa(i+1), s, "every event once, in sequence order")
	}
	stored, err := store.New(f.pool).EventsAfter(context.Background(), 0, 1000)
	require.NoError(t, err)
	assert.Len(t, stored, len(seen))
}
