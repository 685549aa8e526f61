package odata

import "strings"

// MaxOrderByItems bounds the number of $orderby keys.
const MaxOrderByItems = 10

// OrderItem is one $orderby key.
type OrderItem struct {
	Field string
	Desc  bool
}

// ParseOrderBy parses "Field [asc|desc], ...". Direction keywords are
// case-insensitive; property names are kept as written.
func ParseOrderBy(s string) ([]OrderItem, error) {
	items, err := parseOrderBy(s)
	return items, inOption("$orderby", err)
}

func parseOrderBy(s string) ([]OrderItem, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	var items []OrderItem
	for {
		t := p.next()
		if t.kind != tokIdent {
			return nil, p.errAt(t, "expected a property name, found %s", t.describe())
		}
		if len(items) == MaxOrderByItems {
			return nil, p.errAt(t, "more than %d $orderby items", MaxOrderByItems)
		}
		item := OrderItem{Field: t.text}
		if d := p.peek(); d.kind == tokIdent && (strings.EqualFold(d.text, "asc") || strings.EqualFold(d.text, "desc")) {
			p.next()
			item.Desc = strings.EqualFold(d.text, "desc")
		}
		items = append(items, item)
		switch t := p.next(); t.kind {
		case tokEOF:
			return items, nil
		case tokComma:
		default:
			return nil, p.errAt(t, "expected ',' or end of input, found %s", t.describe())
		}
	}
}
