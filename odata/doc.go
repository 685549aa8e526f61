// Package odata parses the OData query options accepted by the list
// endpoints: $filter, $orderby, $skip and $top.
//
// Parsing produces a small syntax tree that the store layer compiles to
// parameterized SQL (see store/odatasql); no text from a query ever reaches
// SQL. The package depends on neither HTTP nor SQL so both layers can share it.
//
// # $filter grammar
//
//	filter     = or
//	or         = and { "or" and }
//	and        = unary { "and" unary }
//	unary      = "not" unary | primary
//	primary    = "(" or ")" | call [ ("eq" | "ne") ("true" | "false") ] | comparison
//	comparison = operand op operand      ; one property and one value, either order
//	op         = "eq" | "ne" | "gt" | "ge" | "lt" | "le"
//	operand    = propexpr | value
//	call       = ("startswith" | "endswith" | "contains") "(" propexpr "," string ")"
//	           | "substringof" "(" string "," propexpr ")"
//	propexpr   = property | ("tolower" | "toupper") "(" property ")"
//	value      = string | integer | "true" | "false" | "null" | datetime
//	property   = [A-Za-z_][A-Za-z0-9_]*
//	string     = "'" { any character except "'" | "''" } "'"
//	integer    = [ "-" ] digit { digit }          ; must fit in int64
//	datetime   = "DateTime'" yyyy "-" mm "-" dd "T" hh ":" mm [ ":" ss [ "." 1*9digit ] ] "'"
//
// Operators, keywords, function names and the DateTime prefix are
// case-insensitive; property names are kept as written. "or" binds loosest,
// then "and", then "not", whose operand is a comparison, call or group:
// "not A eq 1" means "not (A eq 1)" since no property is boolean on its own.
// Whitespace (space, tab, CR, LF) between tokens is free.
//
// The words and, or, not, eq, ne, gt, ge, lt, le, true, false and null are
// reserved and cannot be property names.
//
// tolower and toupper (OData v3's case conversions) apply to a property only, and do not nest: they make
// comparisons and string functions case-insensitive, as in substringof('skatt',tolower(Subject)).
//
// Normalisations: "5 lt X" becomes "X gt 5"; substringof('x',F) becomes
// contains(F,'x'); "call eq true" becomes "call" and "call eq false" becomes
// "not call".
//
// $orderby is "property [asc|desc]" separated by commas, at most
// MaxOrderByItems of them. $skip and $top are non-negative integers; $top is
// capped at the caller's maximum.
//
// $filter and $orderby errors are *SyntaxError with a 0-based byte offset
// into the option value; $skip and $top errors are *ParamError.
// Inputs longer than MaxLength bytes or nested deeper than MaxDepth are
// rejected so hostile queries cannot exhaust resources.
package odata
