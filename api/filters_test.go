package api_test

import (
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reportees list is narrowed to the parties where the caller holds a right on a service: P1 is
// main administrator and general manager (DAGL, HADM) of O1, holds UTINN (4711, 5302, 6120) for O2 and
// POSTI (7001, 7102) for O3, and has every right for themself.
func TestReporteesByService(t *testing.T) {
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{ssnP1, orgO1, orgO2, orgO3}},
		{"?serviceCode=7001", []string{ssnP1, orgO1, orgO3}},
		{"?serviceCode=6120", []string{ssnP1, orgO1, orgO2}},
		{"?serviceCode=4711&serviceEdition=2", []string{ssnP1, orgO1, orgO2}},
		{"?serviceCode=4711&serviceEdition=3", nil},
		{"?serviceCode=9999", nil},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			assert.Equal(t, want, reporteeNumbers(t, getAs(t, shared, ssnP1, "/api/reportees"+tc.query)))
		})
	}
}

// Malformed filters are refused, never answered with the unfiltered list.
func TestMalformedListFiltersAreRefused(t *testing.T) {
	for _, path := range []string{
		"/api/reportees?serviceEdition=1",
		"/api/reportees?serviceCode=4711&serviceEdition=x",
		"/api/reportees?serviceCode=4711&serviceEdition=0",
		"/api/reportees?serviceCode=47%2011",
		"/api/" + orgO1 + "/authorization/delegations?serviceEdition=1",
		"/api/" + orgO1 + "/authorization/delegations?serviceCode=4711&serviceEdition=-1",
		"/api/" + orgO1 + "/authorization/delegations?serviceCode=%27%3B",
		"/api/" + orgO1 + "/authorization/delegations?receiverId=" + ssnP3,
		"/api/" + orgO1 + "/authorization/delegations?receiverId=",
		"/api/" + orgO1 + "/authorization/delegations?receiverId=rx",
	} {
		t.Run(path, func(t *testing.T) {
			requireProblem(t, getAs(t, shared, ssnP1, path), http.StatusBadRequest)
		})
	}
}

// The delegations of O1 (DAGL and HADM of P1, ADMAI and REGNA of P3, INNSK of P4) narrowed to a service
// and to a receiver.
func TestDelegationsByServiceAndReceiver(t *testing.T) {
	p3 := selfReporteeID(t, ssnP3)
	cases := []struct {
		query string
		want  []float64
	}{
		{"", []float64{50001, 50002, 50005, 50006, 50007}},
		{"?serviceCode=7102", []float64{50001, 50002, 50007}},
		{"?serviceCode=4711&serviceEdition=2", []float64{50001, 50002, 50006}},
		{"?serviceCode=4711&serviceEdition=9", nil},
		{"?receiverId=" + p3, []float64{50005, 50006}},
		{"?receiverId=" + p3 + "&serviceCode=4711", []float64{50006}},
		{"?receiverId=" + orgO4, nil},
		{"?receiverId=999999999", nil},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			r := getAs(t, shared, ssnP1, "/api/"+orgO1+"/authorization/delegations"+tc.query)
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			var got []float64
			for _, d := range r.embedded(t, "delegations") {
				got = append(got, d["RoleId"].(float64))
			}
			sort.Float64s(got)
			assert.Equal(t, tc.want, got)
		})
	}
}

// selfReporteeID is the reportee id of a person, as their own reportee list shows it.
func selfReporteeID(t *testing.T, ssn string) string {
	t.Helper()
	r := getAs(t, shared, ssn, "/api/reportees")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	for _, rep := range r.embedded(t, "reportees") {
		if rep["SocialSecurityNumber"] == ssn {
			return fmt.Sprint(rep["ReporteeId"])
		}
	}
	t.Fatalf("%s is not in their own reportee list", ssn)
	return ""
}
