package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
)

func TestSigningText(t *testing.T) {
	f := newLifecycleFixture(t)
	cases := []struct {
		name, query string
		language    float64
		want        string
	}{
		{"the service's own, bokmål by default", "", 1044, "Jeg bekrefter at årsoppgaven er riktig og fullstendig"},
		{"the service's own in English", "?language=1033", 1033, "I confirm that the annual statement"},
		{"the default text where the service has none", "?language=2068", 2068, store.DefaultSigningTexts[2068]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.as(t, lifeReader, http.MethodGet, lifePath(lifeFilling, "/signingtext"+tc.query))
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			body := r.json(t)
			assert.True(t, strings.HasPrefix(body["SigningText"].(string), tc.want), body["SigningText"])
			assert.Equal(t, tc.language, body["Language"])
			assert.Equal(t, "4711", body["ServiceCode"])
			assert.Equal(t, "http://postbox.test"+lifePath(lifeFilling), link(t, body, "message"))
		})
	}
	// The service metadata carries it too, in the language asked for.
	r := get(t, f.h, "/api/metadata/formtask/6120/1?language=1033")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, store.DefaultSigningTexts[1033], r.json(t)["SigningText"])

	p := requireProblem(t, f.as(t, lifeReader, http.MethodGet, lifePath(lifeUnread, "/signingtext")), http.StatusConflict)
	assert.Equal(t, "urn:postbox:problem:not-a-form-task", p["type"])
	requireProblem(t, f.as(t, lifeDeleter, http.MethodGet, lifePath(lifeFilling, "/signingtext")), http.StatusNotFound) // no Read on 4711/2
	requireProblem(t, f.as(t, lifeReader, http.MethodGet, lifePath("a8899999", "/signingtext")), http.StatusNotFound)
	requireProblem(t, f.as(t, lifeReader, http.MethodGet, lifePath(lifeFilling, "/signingtext?language=9")), http.StatusBadRequest)
}

func TestCustomMessageData(t *testing.T) {
	f := newLifecycleFixture(t)
	_, err := f.pool.Exec(context.Background(), `UPDATE messages SET custom_message_data = '[{"Key": "Saksnummer", "Value": "2025/17"}, {"Key": "Frist", "Value": ""}]' WHERE id = $1`, lifeUnread)
	require.NoError(t, err)

	r := f.as(t, lifeReader, http.MethodGet, lifePath(lifeUnread, "/CustomMessageData"))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, []map[string]any{{"Key": "Saksnummer", "Value": "2025/17"}, {"Key": "Frist", "Value": ""}}, r.embedded(t, "custommessagedata"))
	assert.Equal(t, "http://postbox.test"+lifePath(lifeUnread, "/custommessagedata"), link(t, r.json(t), "self"))
	unread := f.as(t, lifeReader, http.MethodGet, lifePath(lifeUnread, "?markAsRead=false"))
	assert.Equal(t, "Ulest", unread.json(t)["Status"], "reading the custom data does not mark the message read")

	none := f.as(t, lifeReader, http.MethodGet, lifePath(lifeRead, "/custommessagedata"))
	require.Equal(t, http.StatusOK, none.Code, none.Body.String())
	assert.Empty(t, none.embedded(t, "custommessagedata"))

	requireProblem(t, f.as(t, lifeDeleter, http.MethodGet, lifePath(lifeSent, "/custommessagedata")), http.StatusNotFound)
	requireProblem(t, f.as(t, lifeReader, http.MethodGet, lifePath("a8899999", "/custommessagedata")), http.StatusNotFound)
	requireProblem(t, f.as(t, ssnP5, http.MethodGet, lifePath(lifeUnread, "/custommessagedata")), http.StatusForbidden)
}

func TestMessageDataMediaTypes(t *testing.T) {
	f := newLifecycleFixture(t)
	for _, accept := range []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"} {
		for _, path := range []string{lifePath(lifeFilling, "/signingtext"), lifePath(lifeUnread, "/custommessagedata")} {
			r := f.as(t, lifeManager, http.MethodGet, path, "Accept", accept)
			require.Equal(t, http.StatusOK, r.Code, "%s %s: %s", accept, path, r.Body.String())
			if strings.Contains(accept, "xml") {
				assert.Contains(t, r.Header().Get("Content-Type"), "xml")
				requireWellFormedXML(t, r.Body.Bytes())
			} else {
				assert.Contains(t, r.Header().Get("Content-Type"), "json")
			}
		}
	}
	requireProblem(t, f.as(t, lifeManager, http.MethodGet, lifePath(lifeFilling, "/signingtext"), "Accept", "text/csv"), http.StatusNotAcceptable)
}
