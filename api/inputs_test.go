package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Text no field can hold — a NUL character, invalid UTF-8, more than the field's limit — gets 400 naming
// the field, wherever it comes: a JSON or XML body, a path segment, a query value. Each of these reached
// PostgreSQL before, which refused it as a 500.
func TestTextNoFieldCanHold(t *testing.T) {
	p1 := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser")}
	json := func(h map[string]string) map[string]string {
		out := map[string]string{"Content-Type": "application/hal+json"}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	xml := map[string]string{"Content-Type": "application/xml"}
	for k, v := range p1 {
		xml[k] = v
	}
	long := func(n int) string { return strings.Repeat("å", n) }
	cases := []struct {
		name   string
		req    request
		detail string
	}{
		{"NUL in a user name", request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword", header: json(nil),
			body: `{"UserName":"ingrid\u0000fjellheim","UserPassword":"x"}`}, "UserName holds a NUL character"},
		{"over-long user name", request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword", header: json(nil),
			body: `{"UserName":"` + long(257) + `","UserPassword":"x"}`}, "UserName is longer than 256 characters"},
		{"over-long password", request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword", header: json(nil),
			body: `{"UserName":"ingrid.fjellheim","UserPassword":"` + long(1025) + `"}`}, "UserPassword is longer than 1024 characters"},
		{"NUL in a last name", request{method: http.MethodPost, path: "/api/reportees/reporteeconversion", header: json(p1),
			body: `{"SocialSecurityNumber":"` + ssnP1 + `","LastName":"Fjell\u0000heim"}`}, "LastName holds a NUL character"},
		{"NUL in a role name", request{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/roledefinitions", header: json(p1),
			body: `{"RoleName":"a\u0000b","Rights":[{"ServiceCode":"4711","ServiceEditionCode":1,"Action":"Read"}]}`}, "RoleName holds a NUL character"},
		{"NUL in a nested service code", request{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/roledefinitions", header: json(p1),
			body: `{"RoleName":"ab","_embedded":{"Rights":[{"ServiceCode":"47\u000011","ServiceEditionCode":1,"Action":"Read"}]}}`}, "_embedded.Rights[0].ServiceCode holds a NUL character"},
		{"over-long role description", request{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/roledefinitions", header: json(p1),
			body: `{"RoleName":"ab","RoleDescription":"` + long(1001) + `","Rights":[{"ServiceCode":"4711","ServiceEditionCode":1,"Action":"Read"}]}`}, "RoleDescription is longer than 1000 characters"},
		{"over-long last name in XML", request{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/delegations", header: xml,
			body: authzDelegation(authzPerson(ssnP5, long(257)), roleREGNA)}, "LastName is longer than 256 characters"},
		{"NUL in XML text", request{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/delegations", header: xml,
			body: authzDelegation(authzPerson(ssnP5, "Brek&#0;ke"), roleREGNA)}, "U+0000"},
		{"NUL in {who}", request{path: "/api/my%00/messages", header: p1}, "path segment 2 holds a NUL character"},
		{"NUL in a message id", request{path: "/api/my/messages/a%00b", header: p1}, "path segment 4 holds a NUL character"},
		{"NUL in a user name in the path", request{method: http.MethodDelete, path: "/api/ingrid%00/authorization/roles/1", header: p1}, "path segment 2 holds a NUL character"},
		{"invalid UTF-8 in the path", request{path: "/api/my/messages/%ff", header: p1}, "path segment 4 is not valid UTF-8"},
		{"over-long path segment", request{path: "/api/" + strings.Repeat("a", 257) + "/messages", header: p1}, "path segment 2 is longer than 256 bytes"},
		{"NUL in a query value", request{path: "/api/my/messages?$filter=ServiceCode%20eq%20%274711%00%27", header: p1}, "query parameter $filter holds a NUL character"},
		{"NUL in a query value of an open route", request{path: "/api/metadata?language=1044%00"}, "query parameter language holds a NUL character"},
		{"invalid UTF-8 in a query value", request{path: "/api/reportees?serviceCode=%ff", header: p1}, "query parameter serviceCode is not valid UTF-8"},
		{"malformed query string", request{path: "/api/reportees?serviceCode=%zz", header: p1}, "the query string is malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := requireProblem(t, do(t, shared, tc.req), http.StatusBadRequest)
			assert.Contains(t, p["detail"], tc.detail)
		})
	}
}

// The form-task bodies are held to the same rules: the check runs where every JSON body is decoded.
func TestFormTaskTextNoFieldCanHold(t *testing.T) {
	srv, _ := formTaskServer(t)
	r := sendAs(t, srv, ssnP1, http.MethodPost, "/api/my/messages", `{"Type":"FormTask","ServiceCode":"47\u000011","ServiceEdition":2}`)
	p := requireProblem(t, r, http.StatusBadRequest)
	assert.Contains(t, p["detail"], "ServiceCode holds a NUL character")
	r = sendAs(t, srv, ssnP1, http.MethodPost, "/api/my/messages", putBody(t, []map[string]any{mainForm("<a>\u0000</a>")}, nil))
	p = requireProblem(t, r, http.StatusBadRequest)
	assert.Contains(t, p["detail"], "_embedded.forms[0].FormData holds a NUL character")
}

// An Origin header no registered origin can be (invalid UTF-8, which PostgreSQL refuses to compare) is
// simply not allowed, on a request and on a preflight.
func TestUnreadableOrigin(t *testing.T) {
	r := get(t, shared, "/api/metadata", "Origin", "https://\xff.example")
	assert.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Empty(t, r.Header().Get("Access-Control-Allow-Origin"))
	r = do(t, shared, request{method: http.MethodOptions, path: "/api/metadata",
		header: map[string]string{"Origin": "https://\xff.example", "Access-Control-Request-Method": "GET"}})
	assert.Equal(t, http.StatusNoContent, r.Code)
	assert.Empty(t, r.Header().Get("Access-Control-Allow-Origin"))
}
