// Package clock is the one clock of the interface's local date-times: every timestamp a client sees
// without a zone (a message's CreatedDate, the audit log's Time, a delegation's DelegatedTime, …) is
// wall-clock time in the service's zone, Europe/Oslo unless POSTBOX_TIME_ZONE names another. Events keep
// RFC 3339 in UTC.
package clock

import (
	"sync/atomic"
	"time"
	_ "time/tzdata" // the zone must load on hosts without a zone database
)

// DefaultZone is the zone of the interface's local date-times unless configured otherwise.
const DefaultZone = "Europe/Oslo"

// LocalTimeLayout is how local date-times are written in the dataset and in responses.
const LocalTimeLayout = "2006-01-02T15:04:05"

var zone atomic.Pointer[time.Location]

func init() { zone.Store(DefaultLocation()) }

// DefaultLocation is DefaultZone's location.
func DefaultLocation() *time.Location {
	loc, err := time.LoadLocation(DefaultZone)
	if err != nil {
		panic(err) // time/tzdata is linked in, so this cannot fail
	}
	return loc
}

// Zone is the service's zone.
func Zone() *time.Location { return zone.Load() }

// SetZone makes loc the service's zone; call it at startup, before the first request (config does).
func SetZone(loc *time.Location) { zone.Store(loc) }

// Local returns t as the wall-clock time in the service's zone that a timestamp column holds (a
// time.Time in UTC whose fields are that wall-clock time).
func Local(t time.Time) time.Time {
	l := t.In(Zone())
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// Now is the current wall-clock time in the service's zone.
func Now() time.Time { return Local(time.Now()) }

// Instant is the moment a wall-clock time in the service's zone (as Local returns it) stands for. In the
// hour a daylight-saving change repeats, it is the first of the two.
func Instant(local time.Time) time.Time {
	return time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), local.Minute(), local.Second(),
		local.Nanosecond(), Zone())
}
