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
//
// Every Render loads and subsets the two embedded fonts again: fpdf has no
// way to share a parsed UTF-8 font between documents, and this is most of
// the cost of a small PDF (see BenchmarkRenderEmptyPage).
type Renderer struct{}

const fontFamily = "go"

// NewRenderer checks that the embedded fonts load; fpdf would otherwise only
// report a broken font when the first Render selects it.
func NewRenderer() (*Renderer, error) {
	r := &Renderer{}
	p := r.newPDF()
	p.SetFont(fontFamily, "", 9)
	p.SetFont(fontFamily, "B", 9)
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("printpdf: load fonts: %w", err)
	}
	return r, nil
}

func (r *Renderer) newPDF() *fpdf.Fpdf {
	p := fpdf.New("P", "mm", "A4", "")
	// Sorted catalogs: fpdf otherwise writes fonts in map order.
	p.SetCatalogSort(true)
	p.SetAutoPageBreak(false, 0) // pages are laid out by paginate
	p.SetMargins(margin, top, margin)
	p.SetCellMargin(cellMargin)
	p.AddUTF8FontFromBytes(fontFamily, "", goregular.TTF)
	p.AddUTF8FontFromBytes(fontFamily, "B", gobold.TTF)
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

	p := r.newPDF()
	p.SetCreationDate(doc.Time)
	p.SetModificationDate(doc.Time)
	p.SetTitle(clean(doc.ServiceName), true)
	p.SetAuthor(clean(doc.ServiceOwner), true)
	p.SetLang("nb-NO")

	l := &layout{pdf: p}
	l.header(doc)
	for i, f := range doc.Forms {
		l.form(f, forms[i])
	}
	l.attachments(doc.Attachments)
	l.draw(l.paginate())

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
)

// item is a row of wrapped text: a title, a heading or a table row.
type item struct {
	st    *style
	cols  []column
	lines [][]string // per column
	n     int        // lines of the tallest column
	head  *item      // table header to repeat when the item continues on a new page
	keep  int        // following items to keep on the same page
}

func (it *item) height(from, to int) float64 {
	return float64(to-from)*it.st.lineHeight() + 2*pad
}

type layout struct {
	pdf   *fpdf.Fpdf
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
	l.pdf.SetFont(fontFamily, s, size)
}

func (l *layout) add(st *style, cols []column, head *item, texts ...string) *item {
	it := &item{st: st, cols: cols, head: head, lines: make([][]string, len(cols))}
	for c, col := range cols {
		l.setFont(st.boldCol(c), st.size)
		lines := l.pdf.SplitText(clean(texts[c]), col.w)
		if len(lines) == 0 {
			lines = []string{""}
		}
		it.lines[c] = lines
		it.n = max(it.n, len(lines))
	}
	l.items = append(l.items, it)
	return it
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

// placement puts lines [from, to) of an item on a page at y.
type placement struct {
	it       *item
	y        float64
	from, to int
}

// paginate lays the items out on pages before anything is drawn, so the
// footer can say "Side N av M" without fpdf's page-count alias (which would
// also replace "{nb}" in form data and can leave digits out of the font subset).
func (l *layout) paginate() [][]placement {
	var (
		pages [][]placement
		y     float64
		fresh bool // nothing but a repeated table header on the page yet
	)
	place := func(it *item, gap float64, from, to int) {
		y += gap
		pages[len(pages)-1] = append(pages[len(pages)-1], placement{it, y, from, to})
		y += it.height(from, to)
	}
	newPage := func(head *item) {
		pages = append(pages, nil)
		y = top
		if head != nil {
			place(head, 0, 0, head.n)
		}
		fresh = true
	}
	linesFit := func(it *item, space float64) int {
		return max(0, int((space-2*pad)/it.st.lineHeight()))
	}

	newPage(nil)
	for i, it := range l.items {
		// Keep a heading with the start of what follows it.
		var keep float64
		for _, next := range l.items[i+1 : min(len(l.items), i+1+it.keep)] {
			keep += next.st.gap + next.height(0, 1)
		}
		for from := 0; from < it.n; {
			gap := it.st.gap
			if fresh {
				gap = 0
			}
			rest := it.height(from, it.n)
			switch {
			case fresh || y+gap+rest+keep <= bottom:
				// Fits, or cannot fit anywhere better: place what fits here.
				to := it.n
				if y+gap+rest > bottom {
					to = min(it.n, from+max(1, linesFit(it, bottom-y-gap)))
				}
				place(it, gap, from, to)
				fresh, keep, from = false, 0, to
				if from < it.n {
					newPage(it.head)
				}
			case rest > bottom-top-headHeight(it):
				// Taller than a page: start it here rather than leave a gap.
				if n := linesFit(it, bottom-y-gap); n > 0 {
					place(it, gap, from, from+n)
					keep, from = 0, from+n
				}
				newPage(it.head)
			default:
				newPage(it.head)
			}
		}
	}
	return pages
}

func headHeight(it *item) float64 {
	if it.head == nil {
		return 0
	}
	return it.head.height(0, it.head.n)
}

func (l *layout) draw(pages [][]placement) {
	p := l.pdf
	p.SetDrawColor(160, 160, 160)
	p.SetFillColor(230, 230, 230)
	p.SetLineWidth(0.2)
	for i, page := range pages {
		p.AddPage()
		for _, pl := range page {
			l.drawItem(pl)
		}
		l.setFont(false, 8)
		p.SetXY(margin, pageH-12)
		p.CellFormat(contentW, 4, fmt.Sprintf("Side %d av %d", i+1, len(pages)), "", 0, "R", false, 0, "")
	}
}

func (l *layout) drawItem(pl placement) {
	p, it := l.pdf, pl.it
	lh := it.st.lineHeight()
	h := it.height(pl.from, pl.to)
	x := margin
	for c, col := range it.cols {
		switch {
		case it.st.fill:
			p.Rect(x, pl.y, col.w, h, "FD")
		case it.st.border:
			p.Rect(x, pl.y, col.w, h, "D")
		}
		l.setFont(it.st.boldCol(c), it.st.size)
		for k := pl.from; k < min(pl.to, len(it.lines[c])); k++ {
			p.SetXY(x, pl.y+pad+float64(k-pl.from)*lh)
			p.CellFormat(col.w, lh, it.lines[c][k], "", 0, col.align, false, 0, "")
		}
		x += col.w
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
