package api_test

import (
	"encoding/json"

	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
)

// TestOpenAPIDocumentsEveryRoute is the drift test: every registered route has its entry in routeDocs and
// its operation in the served document, and neither describes a route that is not registered.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	registered := map[string]bool{}
	for _, r := range shared.Routes() {
		registered[r.Method+" "+r.Path] = true
	}
	documented := map[string]bool{}
	for _, k := range api.DocumentedRoutes() {
		documented[k] = true
	}
	for _, r := range shared.Routes() {
		key := r.Method + " " + r.Path
		if !documented[key] {
			t.Errorf("route %s is registered in api/router.go but not documented: add its entry to routeDocs in api/openapi_routes.go, e.g.\n"+
				"\t%q: {Summary: \"<what it does>\", Query: params(...),\n\t\tOK: answerOf(http.StatusOK, \"<what it answers>\", negotiated, <the Go type it writes>{}),\n"+
				"\t\tProblems: statuses(<the 4xx statuses the handler itself answers>)},", key, key)
		}
	}
	for key := range documented {
		if !registered[key] {
			t.Errorf("routeDocs in api/openapi_routes.go documents %s, which api/router.go does not register: remove the entry, or fix its key (\"METHOD /gin/path/:param\")", key)
		}
	}

	assert.Empty(t, api.OpenAPIFaults(shared))

	doc := openAPIDocument(t)
	operations := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			ginPath := path
			for _, part := range strings.Split(path, "/") {
				if strings.HasPrefix(part, "{") {
					ginPath = strings.Replace(ginPath, part, ":"+strings.Trim(part, "{}"), 1)
				}
			}
			operations[strings.ToUpper(method)+" "+ginPath] = true
		}
	}
	for key := range registered {
		assert.True(t, operations[key], "the served document lacks %s", key)
	}
	for key := range operations {
		assert.True(t, registered[key], "the served document describes %s, which is not registered", key)
	}
}

type servedDocument struct {
	OpenAPI    string                                `json:"openapi"`
	Tags       []struct{ Name string }               `json:"tags"`
	Paths      map[string]map[string]servedOperation `json:"paths"`
	Components struct {
		Schemas         map[string]any `json:"schemas"`
		SecuritySchemes map[string]any `json:"securitySchemes"`
	} `json:"components"`
}

type servedOperation struct {
	OperationID string                            `json:"operationId"`
	Tags        []string                          `json:"tags"`
	Summary     string                            `json:"summary"`
	Responses   map[string]json.RawMessage        `json:"responses"`
	Security    []map[string][]string             `json:"security"`
	Idempotent  bool                              `json:"x-postbox-idempotent"`
	RequestBody *struct{ Content map[string]any } `json:"requestBody"`
}

func openAPIDocument(t *testing.T) servedDocument {
	t.Helper()
	r := get(t, shared, "/api/openapi.json")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "application/json; charset=utf-8", r.Header().Get("Content-Type"))
	var doc servedDocument
	require.NoError(t, json.Unmarshal(r.Body.Bytes(), &doc))
	return doc
}

func TestOpenAPIDocumentServedAsJSONAndYAML(t *testing.T) {
	doc := openAPIDocument(t)
	assert.Equal(t, "3.1.0", doc.OpenAPI)

	y := get(t, shared, "/api/openapi.yaml")
	require.Equal(t, http.StatusOK, y.Code)
	assert.Equal(t, "application/yaml; charset=utf-8", y.Header().Get("Content-Type"))
	asJSON, err := yaml.YAMLToJSON(y.Body.Bytes())
	require.NoError(t, err)
	var fromJSON, fromYAML any
	require.NoError(t, json.Unmarshal(get(t, shared, "/api/openapi.json").Body.Bytes(), &fromJSON))
	require.NoError(t, json.Unmarshal(asJSON, &fromYAML))
	assert.Equal(t, fromJSON, fromYAML, "the YAML says what the JSON says")

	// The document is a conditional resource like the others.
	tag := get(t, shared, "/api/openapi.json").Header().Get("ETag")
	require.NotEmpty(t, tag)
	assert.Equal(t, http.StatusNotModified, get(t, shared, "/api/openapi.json", "If-None-Match", tag).Code)

	var tags []string
	for _, tag := range doc.Tags {
		tags = append(tags, tag.Name)
	}
	ids := map[string]string{}
	for path, item := range doc.Paths {
		for method, op := range item {
			where := strings.ToUpper(method) + " " + path
			assert.NotEmpty(t, op.Summary, where)
			assert.NotEqual(t, "undocumented", op.Summary, where)
			if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s and %s share the operationId %s", where, other, op.OperationID)
			}
			ids[op.OperationID] = where
			require.Len(t, op.Tags, 1, where)
			assert.Contains(t, tags, op.Tags[0], "%s: its tag is one of the document's tags", where)
			require.NotNil(t, op.Security, "%s must say who may call it (an empty list for open routes)", where)
		}
	}
}

// TestOpenAPISecurityFollowsTheRouteTable: open routes need nothing; the others the API key with a
// session, a bearer token of one of the route's scopes, or an enterprise certificate.
func TestOpenAPISecurityFollowsTheRouteTable(t *testing.T) {
	doc := openAPIDocument(t)
	for _, r := range shared.Routes() {
		path := r.Path
		for _, part := range strings.Split(path, "/") {
			if strings.HasPrefix(part, ":") {
				path = strings.Replace(path, part, "{"+part[1:]+"}", 1)
			}
		}
		op := doc.Paths[path][strings.ToLower(r.Method)]
		where := r.Method + " " + r.Path
		assert.Equal(t, r.Idempotent, op.Idempotent, where)
		if r.Area == "" {
			assert.Empty(t, op.Security, where)
			continue
		}
		require.Len(t, op.Security, 3, where)
		for _, alternative := range op.Security {
			assert.Contains(t, alternative, "ApiKey", where)
			if scopes, ok := alternative["bearer"]; ok {
				for _, s := range r.Scopes {
					assert.Contains(t, scopes, s, where)
				}
				if len(r.Scopes) > 0 {
					assert.True(t, slices.ContainsFunc(scopes, func(s string) bool { return !slices.Contains(r.Scopes, s) }),
						"%s: the general scopes of the area are listed too", where)
				}
			}
		}
	}
}

// TestOpenAPINegotiatedRoutes: the routes behind content negotiation are found in their handler chains.
func TestOpenAPINegotiatedRoutes(t *testing.T) {
	negotiated := map[string]bool{}
	for _, r := range shared.Routes() {
		negotiated[r.Method+" "+r.Path] = r.Negotiated
	}
	assert.True(t, negotiated["GET /api/metadata"])
	assert.True(t, negotiated["GET /api/:who/messages/:messageId"])
	assert.True(t, negotiated["DELETE /api/:who/authorization/roles/:roleId"], "negotiated by its group")
	assert.True(t, negotiated["GET /api/:who/events"], "negotiated among the feed's media types")
	assert.False(t, negotiated["GET /api/:who/messages/:messageId/print"])
	assert.False(t, negotiated["GET /api/openapi.json"])
}

// TestOpenAPIExamplesMatchTheirSchemas: every example of a JSON answer in the document is an answer the
// document allows, checked as the suite's responses are.
func TestOpenAPIExamplesMatchTheirSchemas(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]struct{ Responses map[string]exampleResponse } `json:"paths"`
		Components struct{ Responses map[string]exampleResponse }                       `json:"components"`
	}
	require.NoError(t, json.Unmarshal(get(t, shared, "/api/openapi.json").Body.Bytes(), &doc))
	checked, resources := 0, 0
	for path, item := range doc.Paths {
		concrete := path
		for _, part := range strings.Split(path, "/") {
			if strings.HasPrefix(part, "{") {
				concrete = strings.Replace(concrete, part, "x1", 1)
			}
		}
		for method, op := range item {
			for status, resp := range op.Responses {
				if resp.Ref != "" {
					resp = doc.Components.Responses[strings.TrimPrefix(resp.Ref, "#/components/responses/")]
				}
				for mediaType, content := range resp.Content {
					if content.Example == nil || !strings.Contains(mediaType, "json") {
						continue
					}
					req := httptest.NewRequest(strings.ToUpper(method), "http://postbox.test"+concrete, nil)
					rec := httptest.NewRecorder()
					rec.Header().Set("Content-Type", mediaType)
					code, err := strconv.Atoi(status)
					require.NoError(t, err)
					rec.WriteHeader(code)
					rec.Write(content.Example)
					checkAgainstDocument(t, req, rec)
					checked++
					resources += strings.Count(string(content.Example), `"_links"`)
				}
			}
		}
	}
	assert.Greater(t, checked, 100, "examples checked")
	assert.Greater(t, resources, 20, "examples of resources checked")
}

type exampleResponse struct {
	Ref     string `json:"$ref"`
	Content map[string]struct {
		Example json.RawMessage `json:"example"`
	} `json:"content"`
}

// The validation result lists an error under ValidationWarnings too (the interface's rule), and the
// document says so where a client reads the answer.
func TestOpenAPISaysWhyErrorsAreAlsoWarnings(t *testing.T) {
	op := openAPIDocument(t).Paths["/api/{who}/messages/{messageId}/validate"]["get"]
	var ok struct{ Description string }
	require.NoError(t, json.Unmarshal(op.Responses["200"], &ok))
	assert.Contains(t, ok.Description, "with errors both ValidationErrors and ValidationWarnings list every error and warning")
}
