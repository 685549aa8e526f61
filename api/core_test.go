package api_test

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMediaTypes(t *testing.T) {
	cases := []struct {
		accept string
		want   string
	}{
		{"", "application/hal+json"},
		{"*/*", "application/hal+json"},
		{"application/hal+json", "application/hal+json"},
		{"application/json", "application/json"},
		{"application/hal+xml", "application/hal+xml"},
		{"application/xml", "application/xml"},
		{"application/xml;q=0.5, application/json;q=0.9", "application/json"},
		{"text/html, application/xml;q=0.8", "application/xml"},
		{"application/*", "application/hal+json"},
	}
	for _, path := range []string{"/api/metadata", "/api/metadata/formtask/6120/1", "/api/metadata/codelists/Landkoder/2"} {
		for _, tc := range cases {
			r := get(t, shared, path, "Accept", tc.accept)
			require.Equal(t, http.StatusOK, r.Code, "%s %q", path, tc.accept)
			assert.Equal(t, tc.want+"; charset=utf-8", r.Header().Get("Content-Type"), "%s %q", path, tc.accept)
			if strings.HasSuffix(tc.want, "xml") {
				requireWellFormedXML(t, r.Body.Bytes())
			} else {
				r.json(t)
			}
		}
	}
}

func TestNotAcceptable(t *testing.T) {
	for _, accept := range []string{"text/csv", "application/pdf", "application/json;q=0"} {
		p := requireProblem(t, get(t, shared, "/api/metadata", "Accept", accept), http.StatusNotAcceptable)
		assert.Contains(t, p["detail"], "application/hal+json")
	}
}

// The HAL+XML form: the resource's self link is its href, other links are <link> elements, embedded
// resources are nested <resource rel="..."> elements and fields are elements.
func TestHALXMLShape(t *testing.T) {
	type link struct {
		Rel       string `xml:"rel,attr"`
		Href      string `xml:"href,attr"`
		Templated string `xml:"templated,attr"`
	}
	type resource struct {
		XMLName     xml.Name   `xml:"resource"`
		Rel         string     `xml:"rel,attr"`
		Href        string     `xml:"href,attr"`
		Links       []link     `xml:"link"`
		Resources   []resource `xml:"resource"`
		ServiceCode string     `xml:"ServiceCode"`
		ServiceName string     `xml:"ServiceName"`
		ValidFrom   string     `xml:"ValidFrom"`
	}
	r := get(t, shared, "/api/metadata?$top=2", "Accept", "application/hal+xml")
	require.Equal(t, http.StatusOK, r.Code)
	var doc resource
	require.NoError(t, xml.Unmarshal(r.Body.Bytes(), &doc))
	assert.Equal(t, "http://postbox.test/api/metadata?$top=2", doc.Href)
	require.Len(t, doc.Links, 1)
	assert.Equal(t, "next", doc.Links[0].Rel)
	require.Len(t, doc.Resources, 2)
	assert.Equal(t, "metadata", doc.Resources[0].Rel)
	assert.Equal(t, "http://postbox.test/api/metadata/formtask/4711/1", doc.Resources[0].Href)
	assert.Equal(t, "4711", doc.Resources[0].ServiceCode)
	assert.Equal(t, "Årsoppgave for næringsvirksomhet", doc.Resources[0].ServiceName)
	assert.Equal(t, "2019-01-01T00:00:00", doc.Resources[0].ValidFrom)

	single := get(t, shared, "/api/metadata/formtask/6120/1", "Accept", "application/xml")
	require.Equal(t, http.StatusOK, single.Code)
	body := single.Body.String()
	for _, want := range []string{
		`<resource href="http://postbox.test/api/metadata/formtask/6120/1">`,
		`<FormsMetaData><FormMetaData><FormID>13001</FormID>`,
		`<link rel="schema" href="http://postbox.test/api/metadata/formtask/6120/1/forms/4422/38190/xsd" mime-type="application/xml"></link>`,
		`<ProcessSteps><ProcessStep><Name>Utfylling</Name><SecurityLevel>1</SecurityLevel></ProcessStep>`,
		`<AttachmentRules><AttachmentRule><AttachmentRuleId>902</AttachmentRuleId>`,
		`<IsCheckSumAllowed>true</IsCheckSumAllowed>`,
	} {
		assert.Contains(t, body, want)
	}
}

func TestProblemsFollowTheAcceptedFormat(t *testing.T) {
	r := get(t, shared, "/api/metadata/formtask/1/1", "Accept", "application/hal+xml")
	require.Equal(t, http.StatusNotFound, r.Code)
	assert.Equal(t, "application/problem+xml; charset=utf-8", r.Header().Get("Content-Type"))
	var p struct {
		XMLName xml.Name `xml:"urn:ietf:rfc:7807 problem"`
		Type    string   `xml:"type"`
		Title   string   `xml:"title"`
		Status  int      `xml:"status"`
		Detail  string   `xml:"detail"`
	}
	require.NoError(t, xml.Unmarshal(r.Body.Bytes(), &p), r.Body.String())
	assert.Equal(t, 404, p.Status)
	assert.Equal(t, "Not Found", p.Title)
	assert.Equal(t, "urn:postbox:problem:not-found", p.Type)
	assert.Contains(t, p.Detail, "service 1 edition 1")
}

func TestPathLiteralsIgnoreCaseAndTrailingSlash(t *testing.T) {
	for _, path := range []string{
		"/API/Metadata/FormTask/4711/1",
		"/api/metadata/formtask/4711/1/",
		"/api/Metadata/CodeLists/Landkoder/1?language=1033",
		"/api/METADATA/",
	} {
		r := get(t, shared, path)
		assert.Equal(t, http.StatusOK, r.Code, "%s: %s", path, r.Body.String())
		assert.Empty(t, r.Header().Get("Location"), "served in place, not redirected")
	}
	// Parameters keep their case: code list names are case-sensitive data.
	requireProblem(t, get(t, shared, "/api/metadata/codelists/LANDKODER/1"), http.StatusNotFound)
}

func TestMethodNotAllowed(t *testing.T) {
	p := requireProblem(t, do(t, shared, request{method: http.MethodDelete, path: "/api/metadata"}), http.StatusMethodNotAllowed)
	assert.Contains(t, p["detail"], "DELETE")
}

func TestRequestIDIsEchoed(t *testing.T) {
	r := get(t, shared, "/api/metadata", "X-Request-Id", "abc-123")
	assert.Equal(t, "abc-123", r.Header().Get("X-Request-Id"))
	for _, id := range []string{"A.b_C-9", strings.Repeat("x", 64)} {
		assert.Equal(t, id, get(t, shared, "/api/metadata", "X-Request-Id", id).Header().Get("X-Request-Id"))
	}
	for _, id := range []string{"<script>", strings.Repeat("x", 65), "a b", "æ"} {
		generated := get(t, shared, "/api/metadata", "X-Request-Id", id).Header().Get("X-Request-Id")
		assert.Regexp(t, `^[0-9a-f]{16}$`, generated, "an unsafe id is replaced: %q", id)
	}
}

func TestCORSOnOpenEndpoints(t *testing.T) {
	r := get(t, shared, "/api/metadata", "Origin", "https://statistikk.vidde.example")
	assert.Equal(t, "https://statistikk.vidde.example", r.Header().Get("Access-Control-Allow-Origin"))
	r = get(t, shared, "/api/metadata", "Origin", "https://evil.example")
	assert.Empty(t, r.Header().Get("Access-Control-Allow-Origin"))

	pre := do(t, shared, request{method: http.MethodOptions, path: "/api/my/messages", header: map[string]string{
		"Origin": "https://app.fjellheim.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "apikey"}})
	assert.Equal(t, http.StatusNoContent, pre.Code)
	assert.Equal(t, "https://app.fjellheim.example", pre.Header().Get("Access-Control-Allow-Origin"))
	assert.Contains(t, pre.Header().Get("Access-Control-Allow-Headers"), "ApiKey")

	pre = do(t, shared, request{method: http.MethodOptions, path: "/api/my/messages", header: map[string]string{
		"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}})
	assert.Equal(t, http.StatusNoContent, pre.Code)
	assert.Empty(t, pre.Header().Get("Access-Control-Allow-Origin"))
}

func TestLinksFollowTrustedProxyHeadersOnly(t *testing.T) {
	hdr := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "postbox.example.no"}
	r := do(t, shared, request{path: "/api/metadata/formtask/4711/1", header: hdr})
	assert.Equal(t, "http://postbox.test/api/metadata/formtask/4711/1", link(t, r.json(t), "self"), "proxy headers are ignored by default")
}

func TestHealth(t *testing.T) {
	assert.Equal(t, http.StatusOK, get(t, shared, "/healthz").Code)
	r := get(t, shared, "/readyz")
	assert.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, map[string]any{"status": "ok", "checks": map[string]any{"database": "ok", "temporal": "not configured"}}, r.json(t))
}
