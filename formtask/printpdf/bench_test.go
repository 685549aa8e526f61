package printpdf

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// generatedForm returns a form with n leaf fields in groups of five, like the
// demo forms but longer; every seventh value is long enough to wrap.
func generatedForm(n int) []byte {
	var b strings.Builder
	b.WriteString(`<Skjema dataFormatProvider="SERES" dataFormatId="9999" dataFormatVersion="1">`)
	for i := range n {
		if i%5 == 0 {
			b.WriteString("<Post>")
		}
		v := fmt.Sprintf("Verdi %d for næringsvirksomhet på Å", i)
		if i%7 == 0 {
			v = strings.Repeat("Lang tekst om årsoppgaven og søknaden. ", 6)
		}
		fmt.Fprintf(&b, "<Felt%d>%s</Felt%d>", i%5, v, i%5)
		if i%5 == 4 || i == n-1 {
			b.WriteString("</Post>")
		}
	}
	b.WriteString("</Skjema>")
	return []byte(b.String())
}

func benchDocument(forms ...Form) Document {
	return Document{
		ServiceName:      "Årsoppgave for næringsvirksomhet",
		ServiceCode:      "4711",
		ServiceEdition:   2,
		ServiceOwner:     "Fjordetaten",
		Reportee:         "Fjellheim Maskin AS (310123455)",
		Submitter:        "Ingrid Fjellheim",
		Status:           "Sendt og arkivert",
		ArchiveReference: "AR1002258",
		Time:             time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC),
		Forms:            forms,
	}
}

// benchmarkRender reports PDFs/s for doc and checks, outside the timing,
// that it takes the font setup the benchmark is about.
func benchmarkRender(b *testing.B, r *Renderer, doc Document, embedded bool) float64 {
	out, err := r.Render(doc)
	if err != nil {
		b.Fatal(err)
	}
	if bytes.Contains(out, []byte("/FontFile2")) != embedded {
		b.Fatalf("fonts embedded: %v, want %v", !embedded, embedded)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Render(doc); err != nil {
			b.Fatal(err)
		}
	}
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "PDFs/s")
	return rate
}

// BenchmarkRender60Fields renders a 60-field form: baseline is the Norwegian
// document in the embedded fonts, as every document was before the core
// fonts; core is the same document as it is rendered now; fallback has one
// Sami letter and so still embeds the fonts. Ratios are to the baseline.
func BenchmarkRender60Fields(b *testing.B) {
	doc := benchDocument(Form{Name: "FJ-0471 Årsoppgave", Type: "MainForm", XML: generatedForm(60)})
	sami := doc
	sami.Reportee = "Čáhppes Maskin AS (310123455)"
	r, embedAlways := newRenderer(b), newRenderer(b)
	embedAlways.embedAlways = true
	var baseline float64
	b.Run("baseline", func(b *testing.B) {
		baseline = benchmarkRender(b, embedAlways, doc, true)
	})
	for _, bm := range []struct {
		name     string
		doc      Document
		embedded bool
	}{{"core", doc, false}, {"fallback", sami, true}} {
		b.Run(bm.name, func(b *testing.B) {
			rate := benchmarkRender(b, r, bm.doc, bm.embedded)
			if baseline > 0 { // not when -bench leaves the baseline out
				b.ReportMetric(rate/baseline, "x_baseline")
			}
		})
	}
}

// BenchmarkRenderEmptyPage is the floor: one page with only the header, so
// the cost of the fields is the difference to Render60Fields.
func BenchmarkRenderEmptyPage(b *testing.B) {
	doc := benchDocument()
	r, embedAlways := newRenderer(b), newRenderer(b)
	embedAlways.embedAlways = true
	b.Run("core", func(b *testing.B) { benchmarkRender(b, r, doc, false) })
	b.Run("embedded", func(b *testing.B) { benchmarkRender(b, embedAlways, doc, true) })
}
