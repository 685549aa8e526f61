package odata

import (
	"fmt"
	"strings"
)

// ParseFilter parses a $filter value. Callers should skip it when the option
// is absent: an empty or blank value is an error.
func ParseFilter(s string) (Expr, error) {
	e, err := parseFilter(s)
	return e, inOption("$filter", err)
}

func parseFilter(s string) (Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		if t.kind == tokRParen {
			return nil, p.errAt(t, "')' without matching '('")
		}
		return nil, p.errAt(t, "expected 'and', 'or' or end of input, found %s", t.describe())
	}
	return e, nil
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

// next consumes a token; the trailing EOF token is never consumed.
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) errAt(t token, format string, args ...any) error {
	return &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf(format, args...)}
}

func isWord(t token, word string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, word)
}

// enter bounds recursion so deeply nested input fails fast instead of
// growing the stack.
func (p *parser) enter(t token) error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errAt(t, "nested more than %d levels deep", MaxDepth)
	}
	return nil
}

// nested parses with parse one level deeper than here; t is the token that opens the level.
func (p *parser) nested(t token, parse func() (Expr, error)) (Expr, error) {
	if err := p.enter(t); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	return parse()
}

func (p *parser) or() (Expr, error) {
	return p.leftAssoc("or", p.and, func(l, r Expr) Expr { return Or{L: l, R: r} })
}

func (p *parser) and() (Expr, error) {
	return p.leftAssoc("and", p.unary, func(l, r Expr) Expr { return And{L: l, R: r} })
}

// leftAssoc parses operands joined by the operator word, grouping them from the left.
func (p *parser) leftAssoc(word string, operand func() (Expr, error), join func(l, r Expr) Expr) (Expr, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for isWord(p.peek(), word) {
		p.next()
		r, err := operand()
		if err != nil {
			return nil, err
		}
		l = join(l, r)
	}
	return l, nil
}

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	if !isWord(t, "not") {
		return p.primary()
	}
	p.next()
	x, err := p.nested(t, p.unary)
	if err != nil {
		return nil, err
	}
	return Not{X: x}, nil
}

func (p *parser) primary() (Expr, error) {
	t := p.peek()
	switch {
	case t.kind == tokLParen:
		p.next()
		e, err := p.nested(t, p.or)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, p.errAt(c, "expected ')' to close '(' at position %d, found %s", t.pos, c.describe())
		}
		return e, nil
	case t.kind == tokIdent && !isKeyword(t.text) && p.toks[p.i+1].kind == tokLParen && !isCaseFunc(t.text):
		return p.call()
	}
	return p.comparison()
}

// operand is one side of a comparison: a property, possibly under tolower or toupper, or a literal.
type operand struct {
	tok     token // the literal or the property name
	start   token // where the operand starts: tok, or tolower or toupper
	isField bool
	fcase   Case
}

func (p *parser) comparison() (Expr, error) {
	first := p.peek()
	l, err := p.operand(func(t token) error {
		if p.i == 0 {
			return p.errAt(t, "expected a condition, found %s", t.describe())
		}
		return p.errAt(t, "expected a condition after '%s', found %s", p.toks[p.i-1].text, t.describe())
	})
	if err != nil {
		return nil, err
	}
	opTok := p.next()
	op := Op(0)
	if opTok.kind == tokIdent {
		for o := Eq; o <= Le; o++ {
			if strings.EqualFold(opTok.text, o.String()) {
				op = o
			}
		}
	}
	if op == 0 {
		after := first.describe()
		if l.isField {
			after = "'" + clip(property(l.tok.text, l.fcase)) + "'"
		}
		return nil, p.errAt(opTok, "expected eq, ne, gt, ge, lt or le after %s, found %s", after, opTok.describe())
	}
	r, err := p.operand(func(t token) error {
		if l.isField {
			return p.errAt(t, "expected a value after '%s', found %s", opTok.text, t.describe())
		}
		return p.errAt(t, "expected a property name after '%s', found %s", opTok.text, t.describe())
	})
	if err != nil {
		return nil, err
	}
	switch {
	case l.isField && r.isField:
		return nil, p.errAt(r.start, "expected a value after '%s', found property '%s'", opTok.text, r.tok.text)
	case !l.isField && !r.isField:
		return nil, p.errAt(l.tok, "a comparison needs a property name on one side")
	case !l.isField:
		l, r, op = r, l, op.flip()
	}
	if r.tok.lit.Kind == LitNull && op != Eq && op != Ne {
		return nil, p.errAt(opTok, "null can only be compared with eq or ne")
	}
	return Compare{Field: l.tok.text, Case: l.fcase, Op: op, Value: r.tok.lit}, nil
}

// operand reads a property name or a literal; bad reports anything else.
func (p *parser) operand(bad func(token) error) (operand, error) {
	t := p.peek()
	switch {
	case t.kind == tokLiteral:
		p.next()
		return operand{tok: t, start: t}, nil
	case t.kind != tokIdent:
		return operand{}, bad(t)
	}
	switch strings.ToLower(t.text) {
	case "true", "false":
		p.next()
		t.kind, t.lit = tokLiteral, Literal{Kind: LitBool, Bool: strings.EqualFold(t.text, "true")}
		return operand{tok: t, start: t}, nil
	case "null":
		p.next()
		t.kind, t.lit = tokLiteral, Literal{Kind: LitNull}
		return operand{tok: t, start: t}, nil
	}
	field, c, err := p.property(bad)
	return operand{tok: field, start: t, isField: true, fcase: c}, err
}

var caseFuncs = map[string]Case{"tolower": ToLower, "toupper": ToUpper}

func isCaseFunc(word string) bool {
	_, ok := caseFuncs[strings.ToLower(word)]
	return ok
}

// property reads a property name, or tolower(property) or toupper(property), and returns the name's token
// and the case conversion; bad reports a token that is no property.
func (p *parser) property(bad func(token) error) (token, Case, error) {
	t := p.peek()
	if t.kind != tokIdent || isKeyword(t.text) {
		return token{}, AsIs, bad(t)
	}
	p.next()
	if p.peek().kind != tokLParen {
		return t, AsIs, nil
	}
	lower := strings.ToLower(t.text)
	c, ok := caseFuncs[lower]
	switch {
	case !ok && funcNames[lower] != "":
		return token{}, AsIs, p.errAt(t, "function '%s' can only be used as a condition", t.text)
	case !ok:
		return token{}, AsIs, p.errAt(t, "unknown function '%s'; a property can be wrapped in tolower or toupper", t.text)
	}
	p.next() // '('
	arg := p.next()
	if arg.kind != tokIdent || isKeyword(arg.text) {
		return token{}, AsIs, p.errAt(arg, "expected a property name as the argument of %s, found %s", lower, arg.describe())
	}
	if p.peek().kind == tokLParen {
		return token{}, AsIs, p.errAt(arg, "expected a property name as the argument of %s, found function '%s'", lower, arg.text)
	}
	if r := p.next(); r.kind != tokRParen {
		return token{}, AsIs, p.errAt(r, "expected ')' after the argument of %s, found %s", lower, r.describe())
	}
	return arg, c, nil
}

var funcNames = map[string]FuncName{
	"startswith":  StartsWith,
	"endswith":    EndsWith,
	"contains":    Contains,
	"substringof": Contains,
}

// call parses a string function; substringof('x',F) takes its arguments in
// the opposite order to the others.
func (p *parser) call() (Expr, error) {
	nameTok := p.next()
	lower := strings.ToLower(nameTok.text)
	name, ok := funcNames[lower]
	if !ok {
		return nil, p.errAt(nameTok, "unknown function '%s'; supported: startswith, endswith, contains, substringof, tolower, toupper", nameTok.text)
	}
	p.next() // '('
	first, second := "property name", "string"
	if lower == "substringof" {
		first, second = second, first
	}
	var (
		field, arg token
		fieldCase  Case
	)
	for n, want := range []string{first, second} {
		if n == 1 {
			if t := p.next(); t.kind != tokComma {
				return nil, p.errAt(t, "expected ',' after the first argument of %s, found %s", lower, t.describe())
			}
		}
		bad := func(t token) error {
			return p.errAt(t, "expected a %s as argument %d of %s, found %s", want, n+1, lower, t.describe())
		}
		if want == "property name" {
			var err error
			if field, fieldCase, err = p.property(bad); err != nil {
				return nil, err
			}
			continue
		}
		if arg = p.next(); arg.kind != tokLiteral || arg.lit.Kind != LitString {
			return nil, bad(arg)
		}
	}
	if t := p.next(); t.kind != tokRParen {
		return nil, p.errAt(t, "expected ')' after the arguments of %s, found %s", lower, t.describe())
	}
	var e Expr = Func{Name: name, Field: field.text, Case: fieldCase, Arg: arg.lit.Str}
	return p.boolSuffix(e)
}

// boolSuffix folds the OData v3 idiom "substringof('x',F) eq true" into the
// call itself (or its negation).
func (p *parser) boolSuffix(e Expr) (Expr, error) {
	opTok := p.peek()
	eq, ne := isWord(opTok, "eq"), isWord(opTok, "ne")
	if !eq && !ne {
		return e, nil
	}
	p.next()
	v := p.next()
	if !isWord(v, "true") && !isWord(v, "false") {
		return nil, p.errAt(v, "expected true or false after '%s', found %s", opTok.text, v.describe())
	}
	if eq != isWord(v, "true") {
		// Counted like a written "not" so the rendered form parses within the same limit.
		if err := p.enter(opTok); err != nil {
			return nil, err
		}
		p.depth--
		return Not{X: e}, nil
	}
	return e, nil
}
