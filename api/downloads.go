package api

import (
	"cmp"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/files"
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

// fileDownloads answers downloads of contents in the object store.
type fileDownloads struct {
	files *files.Service
	// presignFrom: files at least this large are a redirect to a pre-signed URL of the store, valid for
	// presignExpiry (0: never).
	presignFrom   int64
	presignExpiry time.Duration
}

// serve answers the content sha256 of size bytes, after its headers (downloadHeaders) are set and the
// caller's access is checked: a 307 to a short-lived pre-signed URL of the store when it is large enough,
// else its bytes streamed from the store with Range support (serveContent).
func (d fileDownloads) serve(c *gin.Context, sha256 []byte, size int64, fileName, contentType string, modtime time.Time) {
	ctx := c.Request.Context()
	if d.presignFrom > 0 && size >= d.presignFrom {
		u, err := d.files.Presign(ctx, sha256, d.presignExpiry, cmp.Or(fileName, hex.EncodeToString(sha256)), contentType)
		if err != nil {
			abort(c, err)
			return
		}
		h := c.Writer.Header()
		for _, of := range []string{"Content-Type", "Content-Disposition", "ETag"} { // of the file, which is not sent
			h.Del(of)
		}
		h.Set("Cache-Control", "no-store") // the URL expires; a cache must not keep the redirect
		c.Redirect(http.StatusTemporaryRedirect, u.String())
		return
	}
	r, err := d.files.Reader(ctx, sha256)
	if err != nil {
		c.Writer.Header().Del("Content-Disposition")
		abort(c, err)
		return
	}
	defer r.Close()
	serveContent(c, "", modtime, r)
}

// serveContent streams content as http.ServeContent does (Range, If-Range, If-Match,
// If-Unmodified-Since, If-None-Match, If-Modified-Since; name gives the Content-Type when none is set),
// but answers its refusals as problems like every other 4xx: ServeContent writes its 416 as text and its
// 412 without a body.
func serveContent(c *gin.Context, name string, modtime time.Time, content io.ReadSeeker) {
	w := &refusalCatcher{ResponseWriter: c.Writer}
	// modtime is a wall-clock time of the service's zone, as the store keeps every timestamp: Last-Modified
	// and If-(Un)Modified-Since are instants (it was an hour ahead in Oslo's winter).
	http.ServeContent(w, c.Request, name, clock.Instant(modtime), content)
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
