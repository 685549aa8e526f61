package printpdf

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFields(t *testing.T) {
	src := `<?xml version="1.0" encoding="UTF-8"?>
<!-- kommentar -->
<Skjema xmlns="urn:x" dataFormatId="1" orid="7">
  <Innsender orid="8"><Navn>Fjellheim &amp; Sønn</Navn><Tom/></Innsender>
  <Post><Belop>1</Belop></Post>
  <Post><Belop>2</Belop><Under><A>a</A><A>b</A></Under></Post>
  <Blandet>tekst<B>b</B></Blandet>
  <Enkel> <![CDATA[<rå> tekst]]> </Enkel>
</Skjema>`
	fields, err := parseFields([]byte(src))
	require.NoError(t, err)
	var got [][2]string
	for _, f := range fields {
		got = append(got, [2]string{f.el.label(), f.value})
	}
	assert.Equal(t, [][2]string{
		{"Innsender/Navn", "Fjellheim & Sønn"},
		{"Innsender/Tom", ""},
		{"Post[1]/Belop", "1"},
		{"Post[2]/Belop", "2"},
		{"Post[2]/Under/A[1]", "a"},
		{"Post[2]/Under/A[2]", "b"},
		{"Blandet/B", "b"},
		{"Blandet", "tekst"},
		{"Enkel", "<rå> tekst"},
	}, got)
}

func TestBadFormData(t *testing.T) {
	tests := map[string]string{
		"malformed":          "<Skjema><Felt>1</Skjema>",
		"unclosed":           "<Skjema><Felt>1</Felt>",
		"empty":              "",
		"only whitespace":    " \n ",
		"doctype":            `<!DOCTYPE Skjema><Skjema/>`,
		"entity declaration": `<!DOCTYPE Skjema [<!ENTITY x "yyyy">]><Skjema>&x;</Skjema>`,
		"external entity":    `<!DOCTYPE Skjema [<!ENTITY x SYSTEM "file:///etc/passwd">]><Skjema>&x;</Skjema>`,
		"unknown entity":     `<Skjema>&x;</Skjema>`,
		"two roots":          "<Skjema/><Skjema/>",
		"text after root":    "<Skjema/>tekst",
		"latin-1 declared":   `<?xml version="1.0" encoding="ISO-8859-1"?><Skjema/>`,
		"invalid UTF-8":      "<Skjema>\xff</Skjema>",
		"too deep":           strings.Repeat("<a>", maxDepth+1) + strings.Repeat("</a>", maxDepth+1),
		"too many elements":  "<Skjema>" + strings.Repeat("<a/>", maxElements) + "</Skjema>",
	}
	r := newRenderer(t)
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := r.Render(benchDocument(Form{Name: "Skjema", XML: []byte(src)}))
			require.ErrorIs(t, err, ErrBadFormData)
		})
	}
}

func TestParseFieldsLimitsAreInclusive(t *testing.T) {
	_, err := parseFields([]byte(strings.Repeat("<a>", maxDepth) + strings.Repeat("</a>", maxDepth)))
	require.NoError(t, err)
	_, err = parseFields([]byte("<Skjema>" + strings.Repeat("<a/>", maxElements-1) + "</Skjema>"))
	require.NoError(t, err)
}
