// Package odatasql compiles parsed OData query options into parameterized
// PostgreSQL over an allow-list of fields. Only column expressions supplied
// by the caller are written into SQL; every value from the query becomes a
// placeholder argument.
//
// Filters follow OData's null rules rather than SQL's three-valued logic:
// "X ne 'a'" and "not (X gt 1)" match rows where X is NULL, as OData
// specifies. Negations are pushed down to the comparisons (De Morgan) so each
// comparison can be emitted with the right NULL behaviour.
package odatasql

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/postbox/postbox/odata"
)

// Kind is the type of a filterable column.
type Kind int

const (
	String Kind = iota + 1
	Int
	// DateTime columns are compared with time.Time arguments in UTC, because
	// OData DateTime literals carry no zone: against a timestamp (without
	// time zone) column they compare as wall-clock times, against timestamptz
	// they are read as UTC.
	DateTime
	Bool
)

var kindNames = [...]string{String: "string", Int: "integer", DateTime: "DateTime", Bool: "boolean"}

func (k Kind) String() string {
	if k < String || k > Bool {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// literal is the OData literal kind a field of this kind is compared with.
func (k Kind) literal() odata.LitKind {
	switch k {
	case String:
		return odata.LitString
	case Int:
		return odata.LitInt
	case DateTime:
		return odata.LitDateTime
	case Bool:
		return odata.LitBool
	}
	return 0
}

// Field maps an OData property to a column.
type Field struct {
	Column string // trusted SQL from the caller, e.g. "m.subject"
	Kind   Kind
	// Prefix marks an Int column that clients see as a string of Prefix and digits (ReporteeId "r50001"):
	// such strings are compared as the number, so the column's indexes apply.
	Prefix string
}

// Fields is the allow-list of OData properties. Keys are matched
// case-insensitively, so they must be unique ignoring case.
type Fields map[string]Field

func (fs Fields) names() []string {
	names := make([]string, 0, len(fs))
	for name := range fs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// lookup returns the field and its allow-list name.
func (fs Fields) lookup(name string) (Field, string, error) {
	if f, ok := fs[name]; ok {
		return f, name, nil
	}
	names := fs.names()
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return fs[n], n, nil
		}
	}
	return Field{}, "", &UnknownFieldError{Field: name, Allowed: names}
}

// UnknownFieldError reports a property that is not in the allow-list. The
// message is meant for the client.
type UnknownFieldError struct {
	Field   string
	Allowed []string
}

func (e *UnknownFieldError) Error() string {
	return fmt.Sprintf("unknown property '%s'; allowed: %s", e.Field, strings.Join(e.Allowed, ", "))
}

// TypeError reports a value or function that does not fit the property's
// type. The message is meant for the client.
type TypeError struct {
	Field string
	Msg   string
}

func (e *TypeError) Error() string { return e.Msg }

// Where compiles expr to a boolean SQL expression that can be joined to other
// conditions with AND as is (and/or are parenthesized). Placeholders start at
// $firstArg so the caller can put its own arguments first; args holds the
// matching values (string, int64, bool or time.Time).
func Where(expr odata.Expr, fields Fields, firstArg int) (sql string, args []any, err error) {
	if firstArg < 1 {
		return "", nil, fmt.Errorf("odatasql: firstArg must be at least 1, got %d", firstArg)
	}
	c := &compiler{fields: fields, first: firstArg}
	if err := c.expr(expr, false); err != nil {
		return "", nil, err
	}
	return c.b.String(), c.args, nil
}

type compiler struct {
	fields Fields
	first  int
	args   []any
	b      strings.Builder
}

// param records v and returns its placeholder.
func (c *compiler) param(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(c.first+len(c.args)-1)
}

// expr writes e, or its negation when neg is set.
func (c *compiler) expr(e odata.Expr, neg bool) error {
	switch e := e.(type) {
	case odata.And:
		return c.binary(e.L, e.R, neg, "AND", "OR")
	case odata.Or:
		return c.binary(e.L, e.R, neg, "OR", "AND")
	case odata.Not:
		return c.expr(e.X, !neg)
	case odata.Compare:
		return c.compare(e, neg)
	case odata.Func:
		return c.fn(e, neg)
	}
	return fmt.Errorf("odatasql: unsupported expression %T", e)
}

func (c *compiler) binary(l, r odata.Expr, neg bool, op, negOp string) error {
	if neg {
		op = negOp // De Morgan
	}
	c.b.WriteByte('(')
	if err := c.expr(l, neg); err != nil {
		return err
	}
	c.b.WriteString(" " + op + " ")
	if err := c.expr(r, neg); err != nil {
		return err
	}
	c.b.WriteByte(')')
	return nil
}

var sqlOps = map[odata.Op]string{odata.Eq: "=", odata.Gt: ">", odata.Ge: ">=", odata.Lt: "<", odata.Le: "<="}

// caseSQL are the SQL functions of the case conversions. The migrations index lower() of the text columns
// clients search, so tolower is the case-insensitive form that can use an index.
var caseSQL = map[odata.Case]string{odata.ToLower: "lower", odata.ToUpper: "upper"}

// property looks up a property and returns its field with Column wrapped in the case conversion, which
// applies to string properties only.
func (c *compiler) property(field string, fc odata.Case) (Field, string, error) {
	f, name, err := c.fields.lookup(field)
	if err != nil || fc == odata.AsIs {
		return f, name, err
	}
	fn, ok := caseSQL[fc]
	if !ok {
		return Field{}, "", fmt.Errorf("odatasql: unsupported case conversion %d", int(fc))
	}
	if f.Kind != String {
		return Field{}, "", &TypeError{Field: name, Msg: fmt.Sprintf("to%s needs a string property; '%s' is %s",
			fn, name, article(f.Kind.String()))}
	}
	f.Column = fn + "(" + f.Column + ")"
	return f, name, nil
}

func (c *compiler) compare(e odata.Compare, neg bool) error {
	f, name, err := c.property(e.Field, e.Case)
	if err != nil {
		return err
	}
	v := e.Value
	if v.Kind == odata.LitNull {
		if e.Op != odata.Eq && e.Op != odata.Ne {
			return &TypeError{Field: name, Msg: "null can only be compared with eq or ne"}
		}
		if (e.Op == odata.Eq) != neg {
			c.b.WriteString(f.Column + " IS NULL")
		} else {
			c.b.WriteString(f.Column + " IS NOT NULL")
		}
		return nil
	}
	if f.Prefix != "" && v.Kind == odata.LitString {
		if v, err = prefixedInt(f.Prefix, name, v.Str); err != nil {
			return err
		}
	}
	want := f.Kind.literal()
	if want == 0 {
		return fmt.Errorf("odatasql: field %q has invalid kind %d", name, int(f.Kind))
	}
	if v.Kind != want {
		return &TypeError{Field: name, Msg: fmt.Sprintf("property '%s' is %s and cannot be compared with %s",
			name, article(f.Kind.String()), article(v.Kind.String()))}
	}
	if f.Kind == Bool && e.Op != odata.Eq && e.Op != odata.Ne {
		return &TypeError{Field: name, Msg: fmt.Sprintf("property '%s' is a boolean; only eq and ne apply", name)}
	}
	var p string
	switch v.Kind {
	case odata.LitString:
		p = c.param(v.Str)
	case odata.LitInt:
		// The cast keeps int64 values that overflow an int4 column a
		// comparison instead of an encoding error; int4/int8 comparisons
		// still use indexes.
		p = c.param(v.Int) + "::bigint"
	case odata.LitBool:
		p = c.param(v.Bool)
	case odata.LitDateTime:
		p = c.param(v.Time)
	}
	// ne is "not eq", so only eq and the orderings need SQL operators.
	op := e.Op
	if op == odata.Ne {
		op, neg = odata.Eq, !neg
	}
	switch {
	case !neg:
		// NULL makes SQL yield NULL where OData yields false; with negations
		// pushed down both reject the row.
		c.b.WriteString(f.Column + " " + sqlOps[op] + " " + p)
	case op == odata.Eq:
		// OData: null ne x is true.
		c.b.WriteString(f.Column + " IS DISTINCT FROM " + p)
	default:
		// OData: null gt x is false, so its negation is true.
		c.b.WriteString("(" + f.Column + " " + sqlOps[op] + " " + p + ") IS NOT TRUE")
	}
	return nil
}

// prefixedInt reads the number of a prefixed key such as 'r50001'.
func prefixedInt(prefix, name, s string) (odata.Literal, error) {
	digits, ok := strings.CutPrefix(s, prefix)
	n, err := strconv.ParseInt(digits, 10, 64)
	if !ok || err != nil || strings.Trim(digits, "0123456789") != "" {
		return odata.Literal{}, &TypeError{Field: name, Msg: fmt.Sprintf("property '%s' is '%s' and digits, such as '%s50001'; not %s",
			name, prefix, prefix, odata.Literal{Kind: odata.LitString, Str: s})}
	}
	return odata.Literal{Kind: odata.LitInt, Int: n}, nil
}

// likeEscaper makes the function argument match literally under ESCAPE '\'.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func (c *compiler) fn(e odata.Func, neg bool) error {
	f, name, err := c.property(e.Field, e.Case)
	if err != nil {
		return err
	}
	if f.Kind != String {
		return &TypeError{Field: name, Msg: fmt.Sprintf("%s needs a string property; '%s' is %s",
			e.Name, name, article(f.Kind.String()))}
	}
	arg := likeEscaper.Replace(e.Arg)
	switch e.Name {
	case odata.StartsWith:
		arg += "%"
	case odata.EndsWith:
		arg = "%" + arg
	case odata.Contains:
		arg = "%" + arg + "%"
	default:
		return fmt.Errorf("odatasql: unsupported function %q", e.Name)
	}
	// OData functions yield null for a null property and "not null" stays
	// null, which is exactly how SQL treats LIKE and NOT LIKE.
	op := " LIKE "
	if neg {
		op = " NOT LIKE "
	}
	c.b.WriteString(f.Column + op + c.param(arg) + ` ESCAPE '\'`)
	return nil
}

func article(noun string) string {
	if strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// OrderBy compiles $orderby items to an ORDER BY list (without the keywords)
// and always appends tieBreaker, trusted SQL such as "m.id", naming a unique
// key so that paging with OFFSET is stable. NULLs sort as PostgreSQL does by
// default (last ascending, first descending) so plain indexes still apply.
func OrderBy(items []odata.OrderItem, fields Fields, tieBreaker string) (string, error) {
	if tieBreaker == "" {
		return "", fmt.Errorf("odatasql: a tie-breaker is required for stable paging")
	}
	parts := make([]string, 0, len(items)+1)
	for _, it := range items {
		f, _, err := fields.lookup(it.Field)
		if err != nil {
			return "", err
		}
		if it.Desc {
			parts = append(parts, f.Column+" DESC")
		} else {
			parts = append(parts, f.Column)
		}
	}
	return strings.Join(append(parts, tieBreaker), ", "), nil
}
