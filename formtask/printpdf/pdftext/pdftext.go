// Package pdftext reads back the text of the PDFs printpdf renders, for tests: through each font's
// ToUnicode CMap, or for a core font (which has none) through its WinAnsiEncoding.
package pdftext

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf16"

	"github.com/ledongthuc/pdf"
)

// Pages extracts the text of every page, one line per text object (fpdf
// writes each cell line as one), the way a viewer maps glyphs back to text:
// through the font's ToUnicode CMap, or for a core font (which has none)
// through its WinAnsiEncoding.
//
// github.com/ledongthuc/pdf parses the file, streams and content operators,
// but its own text decoding is not used: following ISO 32000 to the letter
// it adds a bfrange offset to the last byte only, while fpdf writes one
// range <0000> <FFFF> <0000>, so everything above U+00FF would come out
// wrong. Viewers (pdf.js, poppler) carry into the next byte; so does cmap.
func Pages(b []byte) ([][]string, error) {
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	var pages [][]string
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		fonts := map[string]decoder{}
		for _, name := range p.Fonts() {
			f := p.Font(name)
			if f.V.Key("ToUnicode").IsNull() {
				if enc := f.V.Key("Encoding").Name(); enc != "WinAnsiEncoding" {
					return nil, fmt.Errorf("font %s has no ToUnicode CMap and encoding %q", name, enc)
				}
				fonts[name] = f.Encoder()
				continue
			}
			m, err := readToUnicode(f.V.Key("ToUnicode"))
			if err != nil {
				return nil, err
			}
			fonts[name] = m
		}
		var (
			lines []string
			line  strings.Builder
			font  decoder
		)
		pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
			args := make([]pdf.Value, stk.Len())
			for i := len(args) - 1; i >= 0; i-- {
				args[i] = stk.Pop()
			}
			switch op {
			case "Tf":
				font = fonts[args[0].Name()]
			case "Tj":
				line.WriteString(font.Decode(args[0].RawString()))
			case "TJ":
				for j := 0; j < args[0].Len(); j++ {
					if v := args[0].Index(j); v.Kind() == pdf.String {
						line.WriteString(font.Decode(v.RawString()))
					}
				}
			case "ET":
				if line.Len() > 0 { // SetFont writes text objects without text
					lines = append(lines, line.String())
				}
				line.Reset()
			}
		})
		pages = append(pages, lines)
	}
	return pages, nil
}

// Text is all text, lines joined by spaces, for substring checks that
// must also match values wrapped onto several lines.
func Text(b []byte) (string, error) {
	pages, err := Pages(b)
	var all []string
	for _, p := range pages {
		all = append(all, p...)
	}
	return strings.Join(all, " "), err
}

// decoder maps the bytes of a string operand to text.
type decoder interface{ Decode(string) string }

type bfrange struct {
	lo, hi uint16
	dst    []uint16
}

// cmap is the part of a ToUnicode CMap fpdf writes: two-byte codes mapped
// by bfchar and bfrange.
type cmap struct {
	chars  map[uint16][]uint16
	ranges []bfrange
}

var (
	cmapSection = regexp.MustCompile(`(?s)begin(bfchar|bfrange)(.*?)end(?:bfchar|bfrange)`)
	cmapHex     = regexp.MustCompile(`<([0-9A-Fa-f]*)>`)
)

func readToUnicode(v pdf.Value) (*cmap, error) {
	if v.Kind() != pdf.Stream {
		return nil, errors.New("font without ToUnicode CMap")
	}
	rd := v.Reader()
	defer rd.Close()
	src, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	m := &cmap{chars: map[uint16][]uint16{}}
	for _, sec := range cmapSection.FindAllStringSubmatch(string(src), -1) {
		var codes [][]uint16
		for _, h := range cmapHex.FindAllStringSubmatch(sec[2], -1) {
			b, err := hex.DecodeString(h[1])
			if err != nil {
				return nil, err
			}
			if len(b)%2 != 0 {
				return nil, fmt.Errorf("odd-length CMap string %q", h[0])
			}
			var u []uint16
			for i := 0; i < len(b); i += 2 {
				u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
			}
			codes = append(codes, u)
		}
		if sec[1] == "bfchar" {
			for i := 0; i+1 < len(codes); i += 2 {
				m.chars[codes[i][0]] = codes[i+1]
			}
			continue
		}
		if len(codes)%3 != 0 {
			return nil, errors.New("bfrange with array destinations is not supported")
		}
		for i := 0; i < len(codes); i += 3 {
			m.ranges = append(m.ranges, bfrange{codes[i][0], codes[i+1][0], codes[i+2]})
		}
	}
	return m, nil
}

func (m *cmap) Decode(s string) string {
	var out []uint16
	for i := 0; i+1 < len(s); i += 2 {
		code := uint16(s[i])<<8 | uint16(s[i+1])
		if u, ok := m.chars[code]; ok {
			out = append(out, u...)
			continue
		}
		mapped := false
		for _, r := range m.ranges {
			if r.lo <= code && code <= r.hi {
				u := append([]uint16(nil), r.dst...)
				u[len(u)-1] += code - r.lo
				out = append(out, u...)
				mapped = true
				break
			}
		}
		if !mapped {
			out = append(out, 0xFFFD)
		}
	}
	return string(utf16.Decode(out))
}
