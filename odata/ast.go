package odata

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Expr is a node of a parsed $filter: And, Or, Not, Compare or Func.
// String renders canonical $filter text that parses back to an equal tree.
type Expr interface {
	String() string
	expr()
}

// And is true when both operands are.
type And struct{ L, R Expr }

// Or is true when either operand is.
type Or struct{ L, R Expr }

// Not negates X.
type Not struct{ X Expr }

// Compare compares a property with a value. The property is always on the
// left: the parser flips "value op property".
type Compare struct {
	Field string
	Case  Case
	Op    Op
	Value Literal
}

// Func is a boolean string function applied to a property.
type Func struct {
	Name  FuncName
	Field string
	Case  Case
	Arg   string
}

// Case is the case conversion applied to a property before it is compared or matched: none, tolower(F)
// or toupper(F).
type Case int

const (
	AsIs Case = iota
	ToLower
	ToUpper
)

var caseNames = [...]string{ToLower: "tolower", ToUpper: "toupper"}

// property renders a property with its case conversion.
func property(field string, c Case) string {
	if c == ToLower || c == ToUpper {
		return caseNames[c] + "(" + field + ")"
	}
	return field
}

// FuncName names a supported string function. OData v3's substringof('x',F)
// is parsed as Contains.
type FuncName string

const (
	StartsWith FuncName = "startswith"
	EndsWith   FuncName = "endswith"
	Contains   FuncName = "contains"
)

// Op is a comparison operator.
type Op int

const (
	Eq Op = iota + 1
	Ne
	Gt
	Ge
	Lt
	Le
)

var opNames = [...]string{Eq: "eq", Ne: "ne", Gt: "gt", Ge: "ge", Lt: "lt", Le: "le"}

func (o Op) String() string {
	if o < Eq || o > Le {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// flip returns the operator that keeps the meaning when the operands swap
// sides: "5 lt X" is "X gt 5".
func (o Op) flip() Op {
	switch o {
	case Gt:
		return Lt
	case Ge:
		return Le
	case Lt:
		return Gt
	case Le:
		return Ge
	}
	return o
}

// LitKind is the type of a Literal.
type LitKind int

const (
	LitString LitKind = iota + 1
	LitInt
	LitBool
	LitNull
	LitDateTime
)

var litKindNames = [...]string{LitString: "string", LitInt: "integer", LitBool: "boolean", LitNull: "null", LitDateTime: "DateTime"}

func (k LitKind) String() string {
	if k < LitString || k > LitDateTime {
		return fmt.Sprintf("LitKind(%d)", int(k))
	}
	return litKindNames[k]
}

// Literal is a value in a $filter. Only the field matching Kind is set.
type Literal struct {
	Kind LitKind
	Str  string
	Int  int64
	Bool bool
	// Time has location UTC: DateTime literals carry no zone, so they are
	// read as wall-clock times (timestamp without time zone).
	Time time.Time
}

func (l Literal) String() string {
	switch l.Kind {
	case LitString:
		return quote(l.Str)
	case LitInt:
		return strconv.FormatInt(l.Int, 10)
	case LitBool:
		return strconv.FormatBool(l.Bool)
	case LitNull:
		return "null"
	case LitDateTime:
		return "DateTime'" + l.Time.Format("2006-01-02T15:04:05.999999999") + "'"
	}
	return fmt.Sprintf("Literal(%d)", int(l.Kind))
}

func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func (e And) String() string { return wrap(e.L, precAnd) + " and " + wrap(e.R, precUnary) }

func (e Or) String() string { return wrap(e.L, precOr) + " or " + wrap(e.R, precAnd) }

func (e Not) String() string { return "not " + wrap(e.X, precUnary) }

func (e Compare) String() string {
	return property(e.Field, e.Case) + " " + e.Op.String() + " " + e.Value.String()
}

func (e Func) String() string {
	return string(e.Name) + "(" + property(e.Field, e.Case) + "," + quote(e.Arg) + ")"
}

func (And) expr()     {}
func (Or) expr()      {}
func (Not) expr()     {}
func (Compare) expr() {}
func (Func) expr()    {}

const (
	precOr = iota
	precAnd
	precUnary
)

// wrap renders x as an operand needing at least precedence min, adding only
// the parentheses needed to keep the tree shape (and/or are left-associative).
func wrap(x Expr, min int) string {
	p := precUnary
	switch x.(type) {
	case Or:
		p = precOr
	case And:
		p = precAnd
	}
	if p < min {
		return "(" + x.String() + ")"
	}
	return x.String()
}
