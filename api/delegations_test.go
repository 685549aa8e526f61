package api_test

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The receiver routes of the authorization area (Altinn 2's delegation routes): what was delegated to one
// receiver, its effective roles and rights, whether it may read an attachment, and removing a role or a
// right from it. In the dataset P1 is main administrator of O1, P3 its access manager (with REGNA), P4
// holds INNSK only, and P5 holds nothing for O1.

func receiverURL(who, route string, parts ...any) string {
	p := "/api/" + who + "/authorization/" + route
	for _, part := range parts {
		p += "/" + fmt.Sprint(part)
	}
	return p
}

func receiverCodes(t *testing.T, list []any, field string) []string {
	t.Helper()
	var out []string
	for _, v := range list {
		out = append(out, fmt.Sprint(v.(map[string]any)[field]))
	}
	return out
}

func TestReceiverDelegationsAndEffectiveRights(t *testing.T) {
	srv, _ := newServer(t)
	p1, p3, p5 := selfReporteeID(t, ssnP1), selfReporteeID(t, ssnP3), selfReporteeID(t, ssnP5)
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA)).Code)
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzOrg(orgO3, "Nordkyst Sjømat ASA"), rolePOSTI)).Code)

	// What was delegated to P5: the role and the rights it gives, the person by name, never by number.
	for _, caller := range []string{ssnP1, ssnP3} {
		r := authzDo(t, srv, caller, http.MethodGet, receiverURL(orgO1, "delegations", p5), "", "")
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		v := r.json(t)
		assert.Equal(t, p5, v["RightHolderId"])
		assert.Equal(t, "Eivind Brekke", v["Name"])
		assert.Equal(t, "Person", v["Type"])
		assert.NotContains(t, r.Body.String(), ssnP5)
		assert.Equal(t, []string{fmt.Sprint(roleREGNA)}, receiverCodes(t, v["Roles"].([]any), "RoleDefinitionId"))
		assert.Len(t, v["Rights"], 7)
		assert.Equal(t, "http://postbox.test"+receiverURL(orgO1, "delegations", p5, "roles"), link(t, v, "roles"))
	}
	roles := authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5, "roles"), "", "")
	require.Equal(t, http.StatusOK, roles.Code, roles.Body.String())
	require.Len(t, roles.embedded(t, "roles"), 1)
	assert.Equal(t, "Ingrid Fjellheim", roles.embedded(t, "roles")[0]["Delegator"])
	rights := authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5, "rights")+"?$filter=ServiceCode%20eq%20'7001'", "", "")
	require.Equal(t, http.StatusOK, rights.Code, rights.Body.String())
	assert.Equal(t, []string{"Read"}, receiverCodes(t, []any{rights.embedded(t, "rights")[0]}, "Action"))

	// An organization receiver, by organization number or reportee id.
	org := authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", orgO3), "", "")
	require.Equal(t, http.StatusOK, org.Code, org.Body.String())
	assert.Equal(t, "Organization", org.json(t)["Type"])
	assert.Equal(t, orgO3, org.json(t)["OrganizationNumber"])

	// Effective roles and rights: P3's delegated roles; P1 for itself has the automatic base role, which
	// no one delegated to it.
	eff := authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "reportee", p3), "", "")
	require.Equal(t, http.StatusOK, eff.Code, eff.Body.String())
	assert.ElementsMatch(t, []string{fmt.Sprint(roleADMAI), fmt.Sprint(roleREGNA)}, receiverCodes(t, eff.json(t)["Roles"].([]any), "RoleDefinitionId"))
	self := authzDo(t, srv, ssnP1, http.MethodGet, receiverURL("my", "reportee", p1), "", "")
	require.Equal(t, http.StatusOK, self.Code, self.Body.String())
	assert.Equal(t, []string{fmt.Sprint(roleHADM)}, receiverCodes(t, self.json(t)["Roles"].([]any), "RoleDefinitionId"))
	assert.Len(t, self.json(t)["Rights"], 32)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL("my", "delegations", p1), "", ""), http.StatusNotFound)

	// Refusals. Someone who is not access manager gets the same 403 whatever the receiver.
	for _, receiver := range []string{p5, p3, "r999999", ssnP5, "abc"} {
		for _, route := range []string{"delegations", "reportee"} {
			p := requireProblem(t, authzDo(t, srv, ssnP4, http.MethodGet, receiverURL(orgO1, route, receiver), "", ""), http.StatusForbidden)
			assert.Equal(t, "urn:postbox:problem:not-access-manager", p["type"])
		}
		p := requireProblem(t, authzDo(t, srv, ssnP4, http.MethodGet, receiverURL(orgO1, "delegations", receiver, "roles"), "", ""), http.StatusForbidden)
		assert.Equal(t, "urn:postbox:problem:not-access-manager", p["type"])
	}
	// An access manager learns only that there is nothing for this receiver: the same 404 whether it exists.
	for _, receiver := range []string{"r999999", selfReporteeID(t, ssnP2), orgO5, "999999999"} {
		for _, route := range []string{"delegations", "reportee"} {
			p := requireProblem(t, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, route, receiver), "", ""), http.StatusNotFound)
			assert.Equal(t, fmt.Sprintf("%q holds no role for %q", receiver, orgO1), p["detail"])
		}
		requireProblem(t, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", receiver, "rights"), "", ""), http.StatusNotFound)
	}
	// A national identity number or anything else that is no receiver id is 400.
	for _, receiver := range []string{ssnP5, "abc", "r", "31012345"} {
		p := requireProblem(t, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", receiver), "", ""), http.StatusBadRequest)
		assert.Contains(t, p["detail"], "receiverId must be a reportee id")
	}
	// The delegations scope reads them; a scope of another area does not.
	assert.Equal(t, http.StatusOK, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5), "", "", "platform:delegations.read").Code)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5), "", "", "platform:instances.read"), http.StatusForbidden)
}

// firstAttachmentID is the id of the first attachment of a message of O1, as P1 sees it.
func firstAttachmentID(t *testing.T, message string) string {
	t.Helper()
	m := getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages/"+message)
	require.Equal(t, http.StatusOK, m.Code, m.Body.String())
	return path.Base(m.json(t)["_links"].(map[string]any)["attachment"].([]any)[0].(map[string]any)["href"].(string))
}

func TestReceiverAttachmentAccess(t *testing.T) {
	p1, p3, p4 := selfReporteeID(t, ssnP1), selfReporteeID(t, ssnP3), selfReporteeID(t, ssnP4)
	ask := func(caller, who, receiver, message, attachment string) response {
		return authzDo(t, shared, caller, http.MethodGet, receiverURL(who, "attachments", receiver)+"?messageId="+message+"&attachmentId="+attachment, "", "")
	}
	archived, unread := firstAttachmentID(t, "a3100297"), firstAttachmentID(t, "a3100150") // 4711/2 archived; 7102 unread correspondence
	cases := []struct {
		receiver, message, attachment, action string
		authorized                            bool
	}{
		{p3, "a3100297", archived, "ArchiveRead", true}, // REGNA: ArchiveRead on 4711/2
		{p4, "a3100297", archived, "ArchiveRead", false},
		{p4, "a3100150", unread, "Read", true}, // INNSK: Read on 7102
		{p3, "a3100150", unread, "Read", false},
		{p1, "a3100150", unread, "Read", true},
	}
	for _, tc := range cases {
		r := ask(ssnP1, orgO1, tc.receiver, tc.message, tc.attachment)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		v := r.json(t)
		assert.Equal(t, tc.authorized, v["IsAuthorized"], "%s on %s", tc.receiver, tc.message)
		assert.Equal(t, tc.action, v["Action"])
		assert.Equal(t, tc.message, v["MessageId"])
		assert.Equal(t, "http://postbox.test/api/"+orgO1+"/messages/"+tc.message+"/attachments/"+tc.attachment, link(t, v, "attachment"))
	}
	// A person may read everything of their own mailbox (the automatic base role); a message of another
	// reportee is not in it.
	m := getAs(t, shared, ssnP1, "/api/my/messages/a3101242?markAsRead=false")
	require.Equal(t, http.StatusOK, m.Code, m.Body.String())
	own := path.Base(m.json(t)["_links"].(map[string]any)["attachment"].([]any)[0].(map[string]any)["href"].(string))
	mine := ask(ssnP1, "my", p1, "a3101242", own)
	require.Equal(t, http.StatusOK, mine.Code, mine.Body.String())
	assert.Equal(t, true, mine.json(t)["IsAuthorized"])
	requireProblem(t, ask(ssnP1, "my", p1, "a3100150", unread), http.StatusNotFound)

	// Refusals: the parameters, a message the caller does not see (P3 cannot read 7102), an attachment of
	// another message, and a caller who is not access manager.
	for query, status := range map[string]int{
		"":                                           http.StatusBadRequest,
		"?attachmentId=" + archived:                  http.StatusBadRequest,
		"?messageId=a3100297":                        http.StatusBadRequest,
		"?messageId=x1&attachmentId=1":               http.StatusBadRequest,
		"?messageId=a3100297&attachmentId=abc":       http.StatusBadRequest,
		"?messageId=a3100297&attachmentId=0":         http.StatusBadRequest,
		"?messageId=a9999999&attachmentId=1":         http.StatusNotFound,
		"?messageId=a3100297&attachmentId=" + unread: http.StatusNotFound,
	} {
		requireProblem(t, authzDo(t, shared, ssnP1, http.MethodGet, receiverURL(orgO1, "attachments", p3)+query, "", ""), status)
	}
	// The parameters are read before the receiver is looked up.
	requireProblem(t, ask(ssnP1, orgO1, "r999999999", "x1", "1"), http.StatusBadRequest)
	requireProblem(t, ask(ssnP1, orgO1, "r999999999", "a3100297", archived), http.StatusNotFound)
	p := requireProblem(t, ask(ssnP3, orgO1, p4, "a3100150", unread), http.StatusNotFound)
	assert.Equal(t, `there is no message a3100150 for "`+orgO1+`"`, p["detail"])
	assert.Equal(t, http.StatusOK, ask(ssnP3, orgO1, p4, "a3100297", archived).Code)
	requireProblem(t, ask(ssnP4, orgO1, p3, "a3100297", archived), http.StatusForbidden)
	requireProblem(t, ask(ssnP1, orgO1, selfReporteeID(t, ssnP5), "a3100297", archived), http.StatusNotFound)
}

// auditActions lists the actions of the audit log of who, newest first.
func auditActions(t *testing.T, h http.Handler, who string) []map[string]any {
	t.Helper()
	r := authzDo(t, h, ssnP1, http.MethodGet, "/api/"+who+"/authorization/auditlog", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	return r.embedded(t, "auditlog")
}

func requireUnchanged(t *testing.T, pool *pgxpool.Pool, before string) {
	t.Helper()
	require.Equal(t, before, authzRolesSnapshot(t, pool), "a refused removal changed the stored roles or the audit log")
}

func TestReceiverRoleRemoval(t *testing.T) {
	srv, pool := newServer(t)
	p1, p5 := selfReporteeID(t, ssnP1), selfReporteeID(t, ssnP5)
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA, roleUTINN)).Code)
	regna, utinn := authzRoleID(t, srv, ssnP5, orgO1, roleREGNA), authzRoleID(t, srv, ssnP5, orgO1, roleUTINN)
	before := authzRolesSnapshot(t, pool)
	del := func(caller, path string) response { return authzDo(t, srv, caller, http.MethodDelete, path, "", "") }

	// Someone who is not access manager: the same 403 for a role that is there, one that is not, and garbage.
	for _, p := range []string{receiverURL(orgO1, "delegations", p5, "roles", regna), receiverURL(orgO1, "delegations", p5, "roles", 987654),
		receiverURL(orgO1, "delegations", "r999999", "roles", regna), receiverURL(orgO1, "delegations", p5, "roles", "abc"),
		receiverURL(orgO1, "delegations") + fmt.Sprintf("?receiverId=%s&roleId=%d", p5, regna)} {
		pr := requireProblem(t, del(ssnP4, p), http.StatusForbidden)
		assert.Equal(t, "urn:postbox:problem:not-access-manager", pr["type"], p)
	}
	// The access manager P3 holds REGNA but not UTINN: it may not take UTINN away, as it may not give it.
	pr := requireProblem(t, del(ssnP3, receiverURL(orgO1, "delegations", p5, "roles", utinn)), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:role-not-held", pr["type"])
	// Not there: an unknown role, garbage, a role of another holder or reportee; a register role is kept.
	for _, p := range []string{receiverURL(orgO1, "delegations", p5, "roles", 987654), receiverURL(orgO1, "delegations", p5, "roles", "abc"),
		receiverURL(orgO1, "delegations", p5, "roles", 50006), receiverURL(orgO1, "delegations", "r999999", "roles", regna)} {
		requireProblem(t, del(ssnP1, p), http.StatusNotFound)
	}
	requireProblem(t, del(ssnP1, receiverURL(orgO2, "delegations", p5, "roles", regna)), http.StatusForbidden) // P1 manages O1, not O2
	pr = requireProblem(t, del(ssnP1, receiverURL(orgO1, "delegations", p1, "roles", 50001)), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:role-from-register", pr["type"])
	// The query form names exactly one thing to remove.
	for _, q := range []string{"", "?roleId=1", "?receiverId=" + p5, fmt.Sprintf("?receiverId=%s&roleId=%d&authzRuleId=1", p5, regna)} {
		requireProblem(t, del(ssnP1, receiverURL(orgO1, "delegations")+q), http.StatusBadRequest)
	}
	requireUnchanged(t, pool, before)

	// P3 takes REGNA away (query form), the main administrator UTINN (path form): 204, and P5 loses O1.
	r := del(ssnP3, receiverURL(orgO1, "delegations")+fmt.Sprintf("?receiverId=%s&roleId=%d", p5, regna))
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Empty(t, r.Body.String())
	r = del(ssnP1, receiverURL(orgO1, "delegations", p5, "roles", utinn))
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Nil(t, authzMailboxServices(t, srv, ssnP5, orgO1))
	requireProblem(t, del(ssnP1, receiverURL(orgO1, "delegations", p5, "roles", utinn)), http.StatusNotFound)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5), "", ""), http.StatusNotFound)

	entries := auditActions(t, srv, orgO1)
	require.GreaterOrEqual(t, len(entries), 2)
	assert.Equal(t, "DeleteRole", entries[0]["Action"])
	assert.EqualValues(t, utinn, entries[0]["RoleId"])
	assert.Equal(t, "Ingrid Fjellheim", entries[0]["Actor"])
	assert.Equal(t, "DeleteRole", entries[1]["Action"])
	assert.EqualValues(t, regna, entries[1]["RoleId"])
	assert.Equal(t, "Sigrid Haugland", entries[1]["Actor"])
	assert.Equal(t, "Eivind Brekke", entries[1]["RightHolder"])
}

// oneRightRole makes a local role of O1 that gives only Read on edition 1 of service, and returns its id.
func oneRightRole(t *testing.T, h http.Handler, name, service string) int {
	t.Helper()
	created := authzDo(t, h, ssnP1, http.MethodPost, "/api/"+orgO1+"/authorization/roledefinitions", "application/json",
		localRoleBody(name, localRight(service, "1", "Read")))
	require.Equal(t, http.StatusCreated, created.Code, created.Body.String())
	var id int
	_, err := fmt.Sscan(path.Base(created.Header().Get("Location")), &id)
	require.NoError(t, err)
	return id
}

func TestReceiverRightRemoval(t *testing.T) {
	srv, pool := newServer(t)
	p5 := selfReporteeID(t, ssnP5)
	local := oneRightRole(t, srv, "Lønnsstatistikk, lese", "6120")
	delegateBoth := func() {
		require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), local)).Code)
	}
	delegateBoth()
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA)).Code)
	rightID := func(code, action string) string {
		r := authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5, "rights"), "", "")
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		for _, right := range r.embedded(t, "rights") {
			if right["ServiceCode"] == code && right["Action"] == action {
				return fmt.Sprint(int64(right["RightID"].(float64)))
			}
		}
		return ""
	}
	statistics, accounts := rightID("6120", "Read"), rightID("4711", "Write")
	require.NotEmpty(t, statistics)
	require.NotEmpty(t, accounts)
	before := authzRolesSnapshot(t, pool)
	del := func(caller, path string) response { return authzDo(t, srv, caller, http.MethodDelete, path, "", "") }

	// A right that comes with a role giving other rights too is not taken alone: 409, naming the role.
	pr := requireProblem(t, del(ssnP1, receiverURL(orgO1, "delegations", p5, "rights", accounts)), http.StatusConflict)
	assert.Equal(t, "urn:postbox:problem:right-comes-with-role", pr["type"])
	assert.Contains(t, pr["detail"], "REGNA")
	// P3 does not hold the local role: it may not take its right away.
	pr = requireProblem(t, del(ssnP3, receiverURL(orgO1, "rights", p5, "rights", statistics)), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:role-not-held", pr["type"])
	for _, p := range []string{receiverURL(orgO1, "rights", p5, "rights", statistics), receiverURL(orgO1, "delegations", p5, "rights", 987654),
		receiverURL(orgO1, "delegations", "r999999", "rights", statistics)} {
		pr = requireProblem(t, del(ssnP4, p), http.StatusForbidden)
		assert.Equal(t, "urn:postbox:problem:not-access-manager", pr["type"])
	}
	for _, p := range []string{receiverURL(orgO1, "delegations", p5, "rights", 987654), receiverURL(orgO1, "delegations", p5, "rights", "abc"),
		receiverURL(orgO1, "rights", "r999999", "rights", statistics)} {
		requireProblem(t, del(ssnP1, p), http.StatusNotFound)
	}
	requireProblem(t, del(ssnP1, receiverURL(orgO1, "rights", ssnP5, "rights", statistics)), http.StatusBadRequest)
	requireUnchanged(t, pool, before)

	// The main administrator takes the right (the Altinn 2 path under rights): the role that gave only it
	// is gone, REGNA stays.
	r := del(ssnP1, receiverURL(orgO1, "rights", p5, "rights", statistics))
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Empty(t, rightID("6120", "Read"))
	assert.NotEmpty(t, rightID("4711", "Write"))
	requireProblem(t, del(ssnP1, receiverURL(orgO1, "delegations", p5, "rights", statistics)), http.StatusNotFound)
	e := auditActions(t, srv, orgO1)[0]
	assert.Equal(t, "DeleteRight", e["Action"])
	assert.Equal(t, statistics, fmt.Sprint(e["RightID"]))
	assert.Equal(t, "Eivind Brekke", e["RightHolder"])
	assert.Contains(t, e["Summary"], "Read on 6120/1")

	// The query form, once more.
	delegateBoth()
	r = del(ssnP1, receiverURL(orgO1, "delegations")+"?receiverId="+p5+"&authzRuleId="+statistics)
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Empty(t, rightID("6120", "Read"))
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM authorization_audit WHERE action = 'DeleteRight'`).Scan(&n))
	assert.Equal(t, 2, n)
}

// Removals racing for one role or one right: exactly one takes it, the others find nothing there (404),
// and exactly one audit entry is written for each.
func TestReceiverRemovalsRace(t *testing.T) {
	srv, pool := newServer(t)
	p5 := selfReporteeID(t, ssnP5)
	local := oneRightRole(t, srv, "Skatteforhold, lese", "7102")
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA, local)).Code)
	regna := authzRoleID(t, srv, ssnP5, orgO1, roleREGNA)
	var rightID int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM role_definition_rights WHERE role_definition_id = $1`, local).Scan(&rightID))

	header := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser")}
	got := race(t, srv, header, 4, []lifecycleCall{
		{http.MethodDelete, receiverURL(orgO1, "delegations", p5, "roles", regna)},
		{http.MethodDelete, receiverURL(orgO1, "delegations") + fmt.Sprintf("?receiverId=%s&roleId=%d", p5, regna)},
		{http.MethodDelete, receiverURL(orgO1, "delegations", p5, "rights", rightID)},
		{http.MethodDelete, receiverURL(orgO1, "rights", p5, "rights", rightID)},
	})
	assert.Equal(t, 1, got[0]+got[1], "the role is taken once")
	assert.Equal(t, 1, got[2]+got[3], "the right is taken once")
	var roles, rights int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE action = 'DeleteRole'),
		count(*) FILTER (WHERE action = 'DeleteRight') FROM authorization_audit`).Scan(&roles, &rights))
	assert.Equal(t, []int{1, 1}, []int{roles, rights})
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5), "", ""), http.StatusNotFound)
}
