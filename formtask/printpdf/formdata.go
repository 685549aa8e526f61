package printpdf

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrBadFormData marks form XML that can never be rendered (malformed, DOCTYPE,
// too deep or too large). Retrying does not help; errors.Is works on the
// wrapped errors Render returns.
var ErrBadFormData = errors.New("printpdf: bad form data")

const (
	maxDepth    = 256
	maxElements = 10000
)

// field is one printed table row: a leaf element (or an element with text of
// its own) and its whitespace-trimmed text.
type field struct {
	el    *element
	value string
}

type element struct {
	parent *element
	name   string
	index  int            // 1-based position among the siblings of the same name
	counts map[string]int // children per name, final once parsing is done
}

// label is the element's path below the root, e.g. "Innsender/Navn". Elements
// that occur more than once under their parent get their position,
// "Budsjettpost[2]/Belop", so repeated groups stay apart.
func (e *element) label() string {
	if e.parent == nil {
		return e.name
	}
	var parts []string
	for x := e; x.parent != nil; x = x.parent {
		s := x.name
		if x.parent.counts[x.name] > 1 {
			s += "[" + strconv.Itoa(x.index) + "]"
		}
		parts = append(parts, s)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		if i > 0 {
			b.WriteByte('/')
		}
	}
	return b.String()
}

// parseFields returns the fields of a form in document order. Attributes are
// not printed: in these forms they carry schema metadata (dataFormatId, orid),
// not answers.
func parseFields(data []byte) ([]field, error) {
	type frame struct {
		el       *element
		text     []byte
		hasChild bool
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	// Strict (the default, set to be explicit) rejects unknown entities and
	// unclosed tags; with no CharsetReader only UTF-8 documents are accepted.
	d.Strict = true
	var (
		fields   []field
		stack    []frame
		root     *element
		elements int
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.Directive:
			// A DOCTYPE is the only directive allowed in a document; none of
			// our forms has one, and refusing it rules out entity tricks.
			return nil, errors.New("DOCTYPE is not allowed")
		case xml.StartElement:
			if len(stack) == 0 && root != nil {
				return nil, errors.New("more than one root element")
			}
			if len(stack) >= maxDepth {
				return nil, fmt.Errorf("elements nested deeper than %d", maxDepth)
			}
			if elements++; elements > maxElements {
				return nil, fmt.Errorf("more than %d elements", maxElements)
			}
			el := &element{name: t.Name.Local}
			if len(stack) == 0 {
				root = el
			} else {
				top := &stack[len(stack)-1]
				top.hasChild = true
				p := top.el
				if p.counts == nil {
					p.counts = make(map[string]int)
				}
				p.counts[el.name]++
				el.parent, el.index = p, p.counts[el.name]
			}
			stack = append(stack, frame{el: el})
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, errors.New("text outside the root element")
				}
				continue
			}
			top := &stack[len(stack)-1]
			top.text = append(top.text, t...)
		case xml.EndElement:
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			v := strings.TrimSpace(string(top.text))
			// Empty leaves are printed too: the form had the field, unanswered.
			if v != "" || (!top.hasChild && top.el != root) {
				fields = append(fields, field{el: top.el, value: v})
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return fields, nil
}
