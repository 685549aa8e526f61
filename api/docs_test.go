package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocsPageAndScriptAreServedFromTheBinary(t *testing.T) {
	page := get(t, shared, "/api/docs")
	require.Equal(t, http.StatusOK, page.Code)
	assert.Equal(t, "text/html; charset=utf-8", page.Header().Get("Content-Type"))
	csp := page.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "script-src 'self';")
	assert.Contains(t, page.Body.String(), `<div id="redoc"></div>`)
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, page.Body.String(), "the page loads nothing from elsewhere")

	script := get(t, shared, "/api/docs/redoc.standalone.js")
	require.Equal(t, http.StatusOK, script.Code)
	assert.Equal(t, "text/javascript; charset=utf-8", script.Header().Get("Content-Type"))
	assert.Greater(t, script.Body.Len(), 500_000, "the whole bundle")
	etag := script.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, http.StatusNotModified, get(t, shared, "/api/docs/redoc.standalone.js", "If-None-Match", etag).Code)
}

// chromium is the browser of the page check: POSTBOX_TEST_CHROMIUM when set (make test sets it, so there
// a missing browser fails), else chromium from PATH. Without one the test is skipped, except in CI.
func chromium(t *testing.T) string {
	if bin := os.Getenv("POSTBOX_TEST_CHROMIUM"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("chromium")
	switch {
	case err != nil && os.Getenv("CI") != "":
		t.Fatal("no chromium on PATH: make test installs it")
	case err != nil:
		t.Skip("no chromium on PATH (make test installs it)")
	}
	return bin
}

// TestDocsPageShowsEveryOperationInChromium loads /api/docs in headless Chromium from a real listener and
// finds every operation of /api/openapi.json in the page Redoc rendered, with no script error or
// Content-Security-Policy refusal on the browser's console.
func TestDocsPageShowsEveryOperationInChromium(t *testing.T) {
	bin := chromium(t)
	srv := httptest.NewServer(shared)
	defer srv.Close()

	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	res, err := http.Get(srv.URL + "/api/openapi.json")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&doc))
	res.Body.Close()
	var operations []string
	for _, item := range doc.Paths {
		for _, op := range item {
			if op.OperationID != "" {
				operations = append(operations, op.OperationID)
			}
		}
	}
	require.NotEmpty(t, operations)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		// Virtual time runs until the page is idle: the document fetched and rendered.
		"--virtual-time-budget=30000", "--dump-dom", srv.URL+"/api/docs")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	require.NoError(t, err, stderr.String())

	rendered := map[string]bool{}
	for _, m := range regexp.MustCompile(`data-section-id="(?:tag/[^"/]*/)?operation/([^"]+)"`).FindAllStringSubmatch(string(dom), -1) {
		rendered[m[1]] = true
	}
	for _, id := range operations {
		assert.True(t, rendered[id], "operation %s is not on the rendered page", id)
	}
	// The heading says the version in words, with no "(1)" after the title.
	assert.Contains(t, string(dom), "Postbox API, version 1")
	assert.NotContains(t, string(dom), "<span>(1)</span>")
	for _, line := range strings.Split(stderr.String(), "\n") {
		// Redoc's side menu ends with its maker's logo from their CDN, which the policy blocks as it should
		// (the link beside it stays): the one refusal expected.
		if strings.Contains(line, ":CONSOLE") && !strings.Contains(line, "'https://cdn.redoc.ly/redoc/logo-mini.svg' violates") {
			assert.NotRegexp(t, `(?i)violates|refused|uncaught|error`, line, "the browser's console")
		}
	}
}
