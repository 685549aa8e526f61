package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func organizationNumbers(t *testing.T, r response) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	var out []string
	for _, o := range r.embedded(t, "organizations") {
		out = append(out, o["OrganizationNumber"].(string))
	}
	return out
}

// The organizations a caller may represent, by name, with the organization fields of the service-owner
// view and none of its contact data.
func TestOrganizationsTheCallerMayRepresent(t *testing.T) {
	r := getAs(t, shared, ssnP1, "/api/organizations")
	assert.Equal(t, []string{orgO1, orgO2, orgO3}, organizationNumbers(t, r))
	o1 := r.embedded(t, "organizations")[0]
	assert.Equal(t, map[string]any{"Name": "Fjellheim Maskin AS", "OrganizationNumber": orgO1, "Type": "AS",
		"LastChanged": "2024-11-04T13:02:10", "LastConfirmed": "2025-01-20T09:45:00", "_links": o1["_links"]}, o1)
	assert.Equal(t, "http://postbox.test/api/organizations/"+orgO1, link(t, o1, "self"))
	reportee := pathOf(t, link(t, o1, "reportee"))
	assert.Equal(t, http.StatusOK, getAs(t, shared, ssnP1, reportee).Code)
	assert.Equal(t, http.StatusOK, getAs(t, shared, ssnP1, pathOf(t, link(t, o1, "messages"))).Code)
	assert.Contains(t, link(t, r.json(t), "find"), "/api/organizations/{organizationNumber}")

	// A deleted organization its manager may still represent is listed; a person with no roles has none.
	assert.Equal(t, []string{orgO4, orgO6}, organizationNumbers(t, getAs(t, shared, ssnP5, "/api/organizations")))
	assert.Empty(t, organizationNumbers(t, getAs(t, shared, ssnP2, "/api/organizations")))
	// An organization acting for itself represents itself; paging and filters as every list.
	org := get(t, shared, "/api/organizations", "ApiKey", keyAll, "Authorization", "Bearer "+orgToken(t, orgO1, "platform:enduser"))
	assert.Equal(t, []string{orgO1}, organizationNumbers(t, org))
	assert.Equal(t, []string{orgO2}, organizationNumbers(t, getAs(t, shared, ssnP1, "/api/organizations?$skip=1&$top=1")))
	assert.Equal(t, []string{orgO3}, organizationNumbers(t, getAs(t, shared, ssnP1, "/api/organizations?$filter=Type%20eq%20'ASA'")))

	one := getAs(t, shared, ssnP1, "/api/organizations/"+orgO2)
	require.Equal(t, http.StatusOK, one.Code, one.Body.String())
	assert.Equal(t, "BEDR", one.json(t)["Type"])
	assert.Equal(t, "2024-06-18T10:31:00", one.json(t)["LastConfirmed"])
}

// One the caller may not represent is answered like one that does not exist: 404, the same words.
func TestOrganizationNotRepresentedIsNotFound(t *testing.T) {
	for _, number := range []string{orgO5, "999999999", ssnP1, "r50001", "31012345x"} {
		p := requireProblem(t, getAs(t, shared, ssnP1, "/api/organizations/"+number), http.StatusNotFound)
		assert.Equal(t, "there is no organization \""+number+"\" you may represent", p["detail"])
	}
	// Only keys of the reportees area and tokens with the reportees scope.
	requireProblem(t, get(t, shared, "/api/organizations", "ApiKey", keyMailbox, "Authorization", bearer(t, ssnP1)[3]), http.StatusForbidden)
	requireProblem(t, get(t, shared, "/api/organizations", "ApiKey", keyAll, "Authorization", "Bearer "+personToken(t, ssnP1, "platform:instances.read")),
		http.StatusForbidden)
	requireProblem(t, get(t, shared, "/api/organizations", "ApiKey", keyAll), http.StatusUnauthorized)
}
