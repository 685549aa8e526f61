// Package printpdf renders the print version (PDF) of a submitted form task:
// a header describing the task, every field of every form as a two-column
// table, and the list of attachments.
//
// Rendering is deterministic: the same Document gives the same bytes, so a
// digest of the Document can serve as a cache key for the PDF.
package printpdf

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/text/encoding/charmap"
)

// Document is the snapshot of a form task to print.
type Document struct {
	ServiceName      string
	ServiceCode      string
	ServiceEdition   int
	ServiceOwner     string
	Reportee         string // display name and number of the party the form is for
	Submitter        string // who submitted or signed
	Status           string // e.g. "Sendt og arkivert"
	ArchiveReference string // empty while not archived
	// Time of the snapshot, required. It is printed as wall-clock time in its
	// own location (pass t.In(loc) to choose one) and is the PDF creation
	// date, which keeps the output free of the render time.
	Time        time.Time
	Forms       []Form
	Attachments []Attachment
	// Signatures of a task signed by several, in order; none for a task signed once (then the document,
	// and its digest, are as before signing by several).
	Signatures []Signature `json:",omitempty"`
}

// Signature is one signature of the task: who signed, for whom, when, in which signing step.
type Signature struct {
	Step       int
	Signer     string
	OnBehalfOf string
	Time       time.Time // printed as wall-clock time in its own location, as Document.Time
}

// Form is one form of the task; XML is its form data.
type Form struct {
	Name string
	Type string // "MainForm" or "SubForm"
	XML  []byte
}

// Attachment is listed by name, type and size; its content is not printed.
type Attachment struct {
	FileName       string
	AttachmentType string
	Size           int64 // bytes
}

// Renderer renders Documents. It is safe for concurrent use.
type Renderer struct {
	embedAlways bool // use goFonts for every document; for tests and benchmarks
}

// fontSet is one way to set a document's text.
type fontSet struct {
	family string
	embed  bool // add the Go fonts as UTF-8 fonts under family
	// measure maps cleaned text to what SplitText measures: it looks widths
	// up by rune, and a core font's widths are indexed by cp1252 code.
	measure func(string) string
	// write maps a wrapped line to what CellFormat writes: for a core font
	// the cp1252 bytes.
	write func(string) string
}

var (
	// goFonts print any text in the Basic Multilingual Plane, but fpdf parses
	// and subsets each for every document (some 3 ms apiece): it has no way
	// to share a parsed UTF-8 font between documents.
	goFonts = fontSet{family: "go", embed: true, measure: same, write: same}
	// coreFonts are the standard Helvetica fonts every viewer has: nothing to
	// parse or embed, but only text that fits cp1252 (fitsCoreFonts).
	coreFonts = fontSet{family: "helvetica", measure: cp1252Codes, write: codeBytes}
)

// NewRenderer checks that the fonts load; fpdf would otherwise only report a
// broken font when the first Render selects it.
func NewRenderer() (*Renderer, error) {
	for _, fs := range []*fontSet{&goFonts, &coreFonts} {
		p := newPDF(fs)
		p.SetFont(fs.family, "", 9)
		p.SetFont(fs.family, "B", 9)
		if err := p.Error(); err != nil {
			return nil, fmt.Errorf("printpdf: load fonts: %w", err)
		}
	}
	return &Renderer{}, nil
}

func newPDF(fs *fontSet) *fpdf.Fpdf {
	p := fpdf.New("P", "mm", "A4", "")
	// Sorted catalogs: fpdf otherwise writes fonts in map order.
	p.SetCatalogSort(true)
	p.SetAutoPageBreak(false, 0) // pages are laid out by paginate
	p.SetMargins(margin, top, margin)
	p.SetCellMargin(cellMargin)
	if fs.embed {
		p.AddUTF8FontFromBytes(fs.family, "", goregular.TTF)
		p.AddUTF8FontFromBytes(fs.family, "B", gobold.TTF)
	}
	return p
}

// Render returns the PDF for doc. Form XML that cannot be printed gives an
// error wrapping ErrBadFormData.
func (r *Renderer) Render(doc Document) ([]byte, error) {
	if doc.Time.IsZero() {
		return nil, errors.New("printpdf: Document.Time is required")
	}
	forms := make([][]field, len(doc.Forms))
	for i, f := range doc.Forms {
		fields, err := parseFields(f.XML)
		if err != nil {
			return nil, fmt.Errorf("%w: form %d (%q): %v", ErrBadFormData, i+1, f.Name, err)
		}
		forms[i] = fields
	}

	l := &layout{}
	l.header(doc)
	for i, f := range doc.Forms {
		l.form(f, forms[i])
	}
	l.attachments(doc.Attachments)
	l.signatures(doc.Signatures)

	// Most documents fit the core fonts, which cost next to nothing; the
	// rest need the embedded fonts.
	l.fonts = &goFonts
	if !r.embedAlways && l.fitsCoreFonts() {
		l.fonts = &coreFonts
	}
	p := newPDF(l.fonts)
	p.SetCreationDate(doc.Time)
	p.SetModificationDate(doc.Time)
	// The metadata is written as UTF-16, whatever the fonts.
	p.SetTitle(clean(doc.ServiceName), true)
	p.SetAuthor(clean(doc.ServiceOwner), true)
	p.SetLang("nb-NO")
	l.pdf = p
	l.wrap()
	pages := l.paginate()
	// A page's content is compressed with a zlib writer of its own, which fpdf makes anew for each stream:
	// about 1.7 MB allocated and cleared, a millisecond and more, where a one-page print in the core fonts
	// saves some 3 KB (5.5 KB rather than 2.2 KB for a ten-field form). Such prints are written
	// uncompressed; longer ones, and those that embed fonts, stay compressed.
	p.SetCompression(len(pages) > 1 || l.fonts.embed)
	l.draw(pages)

	var buf bytes.Buffer
	if err := p.Output(&buf); err != nil {
		return nil, fmt.Errorf("printpdf: %w", err)
	}
	return buf.Bytes(), nil
}

// Page geometry in mm.
const (
	pageW, pageH = 210.0, 297.0
	margin       = 15.0
	top          = 15.0
	bottom       = pageH - 18 // room for the footer
	contentW     = pageW - 2*margin
	cellMargin   = 1.5 // left and right inside a cell
	pad          = 1.0 // above and below the lines of a row
)

type style struct {
	size      float64 // pt
	bold      bool
	boldLabel bool // first column bold
	border    bool
	fill      bool
	gap       float64 // space above, dropped at the top of a page
}

var (
	titleStyle   = style{size: 16, bold: true}
	metaStyle    = style{size: 9, boldLabel: true}
	headingStyle = style{size: 12, bold: true, gap: 6}
	noteStyle    = style{size: 9}
	theadStyle   = style{size: 9, bold: true, border: true, fill: true}
	rowStyle     = style{size: 9, border: true}
)

func (s *style) lineHeight() float64 { return s.size * 25.4 / 72 * 1.25 }

func (s *style) boldCol(c int) bool { return s.bold || (s.boldLabel && c == 0) }

type column struct {
	w     float64
	align string
}

var (
	metaCols       = []column{{45, "L"}, {contentW - 45, "L"}}
	fullCol        = []column{{contentW, "L"}}
	fieldCols      = []column{{65, "L"}, {contentW - 65, "L"}}
	attachmentCols = []column{{95, "L"}, {55, "L"}, {contentW - 150, "R"}}
	signatureCols  = []column{{15, "L"}, {60, "L"}, {60, "L"}, {contentW - 135, "L"}}
)

// item is a row of wrapped text: a title, a heading or a table row.
type item struct {
	st    *style
	cols  []column
	texts []string   // per column, cleaned
	lines [][]string // per column, texts wrapped
	n     int        // lines of the tallest column
	head  *item      // table header to repeat when the item continues on a new page
	keep  int        // following items to keep on the same page
}

func (it *item) height(from, to int) float64 {
	return float64(to-from)*it.st.lineHeight() + 2*pad
}

type layout struct {
	pdf   *fpdf.Fpdf
	fonts *fontSet
	items []*item
	// current font, so SetFont is only written to the page when it changes
	bold bool
	size float64
}

func (l *layout) setFont(bold bool, size float64) {
	if bold == l.bold && size == l.size {
		return
	}
	l.bold, l.size = bold, size
	s := ""
	if bold {
		s = "B"
	}
	l.pdf.SetFont(l.fonts.family, s, size)
}

// add collects the texts; they are wrapped by wrap once the fonts are chosen.
func (l *layout) add(st *style, cols []column, head *item, texts ...string) *item {
	it := &item{st: st, cols: cols, head: head, texts: make([]string, len(texts))}
	for c, s := range texts {
		it.texts[c] = clean(s)
	}
	l.items = append(l.items, it)
	return it
}

// fitsCoreFonts reports whether the document's text (all in items but the
// ASCII footer) can be set in the core fonts.
func (l *layout) fitsCoreFonts() bool {
	for _, it := range l.items {
		for _, s := range it.texts {
			for _, r := range s {
				// As a code rune '…' is 0x85 (NEL), a space to SplitText,
				// which would drop it at a line break.
				if _, ok := charmap.Windows1252.EncodeRune(r); !ok || r == '…' {
					return false
				}
			}
		}
	}
	return true
}

func (l *layout) wrap() {
	for _, it := range l.items {
		it.lines = make([][]string, len(it.cols))
		for c, col := range it.cols {
			l.setFont(it.st.boldCol(c), it.st.size)
			lines := l.pdf.SplitText(l.fonts.measure(it.texts[c]), col.w)
			if len(lines) == 0 {
				lines = []string{""}
			}
			it.lines[c] = lines
			it.n = max(it.n, len(lines))
		}
	}
}

func (l *layout) header(doc Document) {
	l.add(&titleStyle, fullCol, nil, doc.ServiceName)
	archive := doc.ArchiveReference
	if archive == "" {
		archive = "–"
	}
	for _, kv := range [][2]string{
		{"Tjeneste", doc.ServiceCode + ", utgave " + strconv.Itoa(doc.ServiceEdition)},
		{"Tjenesteeier", doc.ServiceOwner},
		{"Avgiver", doc.Reportee},
		{"Innsender", doc.Submitter},
		{"Status", doc.Status},
		{"Arkivreferanse", archive},
		{"Tidspunkt", doc.Time.Format("02.01.2006 kl. 15:04:05")},
	} {
		l.add(&metaStyle, metaCols, nil, kv[0], kv[1])
	}
}

var formTypes = map[string]string{"MainForm": "Hovedskjema", "SubForm": "Underskjema"}

func (l *layout) form(f Form, fields []field) {
	h := l.add(&headingStyle, fullCol, nil, f.Name)
	kind, ok := formTypes[f.Type]
	if !ok {
		kind = f.Type
	}
	l.add(&noteStyle, fullCol, nil, kind)
	if len(fields) == 0 {
		h.keep = 1
		l.add(&noteStyle, fullCol, nil, "Skjemaet har ingen felt.")
		return
	}
	h.keep = 3 // type, table header and the first row
	thead := l.add(&theadStyle, fieldCols, nil, "Felt", "Verdi")
	for _, fl := range fields {
		l.add(&rowStyle, fieldCols, thead, fl.el.label(), fl.value)
	}
}

func (l *layout) attachments(as []Attachment) {
	h := l.add(&headingStyle, fullCol, nil, "Vedlegg")
	h.keep = 2
	if len(as) == 0 {
		h.keep = 1
		l.add(&noteStyle, fullCol, nil, "Ingen vedlegg.")
		return
	}
	thead := l.add(&theadStyle, attachmentCols, nil, "Filnavn", "Type", "Størrelse")
	for _, a := range as {
		l.add(&rowStyle, attachmentCols, thead, a.FileName, a.AttachmentType, formatSize(a.Size))
	}
}

func (l *layout) signatures(ss []Signature) {
	if len(ss) == 0 {
		return
	}
	h := l.add(&headingStyle, fullCol, nil, "Signaturer")
	h.keep = 2
	thead := l.add(&theadStyle, signatureCols, nil, "Steg", "Signert av", "På vegne av", "Tidspunkt")
	for _, s := range ss {
		l.add(&rowStyle, signatureCols, thead, strconv.Itoa(s.Step), s.Signer, s.OnBehalfOf, s.Time.Format("02.01.2006 15:04:05"))
	}
}

// clean makes text printable with fpdf's UTF-8 fonts, which address glyphs
// by 16-bit code: runes outside the Basic Multilingual Plane become U+FFFD
// (fpdf would index past its width table), tabs become spaces and other
// control characters are dropped.
func clean(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case r > 0xFFFD:
			return '\uFFFD'
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}

func same(s string) string { return s }

// cp1252Codes maps text that fits cp1252 to runes equal to its codes.
func cp1252Codes(s string) string {
	return strings.Map(func(r rune) rune {
		b, _ := charmap.Windows1252.EncodeRune(r)
		return rune(b)
	}, s)
}

// codeBytes turns runes below 256 into one byte each.
func codeBytes(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

// formatSize gives a byte count the Norwegian way: "677 B", "1,5 kB".
func formatSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, unit := float64(n)/1024, 0
	for f >= 1024 && unit < 3 {
		f /= 1024
		unit++
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	return strings.Replace(s, ".", ",", 1) + " " + []string{"kB", "MB", "GB", "TB"}[unit]
}
