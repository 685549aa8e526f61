// Laying the items out on pages: what fits where, headers carried over, and drawing them.

package printpdf

import (
	"fmt"
)

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
		p.CellFormat(contentW, 4, l.fonts.write(fmt.Sprintf("Side %d av %d", i+1, len(pages))), "", 0, "R", false, 0, "")
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
			p.CellFormat(col.w, lh, l.fonts.write(it.lines[c][k]), "", 0, col.align, false, 0, "")
		}
		x += col.w
	}
}
