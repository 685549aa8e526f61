package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An attachment download's refusals of Range and preconditions are problems like every other 4xx, in
// the media type Accept asks for, with Content-Range on 416 and the current validators on 412.
func TestDownloadRefusalsAreProblems(t *testing.T) {
	srv, _ := newServer(t)
	m := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3100808").json(t)
	path := pathOf(t, m["_links"].(map[string]any)["attachment"].([]any)[0].(map[string]any)["href"].(string))
	whole := getAs(t, srv, ssnP1, path)
	require.Equal(t, http.StatusOK, whole.Code)
	size := whole.Body.Len()
	etag := whole.Header().Get("ETag")
	require.NotEmpty(t, etag)
	modified, err := http.ParseTime(whole.Header().Get("Last-Modified"))
	require.NoError(t, err)

	t.Run("a range beyond the content", func(t *testing.T) {
		r := getAs(t, srv, ssnP1, path, "Range", "bytes="+strconv.Itoa(size)+"-")
		p := requireProblem(t, r, http.StatusRequestedRangeNotSatisfiable)
		assert.Equal(t, "urn:postbox:problem:range-not-satisfiable", p["type"])
		assert.Equal(t, "bytes */"+strconv.Itoa(size), r.Header().Get("Content-Range"))
		assert.Equal(t, `the Range "bytes=`+strconv.Itoa(size)+`-" asks for none of the content's `+strconv.Itoa(size)+` bytes (the first is byte 0)`, p["detail"])
		assert.Empty(t, r.Header().Get("Content-Disposition"), "no attachment is sent")
	})
	t.Run("a range that is no byte range", func(t *testing.T) {
		r := getAs(t, srv, ssnP1, path, "Range", "bytes=ten-twenty")
		p := requireProblem(t, r, http.StatusRequestedRangeNotSatisfiable)
		assert.Equal(t, "urn:postbox:problem:range-not-satisfiable", p["type"])
		assert.Contains(t, p["detail"], `the Range "bytes=ten-twenty" is not a byte range`)
		assert.Empty(t, r.Header().Get("Content-Range"))
	})
	t.Run("as XML when Accept asks for it", func(t *testing.T) {
		r := getAs(t, srv, ssnP1, path, "Range", "bytes=99999999-", "Accept", "application/xml")
		require.Equal(t, http.StatusRequestedRangeNotSatisfiable, r.Code)
		assert.Equal(t, "application/problem+xml; charset=utf-8", r.Header().Get("Content-Type"))
		assert.Contains(t, r.Body.String(), "<type>urn:postbox:problem:range-not-satisfiable</type>")
		assert.Equal(t, "bytes */"+strconv.Itoa(size), r.Header().Get("Content-Range"))
	})
	t.Run("If-Match of another ETag", func(t *testing.T) {
		r := getAs(t, srv, ssnP1, path, "If-Match", `"not-the-etag"`)
		p := requireProblem(t, r, http.StatusPreconditionFailed)
		assert.Equal(t, "urn:postbox:problem:precondition-failed", p["type"])
		assert.Equal(t, "If-Match does not name the content's current ETag: it is "+etag, p["detail"])
		assert.Equal(t, etag, r.Header().Get("ETag"))
		assert.Equal(t, http.StatusOK, getAs(t, srv, ssnP1, path, "If-Match", etag).Code, "the current ETag passes")
	})
	t.Run("If-Unmodified-Since before the last change", func(t *testing.T) {
		before := modified.Add(-time.Hour).Format(http.TimeFormat)
		r := getAs(t, srv, ssnP1, path, "If-Unmodified-Since", before)
		p := requireProblem(t, r, http.StatusPreconditionFailed)
		assert.Equal(t, "urn:postbox:problem:modified-since", p["type"])
		assert.Equal(t, "the content was modified after If-Unmodified-Since ("+before+"): last at "+modified.Format(http.TimeFormat), p["detail"])
		assert.Equal(t, modified.Format(http.TimeFormat), r.Header().Get("Last-Modified"))
		assert.Equal(t, http.StatusOK, getAs(t, srv, ssnP1, path, "If-Unmodified-Since", modified.Format(http.TimeFormat)).Code)
	})
	t.Run("a range within it still comes", func(t *testing.T) {
		r := getAs(t, srv, ssnP1, path, "Range", "bytes=0-9", "If-Range", etag)
		require.Equal(t, http.StatusPartialContent, r.Code)
		assert.Equal(t, whole.Body.Bytes()[:10], r.Body.Bytes())
	})
}
