package submission

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/identity"
)

// Filter narrows the queue of one owner.
type Filter struct {
	ServiceCode    string
	ServiceEdition int // 0: every edition
	Confirmed      Confirmed
	ArchivedAfter  *time.Time // exclusive
	ArchivedBefore *time.Time // exclusive
	// Reportee is the party the tasks were sent for, by organization number, national identity number or
	// reportee id (r…); "" for every party.
	Reportee string
}

// Confirmed selects submissions by whether the owner has confirmed them.
type Confirmed string

const (
	Unconfirmed   Confirmed = "false" // the queue still to be received: the default
	OnlyConfirmed Confirmed = "true"
	AnyConfirmed  Confirmed = "all"
)

// FilterError is a query parameter of a list that is not one the queue understands.
type FilterError struct {
	Param  string
	Reason string
}

func (e *FilterError) Error() string { return fmt.Sprintf("%s: %s", e.Param, e.Reason) }

var (
	serviceCodePattern = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)
	partyNumberPattern = regexp.MustCompile(`^(?:[0-9]{9}|[0-9]{11})$`)
)

// ParseFilter reads the queue's filters from a request's query: serviceCode, serviceEdition (which needs
// serviceCode), confirmed (false, true or all), archivedAfter and archivedBefore (RFC 3339, or a local
// date-time or date in the service's zone) and reportee. A malformed one is a *FilterError naming it.
func ParseFilter(q url.Values) (Filter, error) {
	f := Filter{Confirmed: Unconfirmed}
	var errs []error
	bad := func(param, reason string) { errs = append(errs, &FilterError{Param: param, Reason: reason}) }
	if v, ok := q["serviceCode"]; ok {
		if f.ServiceCode = v[0]; !serviceCodePattern.MatchString(f.ServiceCode) {
			bad("serviceCode", "is not a service code")
		}
	}
	if v, ok := q["serviceEdition"]; ok {
		n, err := strconv.Atoi(v[0])
		switch {
		case err != nil || n <= 0:
			bad("serviceEdition", "is not a positive whole number")
		case f.ServiceCode == "":
			bad("serviceEdition", "needs serviceCode")
		}
		f.ServiceEdition = n
	}
	if v, ok := q["confirmed"]; ok {
		switch c := Confirmed(strings.ToLower(v[0])); c {
		case Unconfirmed, OnlyConfirmed, AnyConfirmed:
			f.Confirmed = c
		default:
			bad("confirmed", "is false, true or all")
		}
	}
	for _, p := range []struct {
		name string
		to   **time.Time
	}{{"archivedAfter", &f.ArchivedAfter}, {"archivedBefore", &f.ArchivedBefore}} {
		if v, ok := q[p.name]; ok {
			t, err := parseTime(v[0])
			if err != nil {
				bad(p.name, "is not a time: 2026-11-27T10:00:00Z, 2026-11-27T11:00:00 (local) or 2026-11-27")
				continue
			}
			*p.to = &t
		}
	}
	if v, ok := q["reportee"]; ok {
		if f.Reportee = v[0]; !partyNumberPattern.MatchString(f.Reportee) && !identity.ReporteeIDPattern.MatchString(f.Reportee) {
			bad("reportee", "is not an organization number, a national identity number or a reportee id")
		}
	}
	return f, errors.Join(errs...)
}

// parseTime reads an instant, or a local date-time or date in the service's zone, as the archive's local
// time (archives keep the time of the service's zone, as every message time).
func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return clock.Local(t), nil
	}
	for _, layout := range []string{clock.LocalTimeLayout, time.DateOnly} {
		if t, err := time.ParseInLocation(layout, v, clock.Zone()); err == nil {
			return clock.Local(t), nil
		}
	}
	return time.Time{}, errors.New("not a time")
}
