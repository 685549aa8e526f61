package odata

import (
	"strconv"
	"strings"
)

// ParsePaging parses $skip and $top; an empty value means the option was not
// given. A $top above maxTop (which must be positive) is capped rather than
// refused, so clients can ask for "everything" and page through.
func ParsePaging(skip, top string, maxTop int) (skipN, topN int, err error) {
	if skip != "" {
		n, ok := parseCount(skip)
		if !ok {
			return 0, 0, &ParamError{Param: "$skip", Msg: "must be a non-negative integer"}
		}
		if n < 0 {
			return 0, 0, &ParamError{Param: "$skip", Msg: "too large"}
		}
		skipN = n
	}
	topN = maxTop
	if top != "" {
		n, ok := parseCount(top)
		if !ok {
			return 0, 0, &ParamError{Param: "$top", Msg: "must be a non-negative integer"}
		}
		if n >= 0 && n < maxTop {
			topN = n
		}
	}
	return skipN, topN, nil
}

// parseCount accepts only ASCII digits (strconv.Atoi would also take signs).
// A value that overflows int is reported as -1.
func parseCount(s string) (int, bool) {
	if strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1, true
	}
	return n, true
}
