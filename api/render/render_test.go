package render_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api/render"
)

func TestPickMediaType(t *testing.T) {
	cases := []struct {
		accept string
		want   string
		ok     bool
	}{
		{"", "application/hal+json", true},
		{"*/*", "application/hal+json", true},
		{"application/xml", "application/xml", true},
		{"application/json;q=0.5, application/hal+xml", "application/hal+xml", true},
		{"application/*;q=0.2, application/xml;q=0.9", "application/xml", true},
		{"text/html", "", false},
		{"application/json;q=0", "", false},
	}
	for _, tc := range cases {
		got, ok := render.PickMediaType(tc.accept)
		assert.Equal(t, tc.ok, ok, tc.accept)
		assert.Equal(t, tc.want, got, tc.accept)
	}
}

// A resource in HAL+XML: the self link is the element's href, other links are <link> elements, embedded
// lists are nested resources named by their relation.
func TestWriteHALXML(t *testing.T) {
	type item struct {
		Name  string
		Links render.Links `json:"_links"`
	}
	var links, itemLinks render.Links
	links.Add("self", render.Link{Href: "/things"}).Add("next", render.Link{Href: "/things?page=2"})
	itemLinks.Add("self", render.Link{Href: "/things/1"})
	coll := struct {
		When     render.Timestamp
		Links    render.Links    `json:"_links"`
		Embedded render.Embedded `json:"_embedded"`
	}{render.TimestampOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), links, render.EmbedList("things", []item{{"one", itemLinks}})}

	var buf bytes.Buffer
	require.NoError(t, render.WriteHALXML(&buf, coll))
	assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<resource href="/things"><When>2026-01-02T03:04:05</When><link rel="next" href="/things?page=2"></link>`+
		`<resource rel="things" href="/things/1"><Name>one</Name></resource></resource>`, buf.String())
}

type entry struct {
	Code  string
	Links render.Links `json:"_links"`
}

// The fields of an embedded struct are the resource's own in XML as in JSON, also when its type is
// unexported (the single metadata views embed their list entry so).
func TestWriteHALXMLEmbeddedStruct(t *testing.T) {
	var links render.Links
	links.Add("self", render.Link{Href: "/things/1"})
	detail := struct {
		entry
		Extra int
		*entryPointer
	}{entry: entry{Code: "4711", Links: links}, Extra: 2, entryPointer: &entryPointer{Edition: 1}}

	var buf bytes.Buffer
	require.NoError(t, render.WriteHALXML(&buf, detail))
	assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<resource href="/things/1"><Code>4711</Code><Extra>2</Extra><Edition>1</Edition></resource>`, buf.String())
}

type entryPointer struct{ Edition int }

// omitempty leaves out in XML what it leaves out in JSON: an empty slice too, but never a struct.
func TestWriteHALXMLOmitEmpty(t *testing.T) {
	v := struct {
		Options []string         `json:",omitempty"`
		Note    string           `json:",omitempty"`
		When    render.Timestamp `json:",omitempty"`
	}{Options: []string{}}
	var buf bytes.Buffer
	require.NoError(t, render.WriteHALXML(&buf, v))
	assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<resource><When>0001-01-01T00:00:00</When></resource>`, buf.String())
}
