package identity

import (
	"regexp"
	"strconv"
)

// ReporteeID is the interface's id of a party as a reportee: "r" and its party id. It names a party
// without its identity number, in paths, events and Temporal's search attributes.
func ReporteeID(partyID int64) string { return "r" + strconv.FormatInt(partyID, 10) }

// ReporteeIDPattern is the form of a ReporteeID.
var ReporteeIDPattern = regexp.MustCompile(`^r[0-9]{1,18}$`)

// ParseReporteeID returns the party id of a ReporteeID, and false for anything else.
func ParseReporteeID(v string) (int64, bool) {
	if !ReporteeIDPattern.MatchString(v) {
		return 0, false
	}
	id, err := strconv.ParseInt(v[1:], 10, 64)
	return id, err == nil
}
