package api

import (
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

// downloadHeaders describes stored bytes an answer is about to stream: their media type, the file name a
// client saves them under ("" for none) and, when sha256 is given, their digest as the ETag.
func downloadHeaders(c *gin.Context, contentType, fileName string, sha256 []byte) {
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", contentType)
	if fileName != "" {
		hdr.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fileName}))
	}
	if sha256 != nil {
		hdr.Set("ETag", `"`+hex.EncodeToString(sha256)+`"`)
	}
}

// serveContent streams content as http.ServeContent does (Range, If-Range, If-Match,
// If-Unmodified-Since, If-None-Match, If-Modified-Since; name gives the Content-Type when none is set),
// but answers its refusals as problems like every other 4xx: ServeContent writes its 416 as text and its
// 412 without a body.
func serveContent(c *gin.Context, name string, modtime time.Time, content io.ReadSeeker) {
	w := &refusalCatcher{ResponseWriter: c.Writer}
	http.ServeContent(w, c.Request, name, modtime, content)
	if w.refused == 0 {
		return
	}
	h := c.Writer.Header()
	h.Del("Content-Disposition") // of the content, which is not sent
	switch w.refused {
	case http.StatusRequestedRangeNotSatisfiable:
		// ServeContent names the size (bytes */size) when the Range is well-formed but outside the content.
		if size, ok := strings.CutPrefix(h.Get("Content-Range"), "bytes */"); ok {
			abort(c, problem.New(http.StatusRequestedRangeNotSatisfiable, "range-not-satisfiable",
				"the Range %q asks for none of the content's %s bytes (the first is byte 0)", c.GetHeader("Range"), size))
			return
		}
		abort(c, problem.New(http.StatusRequestedRangeNotSatisfiable, "range-not-satisfiable",
			"the Range %q is not a byte range: bytes=first-last, bytes=first- or bytes=-suffixlength, comma-separated", c.GetHeader("Range")))
	case http.StatusPreconditionFailed:
		// If-Match, when present, is the precondition ServeContent checked; If-Unmodified-Since only without it.
		if _, ifMatch := c.Request.Header["If-Match"]; ifMatch {
			if etag := h.Get("ETag"); etag != "" {
				abort(c, problem.New(http.StatusPreconditionFailed, "precondition-failed",
					"If-Match does not name the content's current ETag: it is %s", etag))
				return
			}
			abort(c, problem.New(http.StatusPreconditionFailed, "precondition-failed",
				"If-Match names an ETag, but this content has none to match; leave If-Match out"))
			return
		}
		modified := modtime.UTC().Format(http.TimeFormat)
		h.Set("Last-Modified", modified)
		abort(c, problem.New(http.StatusPreconditionFailed, "modified-since",
			"the content was modified after If-Unmodified-Since (%s): last at %s", c.GetHeader("If-Unmodified-Since"), modified))
	}
}

// refusalCatcher passes an answer through, except a 412 or 416, which it keeps back (status and body)
// for serveContent to answer as a problem.
type refusalCatcher struct {
	http.ResponseWriter
	refused int
}

func (w *refusalCatcher) WriteHeader(status int) {
	if status == http.StatusPreconditionFailed || status == http.StatusRequestedRangeNotSatisfiable {
		w.refused = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *refusalCatcher) Write(b []byte) (int, error) {
	if w.refused != 0 {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *refusalCatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }
