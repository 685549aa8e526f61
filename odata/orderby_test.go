package odata_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/odata"
)

func TestParseOrderBy(t *testing.T) {
	tests := []struct {
		in   string
		want []odata.OrderItem
	}{
		{"CreatedDate", []odata.OrderItem{{Field: "CreatedDate"}}},
		{"CreatedDate desc", []odata.OrderItem{{Field: "CreatedDate", Desc: true}}},
		{"CreatedDate DESC, Subject asc,ServiceOwner", []odata.OrderItem{
			{Field: "CreatedDate", Desc: true}, {Field: "Subject"}, {Field: "ServiceOwner"},
		}},
		{"  Subject  Asc ", []odata.OrderItem{{Field: "Subject"}}},
		{"desc desc", []odata.OrderItem{{Field: "desc", Desc: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := odata.ParseOrderBy(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseOrderByErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "position 0: expected a property name, found end of input"},
		{"Subject,", "position 8: expected a property name, found end of input"},
		{",Subject", "position 0: expected a property name, found ','"},
		{"Subject desc asc", "position 13: expected ',' or end of input, found 'asc'"},
		{"Subject descending", "position 8: expected ',' or end of input, found 'descending'"},
		{"'Subject'", "position 0: expected a property name, found string 'Subject'"},
		{"Subject; DROP TABLE t", "position 7: unexpected character ';'"},
		{strings.Repeat("a,", odata.MaxOrderByItems) + "a", "position 20: more than 10 $orderby items"},
		{strings.Repeat("a", odata.MaxLength+1), "position 2000: longer than 2000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := odata.ParseOrderBy(tt.in)
			var se *odata.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, err.Error())
			assert.Equal(t, "$orderby", se.Option, "the error names the option that failed")
		})
	}
}

func TestParsePaging(t *testing.T) {
	tests := []struct {
		skip, top         string
		wantSkip, wantTop int
	}{
		{"", "", 0, 50},
		{"0", "0", 0, 0},
		{"10", "20", 10, 20},
		{"007", "50", 7, 50},
		{"", "51", 0, 50},
		{"", "99999999999999999999999", 0, 50},
		{"9223372036854775807", "", 9223372036854775807, 50},
	}
	for _, tt := range tests {
		t.Run(tt.skip+"/"+tt.top, func(t *testing.T) {
			skip, top, err := odata.ParsePaging(tt.skip, tt.top, 50)
			require.NoError(t, err)
			assert.Equal(t, tt.wantSkip, skip)
			assert.Equal(t, tt.wantTop, top)
		})
	}
}

func TestParsePagingErrors(t *testing.T) {
	tests := []struct{ skip, top, want string }{
		{"-1", "", "invalid $skip: must be a non-negative integer"},
		{"+1", "", "invalid $skip: must be a non-negative integer"},
		{"1.0", "", "invalid $skip: must be a non-negative integer"},
		{" 1", "", "invalid $skip: must be a non-negative integer"},
		{"abc", "", "invalid $skip: must be a non-negative integer"},
		{"9223372036854775808", "", "invalid $skip: too large"},
		{"", "-5", "invalid $top: must be a non-negative integer"},
		{"", "ten", "invalid $top: must be a non-negative integer"},
		{"", "1e3", "invalid $top: must be a non-negative integer"},
	}
	for _, tt := range tests {
		t.Run(tt.skip+"/"+tt.top, func(t *testing.T) {
			_, _, err := odata.ParsePaging(tt.skip, tt.top, 50)
			var pe *odata.ParamError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}
