package printpdf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoData is the part of deploy/demo/demo.json the tests use.
type demoData struct {
	ServiceOwners []struct{ Code, Name string }
	Organizations []struct{ OrganizationNumber, Name string }
	Persons       []struct{ SocialSecurityNumber, Name string }
	Services      []struct {
		ServiceCode        string
		ServiceEditionCode int
		ServiceName        string
	}
	Messages []struct {
		MessageID           string `json:"MessageId"`
		Reportee            string
		ServiceCode         string
		ServiceEdition      int
		Status              string
		ServiceOwnerCode    string
		LastChangedDateTime string
		LastChangedBy       string
		ArchiveReference    *string
		Forms               []struct{ Type, Name, FormData string }
		Attachments         []struct{ FileName, AttachmentType, Data string }
	}
}

func loadDemo(t testing.TB) *demoData {
	t.Helper()
	b, err := os.ReadFile("../../deploy/demo/demo.json")
	require.NoError(t, err)
	var d demoData
	require.NoError(t, json.Unmarshal(b, &d))
	return &d
}

// document builds the Document for a demo message the way a caller would.
func (d *demoData) document(t testing.TB, id string) Document {
	t.Helper()
	for _, m := range d.Messages {
		if m.MessageID != id {
			continue
		}
		tm, err := time.Parse("2006-01-02T15:04:05", m.LastChangedDateTime)
		require.NoError(t, err)
		doc := Document{
			ServiceCode:    m.ServiceCode,
			ServiceEdition: m.ServiceEdition,
			Reportee:       m.Reportee,
			Submitter:      m.LastChangedBy,
			Status:         m.Status,
			Time:           tm,
		}
		for _, s := range d.Services {
			if s.ServiceCode == m.ServiceCode && s.ServiceEditionCode == m.ServiceEdition {
				doc.ServiceName = s.ServiceName
			}
		}
		for _, o := range d.ServiceOwners {
			if o.Code == m.ServiceOwnerCode {
				doc.ServiceOwner = o.Name
			}
		}
		for _, o := range d.Organizations {
			if o.OrganizationNumber == m.Reportee {
				doc.Reportee = o.Name + " (" + m.Reportee + ")"
			}
		}
		for _, p := range d.Persons {
			if p.SocialSecurityNumber == m.Reportee {
				doc.Reportee = p.Name + " (" + m.Reportee + ")"
			}
		}
		if m.ArchiveReference != nil {
			doc.ArchiveReference = *m.ArchiveReference
		}
		for _, f := range m.Forms {
			doc.Forms = append(doc.Forms, Form{Name: f.Name, Type: f.Type, XML: []byte(f.FormData)})
		}
		for _, a := range m.Attachments {
			data, err := base64.StdEncoding.DecodeString(a.Data)
			require.NoError(t, err)
			doc.Attachments = append(doc.Attachments, Attachment{FileName: a.FileName, AttachmentType: a.AttachmentType, Size: int64(len(data))})
		}
		return doc
	}
	t.Fatalf("no demo message %s", id)
	return Document{}
}

func newRenderer(t testing.TB) *Renderer {
	t.Helper()
	r, err := NewRenderer()
	require.NoError(t, err)
	return r
}

// forFontSets runs f once per font setup: with the default renderer, which
// sets the test data (all of it cp1252) in the core fonts, and with one that
// embeds the Go fonts as it does for any other text.
func forFontSets(t *testing.T, f func(t *testing.T, r *Renderer)) {
	for _, embed := range []bool{false, true} {
		name := "core fonts"
		if embed {
			name = "embedded fonts"
		}
		t.Run(name, func(t *testing.T) {
			r := newRenderer(t)
			r.embedAlways = embed
			f(t, r)
		})
	}
}

// render renders doc and checks the font setup: the Go fonts are embedded
// (as FontFile2), the core fonts are only named.
func render(t testing.TB, r *Renderer, doc Document, embedded bool) []byte {
	t.Helper()
	b, err := r.Render(doc)
	require.NoError(t, err)
	require.Equal(t, embedded, bytes.Contains(b, []byte("/FontFile2")), "embedded font file")
	require.Equal(t, !embedded, bytes.Contains(b, []byte("/BaseFont /Helvetica")), "core font")
	return b
}

var textNode = regexp.MustCompile(`>([^<]*[^<\s][^<]*)<`)

// xmlValues lists the text of every element in src, found without the
// package's parser.
func xmlValues(src []byte) []string {
	var vs []string
	for _, m := range textNode.FindAllSubmatch(src, -1) {
		vs = append(vs, html.UnescapeString(strings.TrimSpace(string(m[1]))))
	}
	return vs
}

// assertText checks that text contains each of want, naming only the missing
// part rather than printing the whole document.
func assertText(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		assert.True(t, strings.Contains(text, w), "PDF text lacks %q", w)
	}
}

func TestRenderDemoMessages(t *testing.T) {
	forFontSets(t, testRenderDemoMessages)
}

func testRenderDemoMessages(t *testing.T, r *Renderer) {
	d := loadDemo(t)
	tests := []struct {
		id   string
		want []string // besides every form value
	}{
		{"a3101102", []string{
			"Årsoppgave for næringsvirksomhet", // service and form name
			"4711, utgave 2", "Fjordetaten", "Fjellheim Maskin AS (310123455)", "Ingrid Fjellheim", "Utfylling",
			"Tidspunkt", "10.02.2025 kl. 08:23:51",
			"FJ-0471 Årsoppgave for næringsvirksomhet", "Hovedskjema",
			"Felt Verdi", "Innsender/Organisasjonsnummer 310123455", "Kontaktperson/Telefon +4740000001",
			"Vedlegg Ingen vedlegg.",
		}},
		{"a3101116", []string{
			"Søknad om næringstilskudd", "5302, utgave 1", "Nordlys skatteforvaltning", "Ingrid Fjellheim (12857812326)",
			"NS-5302 Søknad om næringstilskudd Hovedskjema", "NS-5302B Budsjettspesifikasjon Underskjema",
			"Prosjekt/Tittel Digital lagerstyring",
			"Budsjettpost[1]/Beskrivelse Reiser til leverandører",
			"Budsjettpost[2]/Beskrivelse Innkjøp av utstyr",
			"Budsjettpost[3]/Belop 243000",
		}},
		{"a3100297", []string{
			"Sendt og arkivert", "Arkivreferanse AR1002258",
			"Vedlegg Filnavn Type Størrelse revisjonsberetning.pdf Revisjonsberetning 693 B",
		}},
		{"a3100129", []string{
			"Kvartalsvis lønnsstatistikk", "Vidde statistikkbyrå", "AR1018832",
			"lonnsgrunnlag.pdf Dokumentasjon 677 B", "logo.png Bilde 73 B",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			doc := d.document(t, tt.id)
			text := pdfText(t, render(t, r, doc, r.embedAlways))
			assertText(t, text, tt.want...)
			for _, f := range doc.Forms {
				vs := xmlValues(f.XML)
				require.NotEmpty(t, vs)
				assertText(t, text, vs...)
			}
			assertText(t, text, "Side 1 av 1")
		})
	}
}

// Every form task in the demo data, all five form schemas, prints every value.
func TestAllDemoFormTasks(t *testing.T) {
	forFontSets(t, testAllDemoFormTasks)
}

func testAllDemoFormTasks(t *testing.T, r *Renderer) {
	d := loadDemo(t)
	n := 0
	for _, m := range d.Messages {
		if len(m.Forms) == 0 {
			continue
		}
		n++
		doc := d.document(t, m.MessageID)
		text := pdfText(t, render(t, r, doc, r.embedAlways))
		for _, f := range doc.Forms {
			assertText(t, text, f.Name)
			assertText(t, text, xmlValues(f.XML)...)
		}
		for _, a := range doc.Attachments {
			assertText(t, text, a.FileName+" "+a.AttachmentType+" "+formatSize(a.Size))
		}
	}
	assert.Equal(t, 96, n)
}

// The library's own decoding handles the core fonts' WinAnsiEncoding and
// the Latin-1 part of the embedded fonts' CMap, Norwegian letters included:
// an extractor that knows nothing of this package reads them back.
func TestNorwegianLettersWithPlainExtractor(t *testing.T) {
	forFontSets(t, func(t *testing.T, r *Renderer) {
		d := loadDemo(t)
		b := render(t, r, d.document(t, "a3101116"), r.embedAlways)
		assertText(t, plainText(t, b), "Søknad om næringstilskudd", "Reiser til leverandører", "Innkjøp av utstyr", "Ingen vedlegg")
	})
}

func plainText(t testing.TB, b []byte) string {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	rd, err := r.GetPlainText()
	require.NoError(t, err)
	plain, err := io.ReadAll(rd)
	require.NoError(t, err)
	return string(plain)
}

// Text that fits cp1252 is set in the core fonts, nothing embedded, and
// reads back right, cp1252's letters and signs beyond Latin-1 included.
func TestCoreFontsForCP1252(t *testing.T) {
	values := []string{
		"Blåbærsyltetøy på Ærø, Østre Ålen",
		"100 € – 5 ‰ — «sitat» “anført” ‘enkelt’ „tysk“ ‹›",
		"Œuvre Šta Žiga šž Ÿ ƒ ˆ˜ † ‡ • ™",
		"Müller Straße, Ñandú, Ça va, Þórr",
	}
	var x strings.Builder
	x.WriteString("<Skjema>")
	for i, v := range values {
		fmt.Fprintf(&x, "<Felt%d>%s</Felt%d>", i, v, i)
	}
	x.WriteString("</Skjema>")
	doc := benchDocument(Form{Name: "Skjema – ØÆÅ", Type: "MainForm", XML: []byte(x.String())})
	b := render(t, newRenderer(t), doc, false)
	assertText(t, pdfText(t, b), values...)
	assertText(t, pdfText(t, b), "Skjema – ØÆÅ", "Status Sendt og arkivert", "Side 1 av 1")
	assertText(t, plainText(t, b), values...)
}

// A core font's widths are indexed by cp1252 code, not by rune: a value of
// euro signs and dashes (codes 0x80 and 0x96) wraps where the column is full.
func TestCoreFontsWrapByWidth(t *testing.T) {
	l := &layout{pdf: newPDF(&coreFonts), fonts: &coreFonts}
	value := strings.Repeat("€–", 150)
	l.add(&rowStyle, fieldCols, nil, "Felt", value)
	l.wrap()
	lines := l.items[0].lines[1]
	require.Greater(t, len(lines), 2)
	require.Equal(t, cp1252Codes(value), strings.Join(lines, ""))
	avail := fieldCols[1].w - 2*cellMargin
	width := func(s string) float64 { return l.pdf.GetStringWidth(coreFonts.write(s)) }
	for i, line := range lines {
		w := width(line)
		assert.LessOrEqual(t, w, avail, "line %d", i+1)
		if i < len(lines)-1 {
			next := string([]rune(lines[i+1])[0])
			assert.Greater(t, w+width(next), avail-0.01, "line %d is not full", i+1)
		}
	}
}

// One character beyond cp1252 anywhere in the document, or the ellipsis,
// which fpdf's line breaking would take for a space in cp1252, sets all of it
// in the embedded fonts.
func TestEmbeddedFontsForAnyOtherCharacter(t *testing.T) {
	form := func(x string) func(*Document) {
		return func(d *Document) { d.Forms[0].XML = []byte("<Skjema>" + x + "</Skjema>") }
	}
	tests := map[string]struct {
		edit func(*Document)
		want string
	}{
		"reportee":        {func(d *Document) { d.Reportee = "Čállit AS" }, "Avgiver Čállit AS"},
		"submitter":       {func(d *Document) { d.Submitter = "Đorđe Łukasz" }, "Innsender Đorđe Łukasz"},
		"form name":       {func(d *Document) { d.Forms[0].Name = "Skjema ŋ" }, "Skjema ŋ"},
		"field name":      {form("<Čađa>1</Čađa>"), "Čađa 1"},
		"field value":     {form("<Navn>Ωμέγα</Navn>"), "Navn Ωμέγα"},
		"ellipsis":        {form("<Navn>og så videre…</Navn>"), "Navn og så videre…"},
		"attachment":      {func(d *Document) { d.Attachments = []Attachment{{"ŧ.pdf", "Vedlegg", 1}} }, "ŧ.pdf Vedlegg 1 B"},
		"invalid UTF-8":   {func(d *Document) { d.Status = "Sendt \xff" }, "Status Sendt \uFFFD"},
		"outside the BMP": {func(d *Document) { d.Status = "Sendt 😀" }, "Status Sendt \uFFFD"},
	}
	r := newRenderer(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			doc := benchDocument(Form{Name: "Skjema", Type: "MainForm", XML: []byte("<Skjema><Navn>Ås</Navn></Skjema>")})
			tt.edit(&doc)
			assertText(t, pdfText(t, render(t, r, doc, true)), tt.want)
		})
	}
}

func TestUnicodeBeyondLatin1(t *testing.T) {
	values := []string{
		"Áltá – Guovdageaidnu", // en dash
		"Čázádat đ ŋ š ŧ ž",    // Northern Sami
		"Łódź, Gdańsk",         // Polish
		"Привет, Ωμέγα",        // Cyrillic, Greek
		"100 € {nb}",           // must not be taken for fpdf's page-count alias
		"東京",                   // not in the Go fonts: blank glyphs, right text
	}
	var x strings.Builder
	x.WriteString("<Skjema>")
	for i, v := range values {
		fmt.Fprintf(&x, "<Felt%d>%s</Felt%d>", i, v, i)
	}
	x.WriteString("<Emoji>Takk 😀</Emoji></Skjema>")
	doc := benchDocument(Form{Name: "Skjema", Type: "MainForm", XML: []byte(x.String())})
	doc.Reportee = "Sámi Čállit AS (310000000)"
	text := pdfText(t, render(t, newRenderer(t), doc, true))
	assertText(t, text, values...)
	assertText(t, text, "Sámi Čállit AS (310000000)")
	// fpdf addresses glyphs with 16 bits; beyond that the replacement character.
	assertText(t, text, "Emoji Takk \uFFFD")
}

func TestPagination(t *testing.T) {
	forFontSets(t, testPagination)
}

func testPagination(t *testing.T, r *Renderer) {
	xmlData := generatedForm(300)
	b := render(t, r, benchDocument(Form{Name: "Stort skjema", Type: "MainForm", XML: xmlData}), r.embedAlways)
	pages := pdfPages(t, b)
	require.Greater(t, len(pages), 5)
	for i, p := range pages {
		assert.Equal(t, fmt.Sprintf("Side %d av %d", i+1, len(pages)), p[len(p)-1], "footer of page %d", i+1)
		if i > 0 && i < len(pages)-1 {
			assert.Equal(t, []string{"Felt", "Verdi"}, p[:2], "repeated table header on page %d", i+1)
		}
	}
	text := pdfText(t, b)
	assertText(t, text, xmlValues(xmlData)...)
	assertText(t, text, "Post[60]/Felt4 Verdi 299 for næringsvirksomhet på Å")
}

// TestCompressionOnlyWhereItPays: a one-page print in the core fonts is written uncompressed (a zlib writer
// per document costs more than the few KB it saves), a longer one or one that embeds fonts compressed; the
// text reads the same either way.
func TestCompressionOnlyWhereItPays(t *testing.T) {
	onePage := benchDocument(Form{Name: "FJ-0471 Årsoppgave", Type: "MainForm", XML: generatedForm(10)})
	long := benchDocument(Form{Name: "Stort skjema", Type: "MainForm", XML: generatedForm(300)})
	embedded := onePage
	embedded.Reportee = "Čáhppes Maskin AS (310123455)"
	r := newRenderer(t)
	for _, c := range []struct {
		name                 string
		doc                  Document
		embedded, compressed bool
	}{{"one page", onePage, false, false}, {"pages", long, false, true}, {"embedded fonts", embedded, true, true}} {
		t.Run(c.name, func(t *testing.T) {
			b := render(t, r, c.doc, c.embedded)
			assert.Equal(t, c.compressed, bytes.Contains(b, []byte("/FlateDecode")), "compressed")
			text := pdfText(t, b)
			assertText(t, text, xmlValues(c.doc.Forms[0].XML)...)
			assertText(t, text, c.doc.Reportee)
		})
	}
}

func TestValueLongerThanAPage(t *testing.T) {
	forFontSets(t, testValueLongerThanAPage)
}

func testValueLongerThanAPage(t *testing.T, r *Renderer) {
	long := strings.Repeat("Dette er en svært lang merknad om årsregnskapet. ", 800)
	form := Form{Name: "Merknad", Type: "MainForm", XML: []byte("<Skjema><Kort>før</Kort><Merknad>" + long + "</Merknad><Kort>etter</Kort></Skjema>")}
	b := render(t, r, benchDocument(form), r.embedAlways)
	pages := pdfPages(t, b)
	require.Greater(t, len(pages), 3)
	// The long row continues under a repeated header; cells hold no other text.
	var merged []string
	for i, p := range pages {
		body := p[:len(p)-1]
		if i > 0 {
			require.Equal(t, []string{"Felt", "Verdi"}, body[:2])
			body = body[2:]
		}
		merged = append(merged, body...)
	}
	text := strings.Join(merged, " ")
	assertText(t, text, "Kort[1] før Merknad "+strings.TrimSpace(long)+" Kort[2] etter")
}

func TestDeterministic(t *testing.T) {
	forFontSets(t, testDeterministic)
}

func testDeterministic(t *testing.T, r *Renderer) {
	d := loadDemo(t)
	doc := d.document(t, "a3101116")
	doc.Attachments = []Attachment{{FileName: "a.pdf", AttachmentType: "Vedlegg", Size: 1 << 20}}
	fresh := newRenderer(t)
	fresh.embedAlways = r.embedAlways
	first := render(t, fresh, doc, r.embedAlways)
	for range 10 {
		b, err := r.Render(doc)
		require.NoError(t, err)
		require.True(t, bytes.Equal(first, b), "renders differ")
	}
	assertText(t, string(first), "/CreationDate (D:20250210131239)", "/ModDate (D:20250210131239)")
}

func TestConcurrentRender(t *testing.T) {
	forFontSets(t, testConcurrentRender)
}

func testConcurrentRender(t *testing.T, r *Renderer) {
	doc := benchDocument(Form{Name: "Skjema", Type: "MainForm", XML: generatedForm(60)})
	want := render(t, r, doc, r.embedAlways)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range cap(errs) {
		wg.Go(func() {
			b, err := r.Render(doc)
			if err == nil && !bytes.Equal(want, b) {
				err = errors.New("concurrent render differs")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestRenderErrors(t *testing.T) {
	r := newRenderer(t)
	_, err := r.Render(Document{ServiceName: "x"})
	require.Error(t, err, "zero Time")
	assert.NotErrorIs(t, err, ErrBadFormData)

	doc := benchDocument(Form{Name: "Skjema", XML: []byte("<Skjema><Felt>1</Skjema>")})
	_, err = r.Render(doc)
	require.ErrorIs(t, err, ErrBadFormData)
	assert.Contains(t, err.Error(), `printpdf: bad form data: form 1 ("Skjema"): XML syntax error`)
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1,0 kB", 1536: "1,5 kB", 5 << 20: "5,0 MB", 3 << 30: "3,0 GB"} {
		assert.Equal(t, want, formatSize(n), n)
	}
}
