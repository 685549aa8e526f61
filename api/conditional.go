package api

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

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
	return `"` + base64.RawURLEncoding.EncodeToString(d.Sum(nil)[:18]) + `"`
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
	body, err := render.AppendJSON(nil, v)
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
