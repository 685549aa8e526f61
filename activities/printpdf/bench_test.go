package printpdf

import (
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

func benchmarkRender(b *testing.B, doc Document) {
	r, err := NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Render(doc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "PDFs/s")
}

func BenchmarkRender60Fields(b *testing.B) {
	benchmarkRender(b, benchDocument(Form{Name: "FJ-0471 Årsoppgave", Type: "MainForm", XML: generatedForm(60)}))
}

// BenchmarkRenderEmptyPage is the floor: one page with the fonts and only the
// header, so the cost of the fields is the difference to Render60Fields.
func BenchmarkRenderEmptyPage(b *testing.B) {
	doc := benchDocument()
	benchmarkRender(b, doc)
}
