package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoleDefinitionList(t *testing.T) {
	want := []float64{85, 86, 87, 88, 89, 90, 91, 93, 94} // every Altinn role; DAGL (92) is External
	for _, mt := range []string{"application/hal+json", "application/json"} {
		r := get(t, shared, "/api/"+orgO1+"/authorization/roledefinitions", append(bearer(t, ssnP3), "Accept", mt)...)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		assert.True(t, strings.HasPrefix(r.Body.String(), "["), "a plain JSON array in %s", mt)
		var defs []map[string]any
		require.NoError(t, json.Unmarshal(r.Body.Bytes(), &defs))
		var ids []float64
		for _, d := range defs {
			ids = append(ids, d["RoleDefinitionId"].(float64))
			assert.Equal(t, "Altinn", d["RoleType"])
			assert.NotEmpty(t, d["RoleName"])
			assert.Contains(t, d, "RoleDescription")
			assert.NotContains(t, d, "Rights", "the list view has no rights")
			assert.Equal(t, fmt.Sprintf("http://postbox.test/api/%s/authorization/roledefinitions/%v", orgO1, d["RoleDefinitionId"]), link(t, d, "self"))
		}
		assert.Equal(t, want, ids)
	}
	for _, mt := range []string{"application/hal+xml", "application/xml"} {
		r := get(t, shared, "/api/my/authorization/RoleDefinitions/", append(bearer(t, ssnP2), "Accept", mt)...)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		requireWellFormedXML(t, r.Body.Bytes())
		assert.Contains(t, r.Body.String(), "<resources>")
		assert.Contains(t, r.Body.String(), `<resource href="http://postbox.test/api/my/authorization/roledefinitions/88">`)
		assert.Equal(t, len(want), strings.Count(r.Body.String(), "<RoleDefinitionId>"))
	}
	requireProblem(t, authzDo(t, shared, ssnP2, http.MethodGet, "/api/"+orgO1+"/authorization/roledefinitions", "", ""), http.StatusForbidden)
}

func TestRoleDefinitionWithRights(t *testing.T) {
	r := authzDo(t, shared, ssnP4, http.MethodGet, "/api/"+orgO1+"/authorization/roledefinitions/91", "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	d := r.json(t)
	assert.EqualValues(t, roleSTATI, d["RoleDefinitionId"])
	assert.Equal(t, "Statistikkansvarlig", d["RoleName"])
	rights := d["Rights"].([]any)
	require.Len(t, rights, 4)
	sign := rights[2].(map[string]any)
	assert.Equal(t, "Sign", sign["Action"])
	assert.Equal(t, "6120", sign["ServiceCode"])
	assert.EqualValues(t, 1, sign["ServiceEditionCode"])
	assert.Equal(t, false, sign["IsDelegatable"])
	assert.Equal(t, "Service", sign["RightType"])
	assert.Equal(t, "RoleTypeRights", sign["RightSourceType"])
	assert.Greater(t, sign["RightID"], float64(0))

	// A role without rights shows an empty list; the External role of the register can be read too.
	r = authzDo(t, shared, ssnP4, http.MethodGet, "/api/"+orgO1+"/authorization/roledefinitions/86", "", "")
	require.Equal(t, http.StatusOK, r.Code)
	assert.Equal(t, []any{}, r.json(t)["Rights"])
	r = authzDo(t, shared, ssnP4, http.MethodGet, "/api/"+orgO1+"/authorization/roledefinitions/92", "", "")
	require.Equal(t, http.StatusOK, r.Code)
	assert.Equal(t, "External", r.json(t)["RoleType"])

	r = get(t, shared, "/api/"+orgO1+"/authorization/roledefinitions/88", append(bearer(t, ssnP3), "Accept", "application/xml")...)
	require.Equal(t, http.StatusOK, r.Code)
	requireWellFormedXML(t, r.Body.Bytes())
	assert.Contains(t, r.Body.String(), `<resource href="http://postbox.test/api/`+orgO1+`/authorization/roledefinitions/88">`)
	assert.Contains(t, r.Body.String(), `<Rights><Right><RightID>`)

	for _, id := range []string{"987654", "0", "abc"} {
		requireProblem(t, authzDo(t, shared, ssnP4, http.MethodGet, "/api/"+orgO1+"/authorization/roledefinitions/"+id, "", ""), http.StatusNotFound)
	}
}

func localRoleBody(name string, rights ...string) string {
	return fmt.Sprintf(`{"RoleName":%q,"RoleDescription":"Made by the tests","_embedded":{"Rights":[%s]}}`, name, strings.Join(rights, ","))
}

func localRight(code, edition, action string) string {
	return fmt.Sprintf(`{"ServiceCode":%q,"ServiceEditionCode":%s,"Action":%q}`, code, edition, action)
}

// A local role belongs to its reportee, grants nothing until it is delegated, and every change to it
// reaches its holders at once.
func TestLocalRoles(t *testing.T) {
	srv, _ := newServer(t)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"

	// The access manager creates a local role; the archive actions have their creation names.
	r := authzDo(t, srv, ssnP3, http.MethodPost, defs+"/", "application/hal+json",
		localRoleBody("Lønn og innsyn", localRight("4711", `"2"`, "Read"), localRight("4711", "2", "ReadArchive"), localRight("4711", `"2"`, "Read")))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	assert.Empty(t, r.Body.String())
	location := r.Header().Get("Location")
	require.Regexp(t, `^http://postbox.test/api/`+orgO1+`/authorization/roledefinitions/[0-9]+$`, location)
	self := pathOf(t, location)
	var id int
	_, err := fmt.Sscanf(self, "/api/"+orgO1+"/authorization/roledefinitions/%d", &id)
	require.NoError(t, err)

	r = authzDo(t, srv, ssnP3, http.MethodGet, self, "", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	d := r.json(t)
	assert.Equal(t, "Local", d["RoleType"])
	assert.Equal(t, "Lønn og innsyn", d["RoleName"])
	var actions []string
	for _, x := range d["Rights"].([]any) {
		actions = append(actions, x.(map[string]any)["Action"].(string))
	}
	assert.Equal(t, []string{"Read", "ArchiveRead"}, actions, "the same right twice is one right")

	// It is listed for O1, and for no one else.
	r = authzDo(t, srv, ssnP4, http.MethodGet, defs, "", "")
	require.Equal(t, http.StatusOK, r.Code)
	assert.Contains(t, r.Body.String(), `"RoleName":"Lønn og innsyn"`)
	r = authzDo(t, srv, ssnP5, http.MethodGet, "/api/"+orgO4+"/authorization/roledefinitions", "", "")
	require.Equal(t, http.StatusOK, r.Code)
	assert.NotContains(t, r.Body.String(), "Lønn og innsyn")
	requireProblem(t, authzDo(t, srv, ssnP5, http.MethodGet, fmt.Sprintf("/api/%s/authorization/roledefinitions/%d", orgO4, id), "", ""), http.StatusNotFound)

	// It grants nothing until delegated.
	assert.Equal(t, []string{ssnP5, orgO4, orgO6}, authzReportees(t, srv, ssnP5))
	// Only a main administrator may delegate a role nobody holds.
	p := requireProblem(t, authzDelegate(t, srv, ssnP3, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), id)), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:role-not-held", p["type"])
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), id)).Code)
	assert.Equal(t, []string{"4711"}, authzMailboxServices(t, srv, ssnP5, orgO1))
	// Another reportee's local role cannot be delegated.
	requireProblem(t, authzDelegate(t, srv, ssnP5, "my", authzDelegation(authzPerson(ssnP2, "Bakketun"), id)), http.StatusBadRequest)

	// Changing it changes what its holders see at once.
	r = authzDo(t, srv, ssnP1, http.MethodPut, self, "application/json",
		`{"RoleName":"Lønn og post","RoleDescription":"","RoleType":"service","_embedded":{"Rights":[`+
			localRight("4711", "2", "Read")+","+localRight("7001", "1", "read")+`]}}`)
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Equal(t, location, r.Header().Get("Location"))
	assert.ElementsMatch(t, []string{"4711", "7001"}, authzMailboxServices(t, srv, ssnP5, orgO1))
	r = authzDo(t, srv, ssnP3, http.MethodGet, self, "", "")
	require.Equal(t, http.StatusOK, r.Code)
	d = r.json(t)
	assert.Equal(t, "Lønn og post", d["RoleName"])
	assert.Equal(t, "Local", d["RoleType"], "RoleType of the body is ignored")
	rights := d["Rights"].([]any)
	require.Len(t, rights, 2)
	var postRight float64
	for _, x := range rights {
		if m := x.(map[string]any); m["ServiceCode"] == "7001" {
			postRight = m["RightID"].(float64)
		}
	}

	// Deleting one of its rights: 7001 goes from P5's mailbox.
	requireProblem(t, authzDo(t, srv, ssnP4, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/rights/%d", orgO1, int(postRight)), "", ""), http.StatusForbidden)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/rights/%d", orgO4, int(postRight)), "", ""), http.StatusForbidden)
	requireProblem(t, authzDo(t, srv, ssnP1, http.MethodDelete, "/api/"+orgO1+"/authorization/rights/987654321", "", ""), http.StatusNotFound)
	r = authzDo(t, srv, ssnP3, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/rights/%d", orgO1, int(postRight)), "", "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Equal(t, []string{"4711"}, authzMailboxServices(t, srv, ssnP5, orgO1))
	requireProblem(t, authzDo(t, srv, ssnP3, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/rights/%d", orgO1, int(postRight)), "", ""), http.StatusNotFound)
	// A right of a platform role is not deleted: delete the role.
	p3rights := authzDo(t, srv, ssnP3, http.MethodGet, "/api/"+orgO1+"/authorization/rights", "", "").embedded(t, "rights")
	p = requireProblem(t, authzDo(t, srv, ssnP3, http.MethodDelete, fmt.Sprintf("/api/%s/authorization/rights/%v", orgO1, p3rights[0]["RightID"]), "", ""), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:platform-role", p["type"])

	// Platform roles cannot be changed or deleted.
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		p = requireProblem(t, authzDo(t, srv, ssnP1, method, fmt.Sprintf("%s/%d", defs, roleREGNA), "application/json",
			localRoleBody("x", localRight("4711", "1", "Read"))), http.StatusForbidden)
		assert.Equal(t, "urn:postbox:problem:platform-role", p["type"], method)
		requireProblem(t, authzDo(t, srv, ssnP1, method, defs+"/987654", "application/json", localRoleBody("x", localRight("4711", "1", "Read"))), http.StatusNotFound)
	}

	// Deleting it takes the reportee away from its holders at once, and is logged with the delegation it ends.
	requireProblem(t, authzDo(t, srv, ssnP4, http.MethodDelete, self, "", ""), http.StatusForbidden)
	r = authzDo(t, srv, ssnP3, http.MethodDelete, self, "", "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
	assert.Equal(t, []string{ssnP5, orgO4, orgO6}, authzReportees(t, srv, ssnP5))
	assert.Nil(t, authzMailboxServices(t, srv, ssnP5, orgO1))
	requireProblem(t, authzDo(t, srv, ssnP3, http.MethodGet, self, "", ""), http.StatusNotFound)
	requireProblem(t, authzDo(t, srv, ssnP3, http.MethodDelete, self, "", ""), http.StatusNotFound)

	r = authzDo(t, srv, ssnP3, http.MethodGet, "/api/"+orgO1+"/authorization/auditlog", "", "")
	require.Equal(t, http.StatusOK, r.Code)
	var log []string
	for _, e := range r.embedded(t, "auditlog") {
		log = append(log, e["Action"].(string))
		assert.EqualValues(t, id, e["RoleDefinitionId"])
	}
	assert.Equal(t, []string{"DeleteRoleDefinition", "DeleteRole", "DeleteRight", "UpdateRoleDefinition", "DelegateRole", "CreateRoleDefinition"}, log)

	// A person's own local roles live under my, and are deleted there.
	r = authzDo(t, srv, ssnP2, http.MethodPost, "/api/my/authorization/roledefinitions", "application/json", localRoleBody("Regnskapsfører", localRight("5302", "1", "Sign")))
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	own := pathOf(t, r.Header().Get("Location"))
	assert.True(t, strings.HasPrefix(own, "/api/my/authorization/roledefinitions/"), own)
	r = authzDo(t, srv, ssnP2, http.MethodDelete, own, "", "")
	require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
}

func TestLocalRoleRefusals(t *testing.T) {
	srv, pool := newServer(t)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"
	require.Equal(t, http.StatusCreated, authzDo(t, srv, ssnP1, http.MethodPost, defs, "application/json", localRoleBody("Taken", localRight("4711", "1", "Read"))).Code)
	before := authzRolesSnapshot(t, pool)

	cases := []struct {
		name        string
		caller      string
		contentType string
		body        string
		status      int
		errs        []string
	}{
		{"not access manager", ssnP4, "application/json", localRoleBody("X", localRight("4711", "1", "Read")), http.StatusForbidden, nil},
		{"unknown service", ssnP3, "application/json", localRoleBody("X", localRight("9999", "1", "Read")), http.StatusBadRequest,
			[]string{"_embedded.Rights[0]: there is no service 9999 edition 1"}},
		{"unknown edition", ssnP3, "application/json", localRoleBody("X", localRight("4711", "9", "Read")), http.StatusBadRequest,
			[]string{"_embedded.Rights[0]: there is no service 4711 edition 9"}},
		{"unknown action", ssnP3, "application/json", localRoleBody("X", localRight("4711", "1", "Approve")), http.StatusBadRequest,
			[]string{`_embedded.Rights[0].Action "Approve" is not one of Read, Write, Delete, Sign, ReadArchive, DeleteArchive`}},
		{"bad edition", ssnP3, "application/json", localRoleBody("X", localRight("4711", `"first"`, "Read")), http.StatusBadRequest,
			[]string{"_embedded.Rights[0].ServiceEditionCode must be a positive integer"}},
		{"several problems at once", ssnP3, "application/json", `{"_embedded":{"Rights":[{"ServiceEditionCode":1,"Action":"Read"}]}}`, http.StatusBadRequest,
			[]string{"RoleName is required", "_embedded.Rights[0].ServiceCode is required"}},
		{"no rights", ssnP3, "application/json", localRoleBody("X"), http.StatusBadRequest, nil},
		{"name too long", ssnP3, "application/json", localRoleBody(strings.Repeat("x", 101), localRight("4711", "1", "Read")), http.StatusBadRequest, nil},
		{"name taken (in any case)", ssnP3, "application/json", localRoleBody("taken", localRight("4711", "1", "Read")), http.StatusConflict, nil},
		{"wrong type of field", ssnP3, "application/json", `{"RoleName":true}`, http.StatusBadRequest, nil},
		{"a fraction for a string", ssnP3, "application/json", `{"RoleName":5.5}`, http.StatusBadRequest, nil},
		{"a negative number for a string", ssnP3, "application/json", `{"RoleName":"X","RoleDescription":-64}`, http.StatusBadRequest, nil},
		{"an exponent for a string", ssnP3, "application/json", `{"RoleName":"X","RoleDescription":6e4}`, http.StatusBadRequest, nil},
		{"malformed JSON", ssnP3, "application/json", `{"RoleName":`, http.StatusBadRequest, nil},
		{"XML body", ssnP3, "application/xml", `<resource/>`, http.StatusUnsupportedMediaType, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := requireProblem(t, authzDo(t, srv, tc.caller, http.MethodPost, defs, tc.contentType, tc.body), tc.status)
			if tc.errs != nil {
				got := make([]string, 0)
				for _, e := range p["errors"].([]any) {
					got = append(got, e.(string))
				}
				assert.Equal(t, tc.errs, got)
			}
		})
	}
	assert.Equal(t, before, authzRolesSnapshot(t, pool))

	// The problems of a role definition in XML too.
	r := do(t, srv, request{method: http.MethodPost, path: defs, header: map[string]string{"ApiKey": keyAll, "Content-Type": "application/json",
		"Accept": "application/xml", "Authorization": "Bearer " + personToken(t, ssnP3, "platform:roledefinitions.write")},
		body: localRoleBody("X", localRight("9999", "1", "Read"))})
	require.Equal(t, http.StatusBadRequest, r.Code)
	assert.Equal(t, "application/problem+xml; charset=utf-8", r.Header().Get("Content-Type"))
	requireWellFormedXML(t, r.Body.Bytes())
	assert.Contains(t, r.Body.String(), "<error>_embedded.Rights[0]: there is no service 9999 edition 1</error>")
	// The read scope does not write.
	r = authzDo(t, srv, ssnP3, http.MethodPost, defs, "application/json", localRoleBody("Y", localRight("4711", "1", "Read")), "platform:roledefinitions.read")
	requireProblem(t, r, http.StatusForbidden)
}

// A JSON number of digits is taken where the interface writes a string, as the integrators' collection
// sends it ("RoleDescription": 64, "ServiceCode": 4711); the field is named when the value cannot be one.
func TestNumbersForStringFields(t *testing.T) {
	srv, _ := newServer(t)
	defs := "/api/" + orgO1 + "/authorization/roledefinitions"
	r := authzDo(t, srv, ssnP3, http.MethodPost, defs+"/", "application/hal+json",
		`{"RoleName":2024,"RoleDescription":64,"_embedded":{"Rights":[{"ServiceCode":4711,"ServiceEditionCode":2,"Action":"Read"}]}}`)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	d := authzDo(t, srv, ssnP3, http.MethodGet, pathOf(t, r.Header().Get("Location")), "", "").json(t)
	assert.Equal(t, "2024", d["RoleName"])
	assert.Equal(t, "64", d["RoleDescription"])
	right := d["Rights"].([]any)[0].(map[string]any)
	assert.Equal(t, "4711", right["ServiceCode"])

	p := requireProblem(t, authzDo(t, srv, ssnP3, http.MethodPost, defs+"/", "application/hal+json",
		`{"RoleName":"X","_embedded":{"Rights":[{"ServiceCode":47.11,"ServiceEditionCode":2,"Action":"Read"}]}}`), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "_embedded.Rights.ServiceCode")
	assert.Contains(t, p["detail"], "47.11")

	// The reportee conversion takes the identity number as a number too.
	r = authzDo(t, srv, ssnP1, http.MethodPost, "/api/reportees/reporteeconversion", "application/json",
		`{"SocialSecurityNumber":`+ssnP1+`,"LastName":"Fjellheim"}`, "platform:reportees")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, ssnP1, r.json(t)["SocialSecurityNumber"])
}
