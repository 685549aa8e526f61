package api

import (
	"embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// The reference page of the API: Redoc (the npm package pinned in docs/package.json, its bundle copied
// by scripts/docs-assets.sh) renders /api/openapi.json in the reader's browser. Everything is embedded,
// so the page loads nothing from elsewhere. The page's own few lines (docs/init.js) follow the bundle in
// the one script the page loads, since the policy runs no inline script.
//
//go:embed docs/index.html docs/redoc.standalone.js docs/init.js
var docsFiles embed.FS

// docsCSP lets the page run only its own script and fetch only from this origin. Redoc writes its styles
// at run time (style attributes and elements), shows the logo and schema icons as data: URLs, and its
// search runs in a worker made from a blob: URL.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsFile is one embedded file of the page, with its media type and ETag.
type docsFile struct {
	content   []byte
	mediaType string
	etag      string
}

// docsHandlers serve the page and its assets.
type docsHandlers struct {
	page, script docsFile
}

func newDocsHandlers() *docsHandlers {
	return &docsHandlers{
		page:   embeddedDocsFile("text/html; charset=utf-8", "docs/index.html"),
		script: embeddedDocsFile("text/javascript; charset=utf-8", "docs/redoc.standalone.js", "docs/init.js"),
	}
}

// embeddedDocsFile is the embedded files of names, one after the other, as one file.
func embeddedDocsFile(mediaType string, names ...string) docsFile {
	var b []byte
	for _, name := range names {
		part, err := docsFiles.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: it is there
		}
		b = append(append(b, part...), '\n')
	}
	return docsFile{content: b, mediaType: mediaType, etag: etagOf(mediaType, b)}
}

func (h *docsHandlers) getPage(c *gin.Context) {
	c.Header("Content-Security-Policy", docsCSP)
	serveDocsFile(c, h.page)
}

func (h *docsHandlers) getScript(c *gin.Context) { serveDocsFile(c, h.script) }

// serveDocsFile answers f, or 304 when the client has it; clients check again on every use (no-cache),
// so a new release's page is seen at once and an unchanged one costs a 304.
func serveDocsFile(c *gin.Context, f docsFile) {
	c.Header("Cache-Control", "no-cache")
	c.Header("X-Content-Type-Options", "nosniff")
	if notModified(c, f.etag) {
		return
	}
	c.Data(http.StatusOK, f.mediaType, f.content)
}
