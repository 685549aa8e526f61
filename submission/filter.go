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
	p := &queryParser{q: q}
	f := Filter{Confirmed: Unconfirmed, Reportee: p.reportee()}
	f.ServiceCode, f.ServiceEdition = p.service()
	if v, ok := p.get("confirmed"); ok {
		switch c := Confirmed(strings.ToLower(v)); c {
		case Unconfirmed, OnlyConfirmed, AnyConfirmed:
			f.Confirmed = c
		default:
			p.bad("confirmed", "is false, true or all")
		}
	}
	f.ArchivedAfter, f.ArchivedBefore = p.time("archivedAfter"), p.time("archivedBefore")
	return f, errors.Join(p.errs...)
}

// queryParser reads the parameters of one query and collects every malformed one.
type queryParser struct {
	q    url.Values
	errs []error
}

func (p *queryParser) get(name string) (string, bool) {
	v, ok := p.q[name]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

func (p *queryParser) bad(param, reason string) {
	p.errs = append(p.errs, &FilterError{Param: param, Reason: reason})
}

// service reads serviceCode and serviceEdition, which needs serviceCode.
func (p *queryParser) service() (code string, edition int) {
	if v, ok := p.get("serviceCode"); ok {
		if code = v; !serviceCodePattern.MatchString(code) {
			p.bad("serviceCode", "is not a service code")
		}
	}
	if v, ok := p.get("serviceEdition"); ok {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n <= 0:
			p.bad("serviceEdition", "is not a positive whole number")
		case code == "":
			p.bad("serviceEdition", "needs serviceCode")
		}
		edition = n
	}
	return code, edition
}

// reportee reads reportee: an organization number, a national identity number or a reportee id.
func (p *queryParser) reportee() string {
	v, ok := p.get("reportee")
	if ok && !partyNumberPattern.MatchString(v) && !identity.ReporteeIDPattern.MatchString(v) {
		p.bad("reportee", "is not an organization number, a national identity number or a reportee id")
	}
	return v
}

// time reads an instant parameter.
func (p *queryParser) time(name string) *time.Time {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	t, err := parseTime(v)
	if err != nil {
		p.bad(name, "is not a time: 2026-11-27T10:00:00Z, 2026-11-27T11:00:00 (local) or 2026-11-27")
		return nil
	}
	return &t
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
