package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reporteeIDs are the ReporteeIds the person may represent, from /api/reportees.
func reporteeIDs(t *testing.T, ssn string) []string {
	t.Helper()
	var ids []string
	for path := "/api/reportees"; path != ""; {
		r := getAs(t, shared, ssn, path)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		for _, rep := range r.embedded(t, "reportees") {
			ids = append(ids, rep["ReporteeId"].(string))
		}
		path = ""
		if next, ok := r.json(t)["_links"].(map[string]any)["next"]; ok {
			path = pathOf(t, next.(map[string]any)["href"].(string))
		}
	}
	return ids
}

// TestAllPartiesMessages: /api/all/messages holds exactly what the caller sees party by party, newest
// first, each message with its reportee and links under its reportee's mailbox.
func TestAllPartiesMessages(t *testing.T) {
	for _, ssn := range []string{ssnP1, ssnP3, ssnP4, ssnP5} {
		t.Run(ssn, func(t *testing.T) {
			for _, query := range []string{"", "?search=skatt", "?$filter=" + url.QueryEscape("substringof('årsoppgave',tolower(Subject))"),
				// a search newest first runs month by month: pages of 7 over the months, and a rare combination
				"?$top=7&search=skatt", "?search=" + url.QueryEscape("årsoppgave 2023 nordlys"),
				"?$top=3&$filter=" + url.QueryEscape("Status ne 'Lest'") + "&search=" + url.QueryEscape("nordlys 2024"),
			} {
				want := map[string]string{} // message id → its reportee
				for _, rep := range reporteeIDs(t, ssn) {
					for _, id := range walk(t, shared, ssn, "/api/"+rep+"/messages"+query) {
						want[id] = rep
					}
				}
				got := map[string]string{}
				last := ""
				for path := "/api/all/messages" + query; path != ""; {
					r := getAs(t, shared, ssn, path)
					require.Equal(t, http.StatusOK, r.Code, r.Body.String())
					items := r.embedded(t, "messages")
					require.LessOrEqual(t, len(items), 50)
					for _, m := range items {
						id, rep := m["MessageId"].(string), m["ReporteeId"].(string)
						assert.NotContains(t, got, id, "a message is listed once")
						got[id] = rep
						assert.NotEmpty(t, m["ReporteeName"])
						assert.Equal(t, "/api/"+rep+"/messages/"+id, pathOf(t, link(t, m, "self")))
						created := m["CreatedDate"].(string)
						assert.True(t, last == "" || created <= last, "newest first")
						last = created
					}
					path = ""
					if next, ok := r.json(t)["_links"].(map[string]any)["next"]; ok {
						path = pathOf(t, next.(map[string]any)["href"].(string))
					}
				}
				if query == "" {
					require.NotEmpty(t, want)
				}
				assert.Equal(t, want, got, query)
			}
		})
	}
}

func TestAllPartiesMessagesDetails(t *testing.T) {
	r := getAs(t, shared, ssnP1, "/api/ALL/Messages?$top=3")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	body := r.json(t)
	find := body["_links"].(map[string]any)["find"].(map[string]any)
	assert.Equal(t, "http://postbox.test/api/{ReporteeId}/messages/{MessageId}", find["href"])
	first := r.embedded(t, "messages")[0]
	self := getAs(t, shared, ssnP1, pathOf(t, link(t, first, "self")))
	require.Equal(t, http.StatusOK, self.Code, "the self link leads to the message")
	assert.NotContains(t, self.json(t), "ReporteeId", "the single view is under its reportee")

	t.Run("ReporteeId narrows to some parties", func(t *testing.T) {
		reps := reporteeIDs(t, ssnP1)
		require.Greater(t, len(reps), 2)
		f := "ReporteeId eq '" + reps[1] + "' or ReporteeId eq '" + reps[2] + "'"
		ids := walk(t, shared, ssnP1, "/api/all/messages?$filter="+url.QueryEscape(f))
		want := append(walk(t, shared, ssnP1, "/api/"+reps[1]+"/messages"), walk(t, shared, ssnP1, "/api/"+reps[2]+"/messages")...)
		assert.ElementsMatch(t, want, ids)
		p := requireProblem(t, getAs(t, shared, ssnP1, "/api/all/messages?$filter="+url.QueryEscape("ReporteeId eq '310123455'")), http.StatusBadRequest)
		assert.Equal(t, "property 'ReporteeId' is 'r' and digits, such as 'r50001'; not '310123455'", p["detail"])
	})
	t.Run("XML", func(t *testing.T) {
		r := getAs(t, shared, ssnP1, "/api/all/messages?$top=2", "Accept", "application/hal+xml")
		require.Equal(t, http.StatusOK, r.Code)
		requireWellFormedXML(t, r.Body.Bytes())
		assert.Equal(t, 2, strings.Count(r.Body.String(), "<ReporteeId>r"))
		assert.Equal(t, 2, strings.Count(r.Body.String(), "<ReporteeName>"))
	})
	t.Run("messagebox", func(t *testing.T) {
		all := getAs(t, shared, ssnP1, "/api/all/messagebox")
		require.Equal(t, http.StatusOK, all.Code)
		assert.Equal(t, getAs(t, shared, ssnP1, "/api/my/messagebox").json(t)["_embedded"], all.json(t)["_embedded"])
		assert.Len(t, all.embedded(t, "mailboxes"), len(reporteeIDs(t, ssnP1)))
	})
	t.Run("only the list", func(t *testing.T) {
		requireProblem(t, getAs(t, shared, ssnP1, "/api/all/messages/a3100808"), http.StatusForbidden)
	})
}
