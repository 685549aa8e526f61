package render_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/api/render/rendertest"
)

// encodingJSON is v as encoding/json writes it with HTML left unescaped, newline included.
func encodingJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return buf.String()
}

func TestAppendStringEscapesAsEncodingJSON(t *testing.T) {
	texts := []string{"", "plain", rendertest.Tricky, "\xe2\x80", "a\xe2\x80\xa8b", "\xed\xa0\x80", "\U0010FFFF"}
	for c := range 256 {
		texts = append(texts, string([]byte{byte(c)}), "x"+string(rune(c))+"y")
		// Long enough to be read eight bytes at a time, with the byte or rune in each place of a word.
		for at := range 17 {
			plain := []byte("abcdefghijklmnopqrstuvwxyz/0123")
			texts = append(texts, string(plain[:at])+string([]byte{byte(c)})+string(plain[at:]),
				string(plain[:at])+string(rune(c))+string(plain[at:]), string(plain[:at])+"\u2028"+string(plain[at:]))
		}
	}
	for _, s := range texts {
		assert.Equal(t, encodingJSON(t, s), string(render.AppendString(nil, s))+"\n", "%q", s)
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add(rendertest.Tricky)
	f.Add("\xf0\x9f\x98")
	f.Fuzz(func(t *testing.T, s string) {
		got := render.AppendString(nil, s)
		if want := encodingJSON(t, s); string(got)+"\n" != want {
			t.Fatalf("%q: %s, encoding/json %s", s, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("%q: not UTF-8", s)
		}
	})
}

func TestLinkAppendsAsEncodingJSON(t *testing.T) {
	for _, l := range []render.Link{{}, {Href: "https://x/y"}, rendertest.Filled[render.Link]()} {
		rendertest.SameAsEncodingJSON(t, &l)
	}
}

// item is a resource that writes its own JSON, as the message resources do.
type item struct {
	Name  string
	Links render.Links `json:"_links"`
}

func (i *item) AppendJSON(b []byte) []byte {
	b = append(b, `{"Name":`...)
	b = render.AppendString(b, i.Name)
	b = append(b, `,"_links":{"self":`...)
	self := i.Links["self"].(render.Link)
	b = self.AppendJSON(b)
	return append(b, "}}"...)
}

// A collection of items that write their own JSON is written by them, as encoding/json would write it;
// any other collection by encoding/json.
func TestCollectionAppendsAsEncodingJSON(t *testing.T) {
	var links render.Links
	links.Add("self", render.Link{Href: "https://x/api/r1/messages?$top=2"}).Add("next", render.Link{Href: "https://x/api/r1/messages?$skip=2&$top=2"})
	links.Add("find", render.Link{Href: "https://x/api/r1/messages/{MessageId}", IsTemplated: true})
	links.AddArray("form", []render.Link{rendertest.Filled[render.Link](), {Href: "<&>"}})
	items := []item{{Name: rendertest.Tricky, Links: render.Links{"self": render.Link{Href: "https://x/1"}}}, {Links: render.Links{"self": render.Link{}}}}
	type plain struct{ Name string }
	for _, c := range []render.Collection{
		{Links: links, Embedded: render.EmbedList("messages", items)},
		{Links: links, Embedded: render.EmbedList("messages", []item(nil))},
		{Embedded: render.EmbedList("messages", items[:1])},
		{Links: links, Embedded: render.EmbedList("plain", []plain{{Name: rendertest.Tricky}})},
		{Links: render.Links{"other": 42}, Embedded: render.EmbedList("messages", items)},
	} {
		got, err := render.AppendJSON(nil, c)
		require.NoError(t, err)
		assert.Equal(t, encodingJSON(t, c), string(got))
	}
}
