package odata_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/odata"
)

func str(s string) odata.Literal { return odata.Literal{Kind: odata.LitString, Str: s} }
func num(n int64) odata.Literal  { return odata.Literal{Kind: odata.LitInt, Int: n} }

func TestParseFilterTree(t *testing.T) {
	tests := []struct {
		in   string
		want odata.Expr
	}{
		{"ServiceOwner eq 'Fjordetaten'", odata.Compare{Field: "ServiceOwner", Op: odata.Eq, Value: str("Fjordetaten")}},
		{
			"CreatedDate gt DateTime'2024-07-01T00:00:00' and ServiceOwner eq 'Nordlys skatteforvaltning'",
			odata.And{
				L: odata.Compare{Field: "CreatedDate", Op: odata.Gt, Value: odata.Literal{
					Kind: odata.LitDateTime, Time: time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)}},
				R: odata.Compare{Field: "ServiceOwner", Op: odata.Eq, Value: str("Nordlys skatteforvaltning")},
			},
		},
		{"a eq 1 or b eq 2 and c eq 3", odata.Or{
			L: odata.Compare{Field: "a", Op: odata.Eq, Value: num(1)},
			R: odata.And{
				L: odata.Compare{Field: "b", Op: odata.Eq, Value: num(2)},
				R: odata.Compare{Field: "c", Op: odata.Eq, Value: num(3)},
			},
		}},
		{"not a eq 1 and b eq 2", odata.And{
			L: odata.Not{X: odata.Compare{Field: "a", Op: odata.Eq, Value: num(1)}},
			R: odata.Compare{Field: "b", Op: odata.Eq, Value: num(2)},
		}},
		{"10 le Edition", odata.Compare{Field: "Edition", Op: odata.Ge, Value: num(10)}},
		{"null eq ArchivedDate", odata.Compare{Field: "ArchivedDate", Op: odata.Eq, Value: odata.Literal{Kind: odata.LitNull}}},
		{"IsRead eq FALSE", odata.Compare{Field: "IsRead", Op: odata.Eq, Value: odata.Literal{Kind: odata.LitBool}}},
		{"substringof('skatt',ServiceOwner)", odata.Func{Name: odata.Contains, Field: "ServiceOwner", Arg: "skatt"}},
		{"substringof('skatt',ServiceOwner) eq false", odata.Not{X: odata.Func{Name: odata.Contains, Field: "ServiceOwner", Arg: "skatt"}}},
		{"StartsWith( Subject , 'Års' ) ne false", odata.Func{Name: odata.StartsWith, Field: "Subject", Arg: "Års"}},
		{"d eq datetime'2024-02-29T23:59:59.5'", odata.Compare{Field: "d", Op: odata.Eq, Value: odata.Literal{
			Kind: odata.LitDateTime, Time: time.Date(2024, 2, 29, 23, 59, 59, 500000000, time.UTC)}}},
		{"n eq -9223372036854775808", odata.Compare{Field: "n", Op: odata.Eq, Value: num(-9223372036854775808)}},
		{"s eq 'it''s ''quoted'''", odata.Compare{Field: "s", Op: odata.Eq, Value: str("it's 'quoted'")}},
		{"s eq ''", odata.Compare{Field: "s", Op: odata.Eq, Value: str("")}},
		{"tolower(Subject) eq 'skatt'", odata.Compare{Field: "Subject", Case: odata.ToLower, Op: odata.Eq, Value: str("skatt")}},
		{"'A' lt ToUpper( Subject )", odata.Compare{Field: "Subject", Case: odata.ToUpper, Op: odata.Gt, Value: str("A")}},
		{"substringof('skatt',tolower(ServiceOwner)) eq true", odata.Func{Name: odata.Contains, Field: "ServiceOwner", Case: odata.ToLower, Arg: "skatt"}},
		{"startswith(toupper(Subject),'RE:')", odata.Func{Name: odata.StartsWith, Field: "Subject", Case: odata.ToUpper, Arg: "RE:"}},
		{"endswith(tolower(MessageSender),'etaten') eq false", odata.Not{X: odata.Func{Name: odata.EndsWith, Field: "MessageSender", Case: odata.ToLower, Arg: "etaten"}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := odata.ParseFilter(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestParseFilterCanonical checks parsing through the canonical rendering,
// which covers precedence, normalisation and literal syntax compactly.
func TestParseFilterCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ServiceOwner eq 'Fjordetaten'", "ServiceOwner eq 'Fjordetaten'"},
		{"  ServiceOwner   eq\t'Fjordetaten'\n", "ServiceOwner eq 'Fjordetaten'"},
		{"A EQ 'x' AND NOT B Ne 2 OR c Gt 3", "A eq 'x' and not B ne 2 or c gt 3"},
		{"a eq 1 and (b eq 2 or c eq 3)", "a eq 1 and (b eq 2 or c eq 3)"},
		{"(a eq 1 and b eq 2) or c eq 3", "a eq 1 and b eq 2 or c eq 3"},
		{"a eq 1 and (b eq 2 and c eq 3)", "a eq 1 and (b eq 2 and c eq 3)"},
		{"a eq 1 or (b eq 2 or c eq 3)", "a eq 1 or (b eq 2 or c eq 3)"},
		{"((((a eq 1))))", "a eq 1"},
		{"not (a eq 1 or b eq 2)", "not (a eq 1 or b eq 2)"},
		{"not(a eq 1)", "not a eq 1"},
		{"not not a eq 1", "not not a eq 1"},
		{"a eq'x'", "a eq 'x'"},
		{"(a eq 1)and(b eq 2)", "a eq 1 and b eq 2"},
		{"5 lt X", "X gt 5"},
		{"5 le X", "X ge 5"},
		{"5 gt X", "X lt 5"},
		{"5 ge X", "X le 5"},
		{"'a' ne X", "X ne 'a'"},
		{"x eq -5", "x eq -5"},
		{"x eq 007", "x eq 7"},
		{"x eq TRUE", "x eq true"},
		{"x ne Null", "x ne null"},
		{"d lt DATETIME'2025-01-01T00:00'", "d lt DateTime'2025-01-01T00:00:00'"},
		{"d lt DateTime'2025-01-01T00:00:00.120'", "d lt DateTime'2025-01-01T00:00:00.12'"},
		{"d lt DateTime'2025-01-01T00:00:00.000000001'", "d lt DateTime'2025-01-01T00:00:00.000000001'"},
		{"d lt DateTime'0001-01-01T00:00:00.0'", "d lt DateTime'0001-01-01T00:00:00'"},
		{"s eq 'Blåbær 🫐 \"q\" %_\\'", "s eq 'Blåbær 🫐 \"q\" %_\\'"},
		{"s eq 'x''; DROP TABLE t; --'", "s eq 'x''; DROP TABLE t; --'"},
		{"startswith(Subject,'Re: ')", "startswith(Subject,'Re: ')"},
		{"endswith(Subject,'.pdf')", "endswith(Subject,'.pdf')"},
		{"contains(Subject,'x')", "contains(Subject,'x')"},
		{"SubstringOf('x', Subject) eq true", "contains(Subject,'x')"},
		{"not endswith(Subject,'x') eq false", "not not endswith(Subject,'x')"},
		{"startswith(S,'a') ne true and b eq 1", "not startswith(S,'a') and b eq 1"},
		{"_private_1 eq 1", "_private_1 eq 1"},
		{"TOLOWER(Subject) ne null", "tolower(Subject) ne null"},
		{"'x' eq toupper(Subject)", "toupper(Subject) eq 'x'"},
		{"substringOf('Skatt', toLower(Subject))", "contains(tolower(Subject),'Skatt')"},
		{"not startswith(tolower(S),'a') eq true", "not startswith(tolower(S),'a')"},
		{"tolower eq 1", "tolower eq 1"},
		{"DateTime eq 1", "DateTime eq 1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := odata.ParseFilter(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.String())
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // full Error() text
	}{
		{"", "position 0: expected a condition, found end of input"},
		{"   ", "position 3: expected a condition, found end of input"},
		{"ServiceOwner eq", "position 15: expected a value after 'eq', found end of input"},
		{"ServiceOwner eq 'a' and CreatedDate eq", "position 38: expected a value after 'eq', found end of input"},
		{"ServiceOwner eq Subject", "position 16: expected a value after 'eq', found property 'Subject'"},
		{"'a' eq 'b'", "position 0: a comparison needs a property name on one side"},
		{"'a' eq and", "position 7: expected a property name after 'eq', found 'and'"},
		{"ServiceOwner", "position 12: expected eq, ne, gt, ge, lt or le after 'ServiceOwner', found end of input"},
		{"ServiceOwner == 'x'", "position 13: unexpected character '='"},
		{"ServiceOwner is 'x'", "position 13: expected eq, ne, gt, ge, lt or le after 'ServiceOwner', found 'is'"},
		{"a eq 1 and", "position 10: expected a condition after 'and', found end of input"},
		{"a eq 1 or or b eq 2", "position 10: expected a condition after 'or', found 'or'"},
		{"not", "position 3: expected a condition after 'not', found end of input"},
		{"and eq 1", "position 0: expected a condition, found 'and'"},
		{"()", "position 1: expected a condition after '(', found ')'"},
		{"(a eq 1", "position 7: expected ')' to close '(' at position 0, found end of input"},
		{"(a eq 1 b", "position 8: expected ')' to close '(' at position 0, found 'b'"},
		{"a eq 1)", "position 6: ')' without matching '('"},
		{"a eq 1 b eq 2", "position 7: expected 'and', 'or' or end of input, found 'b'"},
		{"a eq 1,", "position 6: expected 'and', 'or' or end of input, found ','"},
		{"a gt null", "position 2: null can only be compared with eq or ne"},
		{"null le a", "position 5: null can only be compared with eq or ne"},
		{"a eq 'abc", "position 5: unterminated string"},
		{"a eq 'it''s", "position 5: unterminated string"},
		{"a eq 'x\x00y'", "position 7: NUL character in string"},
		{"a eq '\xff'", "position 6: invalid UTF-8"},
		{"a eq 9223372036854775808", "position 5: integer out of range"},
		{"a eq -9223372036854775809", "position 5: integer out of range"},
		{"a eq 99999999999999999999999999", "position 5: integer out of range"},
		{"a eq 1.5", "position 5: decimal numbers are not supported"},
		{"a eq 12abc", "position 5: invalid number"},
		{"a eq - 1", "position 5: unexpected character '-'"},
		{"a eq \"x\"", "position 5: unexpected character '\"'"},
		{"Navn eq 'x' and Ø eq 1", "position 16: unexpected character 'Ø'"},
		{"a eq guid'0000'", "position 5: unsupported literal type 'guid'"},
		{"a eq DateTime'2024-01-01'", "position 5: invalid DateTime: expected yyyy-mm-ddThh:mm[:ss[.fraction]]"},
		{"a eq DateTime'2024-1-01T00:00'", "position 5: invalid DateTime: expected yyyy-mm-ddThh:mm[:ss[.fraction]]"},
		{"a eq DateTime'2024-01-01T0:00'", "position 5: invalid DateTime: expected yyyy-mm-ddThh:mm[:ss[.fraction]]"},
		{"a eq DateTime'2024-01-01 00:00'", "position 5: invalid DateTime: expected yyyy-mm-ddThh:mm[:ss[.fraction]]"},
		{"a eq DateTime'2024-01-01T00:00:00x'", "position 5: invalid DateTime: expected yyyy-mm-ddThh:mm[:ss[.fraction]]"},
		{"a eq DateTime'2024-01-01T00:00:00Z'", "position 5: invalid DateTime: time zones are not supported"},
		{"a eq DateTime'2024-01-01T00:00+01:00'", "position 5: invalid DateTime: time zones are not supported"},
		{"a eq DateTime'2024-01-01T00:00:00.'", "position 5: invalid DateTime: fractional seconds need 1 to 9 digits"},
		{"a eq DateTime'2024-01-01T00:00:00.1234567890'", "position 5: invalid DateTime: fractional seconds need 1 to 9 digits"},
		{"a eq DateTime'0000-01-01T00:00'", "position 5: invalid DateTime: year out of range"},
		{"a eq DateTime'2024-13-01T00:00'", "position 5: invalid DateTime: month out of range"},
		{"a eq DateTime'2023-02-29T00:00'", "position 5: invalid DateTime: day out of range"},
		{"a eq DateTime'2024-04-31T00:00'", "position 5: invalid DateTime: day out of range"},
		{"a eq DateTime'2024-01-01T24:00'", "position 5: invalid DateTime: hour out of range"},
		{"a eq DateTime'2024-01-01T23:60'", "position 5: invalid DateTime: minute out of range"},
		{"a eq DateTime'2024-01-01T23:59:60'", "position 5: invalid DateTime: second out of range"},
		{"a eq DateTime'2024-01-01T00:00", "position 5: unterminated DateTime"},
		{"foo(A,'x')", "position 0: unknown function 'foo'; supported: startswith, endswith, contains, substringof, tolower, toupper"},
		{"startswith(A)", "position 12: expected ',' after the first argument of startswith, found ')'"},
		{"startswith('x',A)", "position 11: expected a property name as argument 1 of startswith, found string 'x'"},
		{"startswith(A,1)", "position 13: expected a string as argument 2 of startswith, found '1'"},
		{"substringof(A,'x')", "position 12: expected a string as argument 1 of substringof, found 'A'"},
		{"contains(A,'x','y')", "position 14: expected ')' after the arguments of contains, found ','"},
		{"contains(A,'x') eq 'y'", "position 19: expected true or false after 'eq', found string 'y'"},
		{"A eq contains(B,'x')", "position 5: function 'contains' can only be used as a condition"},
		{"length(A) eq 1", "position 0: unknown function 'length'; supported: startswith, endswith, contains, substringof, tolower, toupper"},
		{"A eq length(B)", "position 5: unknown function 'length'; a property can be wrapped in tolower or toupper"},
		{"tolower(Subject)", "position 16: expected eq, ne, gt, ge, lt or le after 'tolower(Subject)', found end of input"},
		{"tolower('x') eq 'x'", "position 8: expected a property name as the argument of tolower, found string 'x'"},
		{"tolower() eq 'x'", "position 8: expected a property name as the argument of tolower, found ')'"},
		{"tolower(toupper(Subject)) eq 'x'", "position 8: expected a property name as the argument of tolower, found function 'toupper'"},
		{"toupper(Subject eq 'x'", "position 16: expected ')' after the argument of toupper, found 'eq'"},
		{"tolower(A,B) eq 'x'", "position 9: expected ')' after the argument of tolower, found ','"},
		{"tolower(A) eq tolower(B)", "position 14: expected a value after 'eq', found property 'B'"},
		{"substringof('x',toupper(and))", "position 24: expected a property name as the argument of toupper, found 'and'"},
		{"startswith(tolower(A),tolower(B))", "position 22: expected a string as argument 2 of startswith, found 'tolower'"},
		{"contains(startswith(A,'x'),'y')", "position 9: function 'startswith' can only be used as a condition"},
		{"substringof(tolower(A),'x')", "position 12: expected a string as argument 1 of substringof, found 'tolower'"},
		{"a eq '" + strings.Repeat("x", 60) + "' b", "position 68: expected 'and', 'or' or end of input, found 'b'"},
		{"a eq 1 " + strings.Repeat("y", 60), "position 7: expected 'and', 'or' or end of input, found '" + strings.Repeat("y", 40) + "...'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := odata.ParseFilter(tt.in)
			var se *odata.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, err.Error())
			assert.GreaterOrEqual(t, se.Pos, 0)
			assert.Equal(t, "$filter", se.Option)
			assert.LessOrEqual(t, se.Pos, len(tt.in))
		})
	}
}

func TestParseFilterLimits(t *testing.T) {
	t.Run("length", func(t *testing.T) {
		ok := "s eq '" + strings.Repeat("x", odata.MaxLength-7) + "'"
		require.Len(t, ok, odata.MaxLength)
		_, err := odata.ParseFilter(ok)
		require.NoError(t, err)

		_, err = odata.ParseFilter(ok + " ")
		require.EqualError(t, err, "position 2000: longer than 2000 bytes")
	})
	t.Run("depth", func(t *testing.T) {
		nest := func(n int) string { return strings.Repeat("(", n) + "a eq 1" + strings.Repeat(")", n) }
		_, err := odata.ParseFilter(nest(odata.MaxDepth))
		require.NoError(t, err)
		_, err = odata.ParseFilter(nest(odata.MaxDepth + 1))
		require.EqualError(t, err, "position 32: nested more than 32 levels deep")

		_, err = odata.ParseFilter(strings.Repeat("not ", odata.MaxDepth) + "a eq 1")
		require.NoError(t, err)
		_, err = odata.ParseFilter(strings.Repeat("not ", odata.MaxDepth+1) + "a eq 1")
		require.EqualError(t, err, "position 128: nested more than 32 levels deep")

		// "eq false" adds a not, so it counts towards the depth too.
		_, err = odata.ParseFilter(strings.Repeat("not ", odata.MaxDepth) + "contains(a,'x') eq false")
		require.EqualError(t, err, "position 144: nested more than 32 levels deep")
	})
	t.Run("long flat chain", func(t *testing.T) {
		in := "a eq 1" + strings.Repeat(" or a eq 1", 199)
		e, err := odata.ParseFilter(in)
		require.NoError(t, err)
		assert.Equal(t, in, e.String())
	})
}

func TestSyntaxErrorAs(t *testing.T) {
	_, err := odata.ParseFilter("a eq")
	var se *odata.SyntaxError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 4, se.Pos)
	assert.Equal(t, "expected a value after 'eq', found end of input", se.Msg)
}
