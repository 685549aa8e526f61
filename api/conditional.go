package api

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
)

// Conditional requests (RFC 9110): single resources carry a strong ETag of what is returned;
// If-None-Match answers 304 and If-Match guards their changes (412 with the current ETag).

// etagOf is the strong validator of content returned as mediaType.
func etagOf(mediaType string, content []byte) string {
	d := sha256.New()
	d.Write([]byte(mediaType))
	d.Write([]byte{0})
	d.Write(content)
	var sum [sha256.Size]byte
	var tag [2 + 24]byte // '"', 18 bytes in base64, '"'
	tag[0], tag[len(tag)-1] = '"', '"'
	base64.RawURLEncoding.Encode(tag[1:len(tag)-1], d.Sum(sum[:0])[:18])
	return string(tag[:])
}

// resourceETag is the ETag of resource v in the negotiated media type: each media type is written from
// the same value, so the digest of its JSON and the media type determine the bytes.
func resourceETag(c *gin.Context, v any) (string, error) {
	b, err := render.AppendJSON(nil, v)
	if err != nil {
		return "", err
	}
	return etagOf(render.Format(c), b), nil
}

// respondTagged answers 200 with v and its ETag, or 304 when If-None-Match names it. The JSON the ETag
// digests is the body of the JSON media types: v is encoded once for them.
func respondTagged(c *gin.Context, v any) {
	buf := taggedBuffers.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxTaggedBuffer {
			taggedBuffers.Put(buf)
		}
	}()
	body, err := render.AppendJSON((*buf)[:0], v)
	*buf = body
	if err != nil {
		abort(c, err)
		return
	}
	if notModified(c, etagOf(render.Format(c), body)) {
		return
	}
	if err := render.WriteEncoded(c, http.StatusOK, v, body); err != nil {
		abort(c, err)
	}
}

// taggedBuffers hold the JSON of single resources between responses, so that it is not grown anew from
// nothing for each.
var taggedBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxTaggedBuffer keeps one huge resource from pinning its buffer in the pool.
const maxTaggedBuffer = 1 << 20

// notModified sets the ETag and, when If-None-Match names it (or is *), answers 304.
func notModified(c *gin.Context, tag string) bool {
	c.Header("ETag", tag)
	if !tagListed(c.GetHeader("If-None-Match"), tag, false) {
		return false
	}
	c.Status(http.StatusNotModified)
	c.Writer.WriteHeaderNow()
	return true
}

// checkIfMatch passes a request without If-Match, or whose If-Match names current (or is *); otherwise it
// is a 412 problem, answered with the current ETag so the client can read again and decide. An empty
// current is a resource that does not exist, which no If-Match names.
func checkIfMatch(c *gin.Context, current string) error {
	h, ok := c.Request.Header["If-Match"]
	if !ok || (current != "" && tagListed(strings.Join(h, ","), current, true)) {
		return nil
	}
	if current == "" {
		return problem.New(http.StatusPreconditionFailed, "precondition-failed", "If-Match names a resource that does not exist")
	}
	c.Header("ETag", current)
	return problem.New(http.StatusPreconditionFailed, "precondition-failed",
		"the resource has changed since the ETag in If-Match was read: it is now %s", current)
}

// tagListed tells whether a list of entity tags (If-Match, If-None-Match) names tag or is *. With strong
// comparison (If-Match) a weak tag names nothing; with weak comparison (If-None-Match) W/ is ignored.
func tagListed(list, tag string, strong bool) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" {
			return true
		}
		if w, ok := strings.CutPrefix(t, "W/"); ok {
			if strong {
				continue
			}
			t = w
		}
		if t == tag {
			return true
		}
	}
	return false
}
