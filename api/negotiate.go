package api

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

// The media types resources are offered in, in order of preference when the client does not care.
var mediaTypes = []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"}

// negotiate picks the response media type from Accept, or answers 406 when none of ours is acceptable.
func (s *Server) negotiate(c *gin.Context) {
	mt, ok := pickMediaType(c.GetHeader("Accept"))
	if !ok {
		abort(c, problem.New(http.StatusNotAcceptable, "not-acceptable", "this resource is available as %s", strings.Join(mediaTypes, ", ")))
		return
	}
	c.Set(ctxFormat, mt)
	c.Next()
}

// pickMediaType implements Accept with quality values and wildcards; a missing header accepts anything.
func pickMediaType(accept string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return mediaTypes[0], true
	}
	best, bestQ := "", 0.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		for _, offered := range mediaTypes {
			if q > bestQ && matchesMediaRange(mt, offered) {
				best, bestQ = offered, q
				break
			}
		}
	}
	return best, bestQ > 0
}

func matchesMediaRange(mediaRange, offered string) bool {
	if mediaRange == "*/*" || mediaRange == offered {
		return true
	}
	typ, sub, _ := strings.Cut(mediaRange, "/")
	return sub == "*" && strings.HasPrefix(offered, typ+"/")
}

// wantsXML tells whether error bodies should be XML: when the client prefers an XML type.
func wantsXML(c *gin.Context) bool {
	mt := c.GetString(ctxFormat)
	if mt == "" {
		mt, _ = pickMediaType(c.GetHeader("Accept"))
	}
	return strings.HasSuffix(mt, "xml")
}

// render writes v in the negotiated media type.
func (s *Server) render(c *gin.Context, status int, v any) {
	mt := c.GetString(ctxFormat)
	if mt == "" {
		mt = mediaTypes[0]
	}
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	var err error
	if strings.HasSuffix(mt, "xml") {
		err = writeHALXML(buf, v)
	} else {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		err = enc.Encode(v)
	}
	if err != nil {
		abort(c, err)
		return
	}
	c.Data(status, mt+"; charset=utf-8", buf.Bytes())
}

// renderBuffers are reused between responses: a page of 50 messages is some 50 KB that would otherwise be
// allocated and zeroed anew for every request.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps one huge response from pinning its buffer in the pool.
const maxPooledBuffer = 1 << 20
