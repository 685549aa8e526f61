package odatasql_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store/odatasql"
)

var fields = odatasql.Fields{
	"ReporteeId":     {Column: "m.reportee_id", Kind: odatasql.Int, Prefix: "r"},
	"ServiceOwner":   {Column: "m.service_owner", Kind: odatasql.String},
	"Subject":        {Column: "m.subject", Kind: odatasql.String},
	"ServiceEdition": {Column: "m.service_edition", Kind: odatasql.Int},
	"CreatedDate":    {Column: "m.created_at", Kind: odatasql.DateTime},
	"IsRead":         {Column: "m.is_read", Kind: odatasql.Bool},
}

func mustParse(t *testing.T, filter string) odata.Expr {
	t.Helper()
	e, err := odata.ParseFilter(filter)
	require.NoError(t, err)
	return e
}

func TestWhere(t *testing.T) {
	jul1 := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		filter string
		sql    string
		args   []any
	}{
		{"ServiceOwner eq 'Fjordetaten'", "m.service_owner = $3", []any{"Fjordetaten"}},
		{
			"CreatedDate gt DateTime'2024-07-01T00:00:00' and ServiceOwner eq 'Nordlys skatteforvaltning'",
			"(m.created_at > $3 AND m.service_owner = $4)",
			[]any{jul1, "Nordlys skatteforvaltning"},
		},
		{"serviceowner eq 'x'", "m.service_owner = $3", []any{"x"}},
		{"ServiceEdition ge 2", "m.service_edition >= $3::bigint", []any{int64(2)}},
		{"2 lt ServiceEdition", "m.service_edition > $3::bigint", []any{int64(2)}},
		{"ServiceEdition le -1", "m.service_edition <= $3::bigint", []any{int64(-1)}},
		{"IsRead eq true", "m.is_read = $3", []any{true}},
		// ne and negations follow OData null rules: NULL is "not equal".
		{"Subject ne 'x'", "m.subject IS DISTINCT FROM $3", []any{"x"}},
		{"not Subject eq 'x'", "m.subject IS DISTINCT FROM $3", []any{"x"}},
		{"not Subject ne 'x'", "m.subject = $3", []any{"x"}},
		{"not ServiceEdition gt 1", "(m.service_edition > $3::bigint) IS NOT TRUE", []any{int64(1)}},
		{"not not ServiceEdition lt 1", "m.service_edition < $3::bigint", []any{int64(1)}},
		{"Subject eq null", "m.subject IS NULL", nil},
		{"null ne Subject", "m.subject IS NOT NULL", nil},
		{"not Subject eq null", "m.subject IS NOT NULL", nil},
		{"not Subject ne null", "m.subject IS NULL", nil},
		{
			"not (Subject eq 'a' or ServiceEdition eq 1 and IsRead eq false)",
			"(m.subject IS DISTINCT FROM $3 AND (m.service_edition IS DISTINCT FROM $4::bigint OR m.is_read IS DISTINCT FROM $5))",
			[]any{"a", int64(1), false},
		},
		{"startswith(Subject,'Re: ')", `m.subject LIKE $3 ESCAPE '\'`, []any{"Re: %"}},
		{"endswith(Subject,'.pdf')", `m.subject LIKE $3 ESCAPE '\'`, []any{"%.pdf"}},
		{"contains(Subject,'50%_off\\')", `m.subject LIKE $3 ESCAPE '\'`, []any{`%50\%\_off\\%`}},
		{"substringof('skatt',ServiceOwner) eq false", `m.service_owner NOT LIKE $3 ESCAPE '\'`, []any{"%skatt%"}},
		{"Subject eq 'x''; DROP TABLE t; --'", "m.subject = $3", []any{"x'; DROP TABLE t; --"}},
		// Case conversions wrap the column; the argument is matched as written, LIKE characters escaped.
		{"tolower(Subject) eq 'skatt'", "lower(m.subject) = $3", []any{"skatt"}},
		// A prefixed key is compared as its number.
		{"ReporteeId eq 'r50001'", "m.reportee_id = $3::bigint", []any{int64(50001)}},
		{"ReporteeId eq 'r50001' or 'r50002' eq ReporteeId", "(m.reportee_id = $3::bigint OR m.reportee_id = $4::bigint)", []any{int64(50001), int64(50002)}},
		{"ReporteeId ne 'r7'", "m.reportee_id IS DISTINCT FROM $3::bigint", []any{int64(7)}},
		{"toupper(Subject) ne 'SKATT'", "upper(m.subject) IS DISTINCT FROM $3", []any{"SKATT"}},
		{"tolower(Subject) eq null", "lower(m.subject) IS NULL", nil},
		{"not tolower(ServiceOwner) gt 'm'", "(lower(m.service_owner) > $3) IS NOT TRUE", []any{"m"}},
		{"substringof('50%_off\\',tolower(Subject))", `lower(m.subject) LIKE $3 ESCAPE '\'`, []any{`%50\%\_off\\%`}},
		{"startswith(tolower(Subject),'re: ')", `lower(m.subject) LIKE $3 ESCAPE '\'`, []any{"re: %"}},
		{"endswith(toupper(ServiceOwner),'ETATEN') eq false", `upper(m.service_owner) NOT LIKE $3 ESCAPE '\'`, []any{"%ETATEN"}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			sql, args, err := odatasql.Where(mustParse(t, tt.filter), fields, 3)
			require.NoError(t, err)
			assert.Equal(t, tt.sql, sql)
			assert.Equal(t, tt.args, args)
		})
	}
}

func TestWhereFirstArg(t *testing.T) {
	sql, args, err := odatasql.Where(mustParse(t, "Subject eq 'a' or Subject eq 'b'"), fields, 1)
	require.NoError(t, err)
	assert.Equal(t, "(m.subject = $1 OR m.subject = $2)", sql)
	assert.Equal(t, []any{"a", "b"}, args)

	_, _, err = odatasql.Where(mustParse(t, "Subject eq 'a'"), fields, 0)
	require.Error(t, err)
}

func TestWhereErrors(t *testing.T) {
	tests := []struct {
		filter  string
		msg     string
		unknown bool // UnknownFieldError rather than TypeError
	}{
		{"Owner eq 'x'", "unknown property 'Owner'; allowed: CreatedDate, IsRead, ReporteeId, ServiceEdition, ServiceOwner, Subject", true},
		{"startswith(Body,'x')", "unknown property 'Body'; allowed: CreatedDate, IsRead, ReporteeId, ServiceEdition, ServiceOwner, Subject", true},
		{"Body eq null", "unknown property 'Body'; allowed: CreatedDate, IsRead, ReporteeId, ServiceEdition, ServiceOwner, Subject", true},
		{"CreatedDate eq 'abc'", "property 'CreatedDate' is a DateTime and cannot be compared with a string", false},
		{"ServiceEdition gt 'x'", "property 'ServiceEdition' is an integer and cannot be compared with a string", false},
		{"Subject eq 1", "property 'Subject' is a string and cannot be compared with an integer", false},
		{"serviceowner eq true", "property 'ServiceOwner' is a string and cannot be compared with a boolean", false},
		{"IsRead eq 1", "property 'IsRead' is a boolean and cannot be compared with an integer", false},
		{"ServiceEdition eq DateTime'2024-01-01T00:00'", "property 'ServiceEdition' is an integer and cannot be compared with a DateTime", false},
		{"IsRead gt false", "property 'IsRead' is a boolean; only eq and ne apply", false},
		{"contains(CreatedDate,'2024')", "contains needs a string property; 'CreatedDate' is a DateTime", false},
		{"Subject eq 'a' and not startswith(ServiceEdition,'1')", "startswith needs a string property; 'ServiceEdition' is an integer", false},
		{"tolower(ServiceEdition) eq '1'", "tolower needs a string property; 'ServiceEdition' is an integer", false},
		{"ReporteeId eq '50001'", "property 'ReporteeId' is 'r' and digits, such as 'r50001'; not '50001'", false},
		{"ReporteeId eq 'r'", "property 'ReporteeId' is 'r' and digits, such as 'r50001'; not 'r'", false},
		{"ReporteeId eq 'r-5'", "property 'ReporteeId' is 'r' and digits, such as 'r50001'; not 'r-5'", false},
		{"ReporteeId eq 'r99999999999999999999'", "property 'ReporteeId' is 'r' and digits, such as 'r50001'; not 'r99999999999999999999'", false},
		{"substringof('x',toupper(IsRead))", "toupper needs a string property; 'IsRead' is a boolean", false},
		{"tolower(Body) eq 'x'", "unknown property 'Body'; allowed: CreatedDate, IsRead, ReporteeId, ServiceEdition, ServiceOwner, Subject", true},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			_, _, err := odatasql.Where(mustParse(t, tt.filter), fields, 1)
			require.EqualError(t, err, tt.msg)
			if tt.unknown {
				var ue *odatasql.UnknownFieldError
				require.ErrorAs(t, err, &ue)
			} else {
				var te *odatasql.TypeError
				require.ErrorAs(t, err, &te)
			}
		})
	}
}

// Trees built by hand can hold what the parser never produces.
func TestWhereHandBuiltTree(t *testing.T) {
	_, _, err := odatasql.Where(odata.Compare{Field: "Subject", Op: odata.Lt, Value: odata.Literal{Kind: odata.LitNull}}, fields, 1)
	var te *odatasql.TypeError
	require.ErrorAs(t, err, &te)
	assert.EqualError(t, err, "null can only be compared with eq or ne")

	_, _, err = odatasql.Where(odata.Func{Name: "tolower", Field: "Subject"}, fields, 1)
	require.EqualError(t, err, `odatasql: unsupported function "tolower"`)

	_, _, err = odatasql.Where(odata.Func{Name: odata.Contains, Field: "Subject", Case: 7}, fields, 1)
	require.EqualError(t, err, `odatasql: unsupported case conversion 7`)

	_, _, err = odatasql.Where(odata.Compare{Field: "X", Op: odata.Eq, Value: odata.Literal{Kind: odata.LitInt}},
		odatasql.Fields{"X": {Column: "x"}}, 1)
	require.EqualError(t, err, `odatasql: field "X" has invalid kind 0`)

	_, _, err = odatasql.Where(nil, fields, 1)
	require.EqualError(t, err, "odatasql: unsupported expression <nil>")
}

func TestOrderBy(t *testing.T) {
	tests := []struct {
		orderby string
		want    string
	}{
		{"CreatedDate desc", "m.created_at DESC, m.id"},
		{"subject, ServiceEdition desc", "m.subject, m.service_edition DESC, m.id"},
		{"IsRead asc", "m.is_read, m.id"},
	}
	for _, tt := range tests {
		t.Run(tt.orderby, func(t *testing.T) {
			items, err := odata.ParseOrderBy(tt.orderby)
			require.NoError(t, err)
			got, err := odatasql.OrderBy(items, fields, "m.id")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	got, err := odatasql.OrderBy(nil, fields, "m.created_at DESC, m.id")
	require.NoError(t, err)
	assert.Equal(t, "m.created_at DESC, m.id", got)

	_, err = odatasql.OrderBy([]odata.OrderItem{{Field: "Nope"}}, fields, "m.id")
	var ue *odatasql.UnknownFieldError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "Nope", ue.Field)

	_, err = odatasql.OrderBy(nil, fields, "")
	require.Error(t, err)
}
