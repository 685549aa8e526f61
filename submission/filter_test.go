package submission_test

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/submission"
)

func TestParseFilterDefaultsToTheUnconfirmedQueue(t *testing.T) {
	f, err := submission.ParseFilter(url.Values{})
	require.NoError(t, err)
	assert.Equal(t, submission.Filter{Confirmed: submission.Unconfirmed}, f)
}

func TestParseFilterReadsEveryFilter(t *testing.T) {
	f, err := submission.ParseFilter(url.Values{"serviceCode": {"4711"}, "serviceEdition": {"2"}, "confirmed": {"ALL"},
		"archivedAfter": {"2026-11-27T09:00:00Z"}, "archivedBefore": {"2026-11-28"}, "reportee": {"910011001"}})
	require.NoError(t, err)
	assert.Equal(t, "4711", f.ServiceCode)
	assert.Equal(t, 2, f.ServiceEdition)
	assert.Equal(t, submission.AnyConfirmed, f.Confirmed)
	assert.Equal(t, clock.Local(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)), *f.ArchivedAfter)
	assert.Equal(t, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), *f.ArchivedBefore, "a date is midnight in the service's zone")
	assert.Equal(t, "910011001", f.Reportee)

	for _, reportee := range []string{"r50001", "01017012345"} {
		f, err := submission.ParseFilter(url.Values{"reportee": {reportee}})
		require.NoError(t, err, reportee)
		assert.Equal(t, reportee, f.Reportee)
	}
}

// Every malformed parameter is named, not only the first.
func TestParseFilterNamesEveryMalformedParameter(t *testing.T) {
	_, err := submission.ParseFilter(url.Values{"serviceCode": {"47 11"}, "serviceEdition": {"two"}, "confirmed": {"maybe"},
		"archivedAfter": {"yesterday"}, "archivedBefore": {"2026-13-01"}, "reportee": {"Ola Nordmann"}})
	require.Error(t, err)
	var named []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *submission.FilterError
		require.True(t, errors.As(e, &fe), e)
		named = append(named, fe.Param)
	}
	assert.ElementsMatch(t, []string{"serviceCode", "serviceEdition", "confirmed", "archivedAfter", "archivedBefore", "reportee"}, named)

	_, err = submission.ParseFilter(url.Values{"serviceEdition": {"2"}})
	var fe *submission.FilterError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "serviceEdition", fe.Param)
	assert.Contains(t, fe.Reason, "needs serviceCode")
}
