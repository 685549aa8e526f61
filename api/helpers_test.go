package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// shared is one server over one seeded database for the tests that change nothing; tests that write
// get a database of their own from newServer.
var shared *api.Server

func TestMain(m *testing.M) {
	ctx := context.Background()
	url, _, drop, err := storetest.Create(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "the tests need PostgreSQL at POSTBOX_TEST_DATABASE_URL:", err)
		os.Exit(1)
	}
	pool, err := store.Open(ctx, url)
	if err != nil {
		drop()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared, err = newAPI(pool)
	if err != nil {
		drop()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := documentValidator(); err != nil { // made before the tests, so that none times its making
		drop()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := checkSuiteLog(m.Run())
	stopFormTaskEnv()
	pool.Close()
	drop()
	os.Exit(code)
}

const testBodyLimit = 64 << 10

func newServer(t *testing.T) (*api.Server, *pgxpool.Pool) {
	t.Helper()
	pool := storetest.New(t)
	srv, err := newAPI(pool)
	require.NoError(t, err)
	return srv, pool
}

// demoDir is the repository's copy of the demo dataset, keys and certificates.
var demoDir = filepath.Dir(storetest.DemoDataset())

const (
	testIssuer   = "https://test-issuer.demo.local"
	testAudience = "mailbox-api"
)

// testTokens trusts the demo's test issuer, as make run does.
func testTokens() (*identity.TokenVerifier, error) {
	return identity.NewTokenVerifier(context.Background(), testAudience,
		identity.TrustedIssuer{Issuer: testIssuer, JWKS: filepath.Join(demoDir, "certs", "jwks.json")})
}

func newAPI(pool *pgxpool.Pool) (*api.Server, error) {
	tokens, err := testTokens()
	if err != nil {
		return nil, err
	}
	return api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: testBodyLimit, Logger: quiet, Tokens: tokens, PublicURL: testPublicURL})
}

// testPublicURL is the base URL of the suite's servers, as links and event sources name it.
const testPublicURL = "http://postbox.test"

type request struct {
	method string
	path   string
	header map[string]string
	body   string
}

type response struct {
	*httptest.ResponseRecorder
}

func do(t *testing.T, h http.Handler, r request) response {
	t.Helper()
	return doWith(t, h, r, nil)
}

// doWith is do with a hook that changes the request, e.g. to put a verified certificate on it.
func doWith(t *testing.T, h http.Handler, r request, change func(*http.Request)) response {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	req := httptest.NewRequest(r.method, testPublicURL+r.path, strings.NewReader(r.body))
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if change != nil {
		change(req)
	}
	rec := httptest.NewRecorder()
	serve(t, h, rec, req)
	return response{rec}
}

func get(t *testing.T, h http.Handler, path string, header ...string) response {
	t.Helper()
	hdr := map[string]string{}
	for i := 0; i+1 < len(header); i += 2 {
		hdr[header[i]] = header[i+1]
	}
	return do(t, h, request{path: path, header: hdr})
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(r.Body.Bytes(), &v), r.Body.String())
	return v
}

// embedded returns the named list of a HAL collection.
func (r response) embedded(t *testing.T, name string) []map[string]any {
	t.Helper()
	emb, ok := r.json(t)["_embedded"].(map[string]any)
	require.True(t, ok, "no _embedded in %s", r.Body.String())
	raw, ok := emb[name].([]any)
	require.True(t, ok, "no _embedded.%s in %s", name, r.Body.String())
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i] = x.(map[string]any)
	}
	return out
}

// requireProblem checks the RFC 9457 body of an error response.
func requireProblem(t *testing.T, r response, status int) map[string]any {
	t.Helper()
	require.Equal(t, status, r.Code, r.Body.String())
	assert.Equal(t, "application/problem+json; charset=utf-8", r.Header().Get("Content-Type"))
	p := r.json(t)
	assert.EqualValues(t, status, p["status"])
	assert.NotEmpty(t, p["type"])
	assert.NotEmpty(t, p["title"])
	assert.NotEmpty(t, p["detail"])
	return p
}

// requireWellFormedXML walks the whole document, failing on any syntax error.
func requireWellFormedXML(t *testing.T, body []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return
		}
		require.NoError(t, err, string(body))
	}
}

func link(t *testing.T, resource map[string]any, rel string) string {
	t.Helper()
	links, ok := resource["_links"].(map[string]any)
	require.True(t, ok, "no _links")
	l, ok := links[rel].(map[string]any)
	require.True(t, ok, "no link %q in %v", rel, links)
	return l["href"].(string)
}

// pathOf strips the test server's base URL from an absolute link.
func pathOf(t testing.TB, href string) string {
	t.Helper()
	p, ok := strings.CutPrefix(href, "http://postbox.test")
	require.True(t, ok, "link %q is not absolute on the request's base URL", href)
	return p
}

// quiet is the logger of the suite's servers: nobody reads it during the tests, but TestMain checks that
// it holds no secrets (logging_test.go).
var quiet = newSuiteLogger()
