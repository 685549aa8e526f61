package api_test

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/store/storetest"
)

// outageRequests reach every area of the interface, each needing the database at some point.
func outageRequests(t *testing.T) []request {
	person := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssnP1, "platform:enduser")}
	owner := map[string]string{"ApiKey": keyFJE, "Authorization": "Bearer " + orgToken(t, orgFJE, "platform:serviceowner")}
	xmlPerson := map[string]string{"Accept": "application/hal+xml"}
	for k, v := range person {
		xmlPerson[k] = v
	}
	json := map[string]string{"Content-Type": "application/hal+json"}
	return []request{
		{path: "/api/metadata"},
		{path: "/api/metadata/formtask/4711/1"},
		{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword", header: json,
			body: `{"UserName":"nobody","UserPassword":"wrong"}`},
		{path: "/api/reportees", header: person},
		{path: "/api/my/messagebox", header: person},
		{path: "/api/" + orgO1 + "/messages", header: person},
		{path: "/api/" + orgO1 + "/messages", header: xmlPerson},
		{path: "/api/" + orgO1 + "/messages/a3101102", header: person},
		{path: "/api/" + orgO1 + "/authorization/roles", header: person},
		{path: "/api/" + orgO1 + "/authorization/roledefinitions", header: person},
		{method: http.MethodPost, path: "/api/" + orgO1 + "/authorization/delegations",
			header: map[string]string{"ApiKey": keyAll, "Authorization": person["Authorization"], "Content-Type": "application/xml"},
			body:   authzDelegation(authzPerson(ssnP2, "Nordmann"), roleUTINN)},
		{path: "/api/serviceowner/organizations", header: owner},
		{path: "/api/serviceowner/roledefinitions", header: owner},
	}
}

// requireDatabaseUnavailable checks the answer a request gets while the database is down: 503 with
// Retry-After and a problem of its own, in the format asked for, telling nothing of the database.
func requireDatabaseUnavailable(t *testing.T, req request, r response) {
	t.Helper()
	name := req.method + " " + req.path
	require.Equal(t, http.StatusServiceUnavailable, r.Code, "%s: %s", name, r.Body.String())
	after, err := strconv.Atoi(r.Header().Get("Retry-After"))
	require.NoError(t, err, "%s: Retry-After %q", name, r.Header().Get("Retry-After"))
	assert.Positive(t, after, name)
	var typ string
	if req.header["Accept"] == "application/hal+xml" {
		assert.Equal(t, "application/problem+xml; charset=utf-8", r.Header().Get("Content-Type"), name)
		var p struct {
			Type string `xml:"type"`
		}
		require.NoError(t, xml.Unmarshal(r.Body.Bytes(), &p), name)
		typ = p.Type
	} else {
		typ, _ = requireProblem(t, r, http.StatusServiceUnavailable)["type"].(string)
	}
	assert.Equal(t, "urn:postbox:problem:database-unavailable", typ, name)
	for _, leak := range []string{"SQLSTATE", "SELECT", "postgres", "pgx", "connect", "127.0.0.1", "FATAL"} {
		assert.NotContains(t, r.Body.String(), leak, name)
	}
}

func TestDatabaseUnavailableAnswers503(t *testing.T) {
	t.Run("nothing listens", func(t *testing.T) {
		srv, err := newAPI(storetest.Unreachable(t))
		require.NoError(t, err)
		for _, req := range outageRequests(t) {
			requireDatabaseUnavailable(t, req, do(t, srv, req))
		}
	})

	// Served once with the database up, so that keys, parties and rights are cached, then cut off.
	t.Run("connections terminated and refused", func(t *testing.T) {
		srv, pool := newServer(t)
		requests := outageRequests(t)
		for _, req := range requests {
			r := do(t, srv, req)
			require.Less(t, r.Code, 500, "%s %s with the database up: %s", req.method, req.path, r.Body.String())
		}
		storetest.TakeDown(t, pool)
		for _, req := range requests {
			requireDatabaseUnavailable(t, req, do(t, srv, req))
		}
	})
}

func TestReadyzDependsOnTheDatabaseOnly(t *testing.T) {
	unreachableTemporal := func(t *testing.T) client.Client {
		c, err := client.NewLazyClient(client.Options{HostPort: storetest.UnusedAddr(t)})
		require.NoError(t, err)
		t.Cleanup(c.Close)
		return c
	}
	t.Run("temporal down keeps the API ready for reads", func(t *testing.T) {
		srv, err := newAPIWith(storetest.New(t), unreachableTemporal(t))
		require.NoError(t, err)
		r := get(t, srv, "/readyz")
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		assert.Equal(t, map[string]any{"status": "degraded",
			"checks": map[string]any{"database": "ok", "temporal": "unreachable"}}, r.json(t))
	})
	cases := []struct {
		name     string
		temporal bool
		checks   map[string]any
	}{
		{"database", false, map[string]any{"database": "unreachable", "temporal": "not configured"}},
		{"both", true, map[string]any{"database": "unreachable", "temporal": "unreachable"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var temporal client.Client
			if tc.temporal {
				temporal = unreachableTemporal(t)
			}
			srv, err := newAPIWith(storetest.Unreachable(t), temporal)
			require.NoError(t, err)
			r := get(t, srv, "/readyz")
			p := requireProblem(t, r, http.StatusServiceUnavailable)
			assert.NotEmpty(t, r.Header().Get("Retry-After"))
			assert.Equal(t, "urn:postbox:problem:database-unavailable", p["type"])
			assert.Equal(t, tc.checks, p["checks"])
			assert.Contains(t, p["detail"], "database")
		})
	}
}
