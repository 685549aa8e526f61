package xsd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// doc50KB is a valid 4422/38190 form of about 50 KB. No demo schema lets a
// document grow by repetition (5571 allows at most 20 short Budsjettpost),
// so it pads the one unbounded text field, Kommentar.
func doc50KB(tb testing.TB) []byte {
	form := formData(tb, "", "4422/38190")
	line := "Lønnsoppgjøret ble gjennomført i mars; tallene omfatter overtid &amp; tillegg for skift.\n"
	var b strings.Builder
	b.WriteString("  <Kommentar>")
	for b.Len()+len(form) < 50<<10 {
		b.WriteString(line)
	}
	b.WriteString("</Kommentar>\n</melding>")
	return []byte(strings.Replace(form, "</melding>", b.String(), 1))
}

func BenchmarkValidate50KB(b *testing.B) {
	s := compileDemo(b, "4422/38190", Limits{})
	doc := doc50KB(b)
	res, err := s.Validate(doc)
	require.NoError(b, err)
	require.True(b, res.Valid(), "%+v", res.Errors)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := s.Validate(doc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "validations/s")
}

// BenchmarkParseOnly50KB is the baseline: the same hardened parse that
// Validate does, without the schema.
func BenchmarkParseOnly50KB(b *testing.B) {
	doc := doc50KB(b)
	lim := Limits{}.normalize()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		s := newSession(lim)
		d, ok, err := parse(s, doc, lim)
		if !ok || err != nil {
			b.Fatal(s.close(), err)
		}
		d.free()
		s.close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "parses/s")
}
