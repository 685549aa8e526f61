package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The role requirements of a service: the platform role definitions that grant a right on it, each with
// only the rights it grants there; open like all metadata.
func TestRoleRequirementsOfAService(t *testing.T) {
	r := get(t, shared, "/api/metadata/rolerequirements?serviceCode=6120&serviceEditionCode=1")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	reqs := r.embedded(t, "rolerequirements")
	var codes []string
	for _, d := range reqs {
		codes = append(codes, d["RoleDefinitionCode"].(string))
		for _, right := range d["Rights"].([]any) {
			assert.Equal(t, "6120", right.(map[string]any)["ServiceCode"])
		}
	}
	assert.Equal(t, []string{"HADM", "UTINN", "STATI", "DAGL"}, codes)
	stati := reqs[2]
	assert.Equal(t, "Altinn", stati["RoleType"])
	var actions []string
	for _, right := range stati["Rights"].([]any) {
		actions = append(actions, right.(map[string]any)["Action"].(string))
	}
	assert.Equal(t, []string{"Read", "Write", "Sign", "ArchiveRead"}, actions)
	assert.Equal(t, false, stati["Rights"].([]any)[2].(map[string]any)["IsDelegatable"])
	assert.Equal(t, "http://postbox.test/api/metadata/formtask/6120/1", link(t, r.json(t), "service"))

	// A local role is its reportee's own: never shown here, even when it grants a right on the service.
	srv, _ := newServer(t)
	created := authzDo(t, srv, ssnP1, http.MethodPost, "/api/"+orgO1+"/authorization/roledefinitions", "application/json",
		localRoleBody("Lønnsstatistikk", localRight("6120", "1", "Read")))
	require.Equal(t, http.StatusCreated, created.Code, created.Body.String())
	again := get(t, srv, "/api/metadata/rolerequirements?serviceCode=6120&serviceEditionCode=1")
	require.Equal(t, http.StatusOK, again.Code)
	assert.Len(t, again.embedded(t, "rolerequirements"), 4)

	// Paged like every list.
	page := get(t, shared, "/api/metadata/rolerequirements?serviceCode=6120&serviceEditionCode=1&$top=1&$skip=1")
	require.Equal(t, http.StatusOK, page.Code, page.Body.String())
	require.Len(t, page.embedded(t, "rolerequirements"), 1)
	assert.Equal(t, "UTINN", page.embedded(t, "rolerequirements")[0]["RoleDefinitionCode"])
}

func TestRoleRequirementsRefusals(t *testing.T) {
	for query, detail := range map[string]string{
		"":                                          "serviceCode is required",
		"?serviceEditionCode=1":                     "serviceCode is required",
		"?serviceCode=6120":                         "serviceEditionCode is required",
		"?serviceCode=6120&serviceEditionCode=x":    "serviceEditionCode must be a positive integer",
		"?serviceCode=6120&serviceEditionCode=0":    "serviceEditionCode must be a positive integer",
		"?serviceCode=6120&serviceEditionCode=-1":   "serviceEditionCode must be a positive integer",
		"?serviceCode=61%2720&serviceEditionCode=1": `serviceCode "61'20" is not a service code (letters, digits, '-' or '_', at most 64)`,
	} {
		p := requireProblem(t, get(t, shared, "/api/metadata/rolerequirements"+query), http.StatusBadRequest)
		assert.Equal(t, detail, p["detail"], query)
	}
	p := requireProblem(t, get(t, shared, "/api/metadata/rolerequirements?serviceCode=6120&serviceEditionCode=2"), http.StatusNotFound)
	assert.Equal(t, "there is no service 6120 edition 2", p["detail"])
}
