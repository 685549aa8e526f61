package render

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// MediaTypes are the media types resources are offered in, in order of preference when the client does
// not care.
var MediaTypes = []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"}

// formatKey is where the negotiated media type is kept on the request.
const formatKey = "postbox.format"

// SetFormat records the media type negotiated for the response.
func SetFormat(c *gin.Context, mediaType string) { c.Set(formatKey, mediaType) }

// PickMediaType implements Accept with quality values and wildcards over MediaTypes; a missing header
// accepts anything.
func PickMediaType(accept string) (string, bool) { return PickMediaTypeOf(accept, MediaTypes) }

// PickMediaTypeOf is PickMediaType over the media types offered, in order of preference: a resource that
// has a form of its own besides the four (the events feed's CloudEvents batch) offers it too.
func PickMediaTypeOf(accept string, offered []string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return offered[0], true
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
		for _, o := range offered {
			if q > bestQ && matchesMediaRange(mt, o) {
				best, bestQ = o, q
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

// WantsXML tells whether error bodies should be XML: when the client prefers an XML type.
func WantsXML(c *gin.Context) bool {
	mt := c.GetString(formatKey)
	if mt == "" {
		mt, _ = PickMediaType(c.GetHeader("Accept"))
	}
	return strings.HasSuffix(mt, "xml")
}

// Format is the media type negotiated for the response, the first of MediaTypes when none was.
func Format(c *gin.Context) string {
	if mt := c.GetString(formatKey); mt != "" {
		return mt
	}
	return MediaTypes[0]
}

// Write writes v in the negotiated media type; it writes nothing when v cannot be encoded.
func Write(c *gin.Context, status int, v any) error { return WriteEncoded(c, status, v, nil) }

// WriteEncoded is Write of a v whose JSON is known (json, as AppendJSON wrote it; nil if not): the JSON
// media types write it as it is.
func WriteEncoded(c *gin.Context, status int, v any, json []byte) error {
	mt := Format(c)
	if json != nil && !strings.HasSuffix(mt, "xml") {
		writeBody(c, status, mt, json)
		return nil
	}
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if strings.HasSuffix(mt, "xml") {
		if err := WriteHALXML(buf, v); err != nil {
			return err
		}
	} else {
		b, err := AppendJSON(buf.AvailableBuffer(), v)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	writeBody(c, status, mt, buf.Bytes())
	return nil
}

// contentTypes are the Content-Type header values of the media types offered, made once: every response
// sets one.
var contentTypes = func() map[string][]string {
	m := map[string][]string{}
	for _, mt := range MediaTypes {
		m[mt] = []string{mt + "; charset=utf-8"}
	}
	return m
}()

// writeBody answers status with body in media type mt, with its Content-Length: a body of a known length
// goes out as it is rather than in chunks, which cost the server a write and the client their parsing.
func writeBody(c *gin.Context, status int, mt string, body []byte) {
	h := c.Writer.Header()
	if len(h["Content-Type"]) == 0 { // one set before stays, as with gin's c.Data
		if ct, ok := contentTypes[mt]; ok {
			h["Content-Type"] = ct
		} else {
			h["Content-Type"] = []string{mt + "; charset=utf-8"}
		}
	}
	c.Status(status)
	if status < 200 || status == http.StatusNoContent || status == http.StatusNotModified {
		c.Writer.WriteHeaderNow() // no body, as gin's c.Data
		return
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	_, _ = c.Writer.Write(body)
}

// renderBuffers are reused between responses: a page of 50 messages is some 50 KB that would otherwise be
// allocated and zeroed anew for every request.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer keeps one huge response from pinning its buffer in the pool.
const maxPooledBuffer = 1 << 20
