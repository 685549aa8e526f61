package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store/storetest"
)

// demoMessage returns a message of the demo dataset as the file has it.
func demoMessage(t *testing.T, id string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(storetest.DemoDataset())
	require.NoError(t, err)
	var ds struct{ Messages []map[string]any }
	require.NoError(t, json.Unmarshal(raw, &ds))
	for _, m := range ds.Messages {
		if m["MessageId"] == id {
			return m
		}
	}
	t.Fatalf("no message %s in the dataset", id)
	return nil
}

func bearer(t *testing.T, ssn string) []string {
	return []string{"ApiKey", keyAll, "Authorization", "Bearer " + personToken(t, ssn, "platform:enduser")}
}

func getAs(t *testing.T, h http.Handler, ssn, path string, header ...string) response {
	t.Helper()
	return get(t, h, path, append(bearer(t, ssn), header...)...)
}

// walk follows next links from path and returns every message id in order.
func walk(t *testing.T, h http.Handler, ssn, path string) []string {
	t.Helper()
	var ids []string
	for path != "" {
		r := getAs(t, h, ssn, path)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		items := r.embedded(t, "messages")
		require.LessOrEqual(t, len(items), 50)
		for _, m := range items {
			ids = append(ids, m["MessageId"].(string))
		}
		path = ""
		if next, ok := r.json(t)["_links"].(map[string]any)["next"].(map[string]any); ok {
			path = pathOf(t, next["href"].(string))
		}
	}
	return ids
}

func TestMessageListPagesEveryMessageOnce(t *testing.T) {
	for _, query := range []string{"", "?$top=7", "?$orderby=Subject", "?$orderby=" + url.QueryEscape("CreatedDate asc") + "&$top=13"} {
		ids := walk(t, shared, ssnP1, "/api/"+orgO1+"/messages"+query)
		seen := map[string]bool{}
		for _, id := range ids {
			assert.False(t, seen[id], "%s repeated with %q", id, query)
			seen[id] = true
		}
		assert.Len(t, seen, 135, query)
	}
}

func TestMessageListView(t *testing.T) {
	r := getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages")
	require.Equal(t, http.StatusOK, r.Code)
	// A page is written with its length, not in chunks.
	assert.Equal(t, strconv.Itoa(r.Body.Len()), r.Header().Get("Content-Length"))
	assert.Equal(t, "application/hal+json; charset=utf-8", r.Header().Get("Content-Type"))
	body := r.json(t)
	find := body["_links"].(map[string]any)["find"].(map[string]any)
	assert.Equal(t, "http://postbox.test/api/"+orgO1+"/messages/{MessageId}", find["href"])
	assert.Equal(t, true, find["isTemplated"])
	assert.Contains(t, body["_links"], "next")

	types := map[string]bool{}
	for _, m := range r.embedded(t, "messages") {
		types[m["Type"].(string)] = true
		for _, field := range []string{"Summary", "Body", "ArchiveReference"} {
			assert.NotContains(t, m, field, "the list view leaves out %s", field)
		}
		for _, field := range []string{"MessageId", "Subject", "Status", "LastChangedDateTime", "LastChangedBy", "ServiceOwner", "ServiceCode", "ServiceEdition", "CreatedDate"} {
			assert.Contains(t, m, field)
		}
		links := m["_links"].(map[string]any)
		assert.Contains(t, links, "metadata")
		assert.Contains(t, links, "portalview")
		if m["Type"] == "FormTask" {
			assert.Equal(t, "application/pdf", links["print"].(map[string]any)["mime-type"])
			assert.NotContains(t, m, "MessageSender")
		} else {
			assert.NotContains(t, links, "print")
			assert.Contains(t, m, "MessageSender")
		}
	}
	assert.Len(t, types, 2)
}

func TestMessageFilters(t *testing.T) {
	cases := []struct {
		filter string
		want   int
	}{
		{"ServiceOwner eq 'Nordlys skatteforvaltning'", 45},
		{"CreatedDate gt DateTime'2024-07-01T00:00:00' and ServiceOwner eq 'Nordlys skatteforvaltning'", 21},
		{"CreatedDate lt DateTime'2023-10-01T00:00:00'", 36},
		{"ServiceOwner eq 'Fjordetaten' or ServiceOwner eq 'Vidde statistikkbyrå'", 90},
		// OData v3 string functions; tolower makes them case-insensitive.
		{"substringof('skatt',Subject)", 11},
		{"substringof('skatt',tolower(Subject)) eq true", 22},
		{"startswith(tolower(Subject),'årsoppgave')", 30},
		{"startswith(toupper(Subject),'ÅRSOPPGAVE FOR') and endswith(Subject,'2023')", 13},
		{"tolower(Subject) eq 'årsoppgave for næringsvirksomhet 2024'", 10},
		{"not (Type eq 'FormTask')", 135 - 90 + 39 - 39},
	}
	// Count the last case's expectation from the unfiltered list, not by hand.
	all := walk(t, shared, ssnP1, "/api/"+orgO1+"/messages?$filter="+url.QueryEscape("Type eq 'Correspondence'"))
	cases[len(cases)-1].want = len(all)
	for _, tc := range cases {
		ids := walk(t, shared, ssnP1, "/api/"+orgO1+"/messages?$filter="+url.QueryEscape(tc.filter))
		assert.Len(t, ids, tc.want, tc.filter)
	}
	for _, bad := range []string{"ServiceOwner eq", "Colour eq 'red'", "CreatedDate gt 'yesterday'", "ServiceEdition gt 1e99", "(Subject eq 'x'"} {
		p := requireProblem(t, getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages?$filter="+url.QueryEscape(bad)), http.StatusBadRequest)
		assert.Equal(t, "urn:postbox:problem:invalid-query", p["type"], bad)
	}
}

// TestMessageFilterFunctionErrors: a function used wrongly is a 400 that names the option and the position.
func TestMessageFilterFunctionErrors(t *testing.T) {
	for filter, detail := range map[string]string{
		"substringof(Subject,'x')":         "$filter: position 12: expected a string as argument 1 of substringof, found 'Subject'",
		"startswith(tolower(Subject,'x')":  "$filter: position 26: expected ')' after the argument of tolower, found ','",
		"tolower(toupper(Subject)) eq 'x'": "$filter: position 8: expected a property name as the argument of tolower, found function 'toupper'",
		"length(Subject) gt 3":             "$filter: position 0: unknown function 'length'; supported: startswith, endswith, contains, substringof, tolower, toupper",
		"tolower(ServiceEdition) eq '1'":   "tolower needs a string property; 'ServiceEdition' is an integer",
		"endswith(tolower(Body),'x')":      "unknown property 'Body'; allowed: ",
	} {
		p := requireProblem(t, getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages?$filter="+url.QueryEscape(filter)), http.StatusBadRequest)
		assert.Equal(t, "urn:postbox:problem:invalid-query", p["type"], filter)
		assert.Contains(t, p["detail"], detail, filter)
	}
}

func TestMessageVisibilityFollowsRights(t *testing.T) {
	cases := []struct {
		ssn, who string
		want     int
	}{
		{ssnP1, orgO1, 135}, {ssnP1, orgO2, 6}, {ssnP1, orgO3, 4}, {ssnP1, "my", 7},
		{ssnP3, orgO1, 50}, {ssnP4, orgO1, 19}, {ssnP5, orgO4, 3}, {ssnP5, orgO6, 2},
	}
	for _, tc := range cases {
		assert.Len(t, walk(t, shared, tc.ssn, "/api/"+tc.who+"/messages"), tc.want, "%s for %s", tc.ssn, tc.who)
	}
	// P4 sees only 7102.
	for _, m := range getAs(t, shared, ssnP4, "/api/"+orgO1+"/messages").embedded(t, "messages") {
		assert.Equal(t, "7102", m["ServiceCode"])
	}
	// P2 holds nothing for O1: refused, and a message of O1 is not found through P2's own mailbox either.
	requireProblem(t, getAs(t, shared, ssnP2, "/api/"+orgO1+"/messages"), http.StatusForbidden)
	requireProblem(t, getAs(t, shared, ssnP2, "/api/my/messages/a3100150"), http.StatusNotFound)
	// P4 cannot open a 4711 message of O1 it cannot see.
	requireProblem(t, getAs(t, shared, ssnP4, "/api/"+orgO1+"/messages/a3101102"), http.StatusNotFound)
}

func TestSingleFormTask(t *testing.T) {
	r := getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages/a3101102")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	m := r.json(t)
	assert.Equal(t, "FormTask", m["Type"])
	assert.Equal(t, "Utfylling", m["Status"])
	links := m["_links"].(map[string]any)
	forms := links["form"].([]any)
	require.Len(t, forms, 1)
	form := forms[0].(map[string]any)
	assert.NotEmpty(t, form["name"])

	f := getAs(t, shared, ssnP1, pathOf(t, form["href"].(string)))
	require.Equal(t, http.StatusOK, f.Code, f.Body.String())
	fr := f.json(t)
	assert.Equal(t, "MainForm", fr["Type"])
	assert.Equal(t, "3106", fr["DataFormatId"])
	assert.EqualValues(t, 21845, fr["DataFormatVersion"])
	assert.Equal(t, "NotValidated", fr["ValidationStatus"])
	fd := fr["_links"].(map[string]any)["formdata"].(map[string]any)
	assert.Equal(t, "application/xml", fd["mime-type"])

	data := getAs(t, shared, ssnP1, pathOf(t, fd["href"].(string)))
	require.Equal(t, http.StatusOK, data.Code)
	assert.Equal(t, "application/xml; charset=utf-8", data.Header().Get("Content-Type"))
	want := demoMessage(t, "a3101102")["Forms"].([]any)[0].(map[string]any)["FormData"].(string)
	assert.Equal(t, want, data.Body.String(), "form data byte for byte")

	requireProblem(t, getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages/a3101102/forms/1"), http.StatusNotFound)
	requireProblem(t, getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages/a3101102/forms/abc"), http.StatusNotFound)
	requireProblem(t, getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages/a9999999"), http.StatusNotFound)
}

func TestSingleCorrespondenceWithAttachments(t *testing.T) {
	srv, _ := newServer(t)
	r := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3100808")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	m := r.json(t)
	demo := demoMessage(t, "a3100808")
	assert.Equal(t, demo["Summary"], m["Summary"])
	assert.Equal(t, demo["Body"], m["Body"])
	assert.Equal(t, demo["ArchiveReference"], m["ArchiveReference"])
	assert.Equal(t, "Fjordetaten", m["MessageSender"])
	opts := m["ReplyOptions"].([]any)
	require.Len(t, opts, 3)
	assert.Equal(t, map[string]any{"Type": "URL", "URL": "https://www.fjordetaten.example/tvangsmulkt", "Text": "Les mer om tvangsmulkt"}, opts[0])
	assert.Equal(t, "4711", opts[2].(map[string]any)["ServiceCode"])
	assert.EqualValues(t, 2, opts[2].(map[string]any)["ServiceEditionCode"])
	links := m["_links"].(map[string]any)
	assert.NotContains(t, links, "form")

	atts := links["attachment"].([]any)
	require.Len(t, atts, 2)
	for i, raw := range atts {
		a := raw.(map[string]any)
		want := demo["Attachments"].([]any)[i].(map[string]any)
		bytes, err := base64.StdEncoding.DecodeString(want["Data"].(string))
		require.NoError(t, err)
		assert.Equal(t, want["FileName"], a["fileName"])
		assert.Equal(t, want["Name"], a["name"])
		assert.Equal(t, want["Encrypted"], a["encrypted"])
		assert.Equal(t, want["SigningLocked"], a["signinglocked"])
		assert.Equal(t, want["SignedByDefault"], a["signedbydefault"])
		assert.EqualValues(t, len(bytes), a["filesize"])

		dl := getAs(t, srv, ssnP1, pathOf(t, a["href"].(string)))
		require.Equal(t, http.StatusOK, dl.Code)
		assert.Equal(t, bytes, dl.Body.Bytes())
		assert.Equal(t, fmt.Sprint(len(bytes)), dl.Header().Get("Content-Length"))
		assert.Contains(t, dl.Header().Get("Content-Disposition"), want["FileName"].(string))

		part := getAs(t, srv, ssnP1, pathOf(t, a["href"].(string)), "Range", "bytes=10-19")
		require.Equal(t, http.StatusPartialContent, part.Code)
		assert.Equal(t, bytes[10:20], part.Body.Bytes())
	}
	assert.Equal(t, "application/pdf", getAs(t, srv, ssnP1, pathOf(t, atts[0].(map[string]any)["href"].(string))).Header().Get("Content-Type"))
}

func TestReadingCorrespondenceMarksItRead(t *testing.T) {
	srv, pool := newServer(t)
	status := func(id string) (string, string) {
		var s, by string
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT status, last_changed_by FROM messages WHERE id = $1`, id).Scan(&s, &by))
		return s, by
	}
	// Listing does not read.
	walk(t, srv, ssnP1, "/api/"+orgO1+"/messages")
	s, _ := status("a3100150")
	require.Equal(t, "Ulest", s)

	r := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3100150")
	require.Equal(t, http.StatusOK, r.Code)
	assert.Equal(t, "Lest", r.json(t)["Status"])
	assert.Equal(t, "Ingrid Fjellheim", r.json(t)["LastChangedBy"])
	s, by := status("a3100150")
	assert.Equal(t, "Lest", s)
	assert.Equal(t, "Ingrid Fjellheim", by)

	// The portal view reads too; an archived one stays archived.
	page := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3100199/portalview")
	require.Equal(t, http.StatusOK, page.Code)
	s, _ = status("a3100199")
	assert.Equal(t, "Lest", s)
}

func TestPortalViewSanitisesTheBody(t *testing.T) {
	srv, pool := newServer(t)
	_, err := pool.Exec(context.Background(), `UPDATE messages SET body = $2, reply_options = $3 WHERE id = $1`, "a3100808",
		`<p onclick="steal()">Hei <b>du</b></p><script>alert(1)</script><img src=x onerror=alert(2)><a href="javascript:alert(3)">x</a>`,
		`[{"Type":"URL","URL":"javascript:alert(4)","Text":"Svar"}]`)
	require.NoError(t, err)
	r := getAs(t, srv, ssnP1, "/api/"+orgO1+"/messages/a3100808/portalview")
	require.Equal(t, http.StatusOK, r.Code)
	assert.Equal(t, "text/html; charset=utf-8", r.Header().Get("Content-Type"))
	assert.Contains(t, r.Header().Get("Content-Security-Policy"), "default-src 'none'")
	page := r.Body.String()
	assert.Contains(t, page, "<b>du</b>")
	for _, bad := range []string{"<script", "onclick", "onerror", "javascript:"} {
		assert.NotContains(t, page, bad)
	}
	assert.Contains(t, page, "vedtak.pdf")
}

func TestMessageResourcesAsXML(t *testing.T) {
	for _, path := range []string{
		"/api/" + orgO1 + "/messages?$top=5",
		"/api/" + orgO1 + "/messages/a3101102",
		"/api/" + orgO1 + "/messages/a3100808",
		"/api/my/messagebox",
	} {
		r := getAs(t, shared, ssnP3, path, "Accept", "application/hal+xml")
		if strings.Contains(path, "a3100808") {
			r = getAs(t, shared, ssnP1, path, "Accept", "application/hal+xml")
		}
		require.Equal(t, http.StatusOK, r.Code, "%s: %s", path, r.Body.String())
		requireWellFormedXML(t, r.Body.Bytes())
	}
	formHref := getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages/a3101102").json(t)["_links"].(map[string]any)["form"].([]any)[0].(map[string]any)["href"].(string)
	form := getAs(t, shared, ssnP1, pathOf(t, formHref), "Accept", "application/hal+xml")
	require.Equal(t, http.StatusOK, form.Code)
	requireWellFormedXML(t, form.Body.Bytes())
	assert.Contains(t, form.Body.String(), `<DataFormatId>3106</DataFormatId>`)
	assert.Contains(t, form.Body.String(), `<link rel="formdata" href="`+formHref+`/formdata" mime-type="application/xml">`)

	x := getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages/a3100808", "Accept", "application/xml").Body.String()
	assert.Contains(t, x, `<link rel="attachment" href="http://postbox.test/api/`+orgO1+`/messages/a3100808/attachments/`)
	assert.Contains(t, x, `<ReplyOptions><ReplyOption><Type>URL</Type>`)
}

func TestMessagebox(t *testing.T) {
	r := getAs(t, shared, ssnP4, "/api/my/messagebox")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	boxes := r.embedded(t, "mailboxes")
	require.Len(t, boxes, 2)
	total := 0
	for _, n := range boxes[1]["Counts"].([]any) {
		total += int(n.(map[string]any)["Count"].(float64))
	}
	assert.Equal(t, 19, total, "P4 counts only what it may see of O1")
	assert.Contains(t, boxes[1]["_links"].(map[string]any), "messages")
}

func TestInstanceScopes(t *testing.T) {
	meta := "Bearer " + personToken(t, ssnP1, "platform:instances.meta")
	assert.Equal(t, http.StatusOK, get(t, shared, "/api/"+orgO1+"/messages", "ApiKey", keyMailbox, "Authorization", meta).Code)
	requireProblem(t, get(t, shared, "/api/"+orgO1+"/messages/a3101102", "ApiKey", keyMailbox, "Authorization", meta), http.StatusForbidden)
	read := "Bearer " + personToken(t, ssnP1, "platform:instances.read")
	assert.Equal(t, http.StatusOK, get(t, shared, "/api/"+orgO1+"/messages/a3101102", "ApiKey", keyMailbox, "Authorization", read).Code)
	// The metadata-only key has no mailbox area, whatever the token.
	requireProblem(t, get(t, shared, "/api/"+orgO1+"/messages", "ApiKey", keyMetadata, "Authorization", read), http.StatusForbidden)
}
