package odata_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/odata"
)

// FuzzParseFilter checks that the parser never panics, that errors carry a
// position inside the input, and that every accepted filter renders to
// canonical text which parses back to the same tree. The seed corpus lives in
// testdata/fuzz/FuzzParseFilter.
func FuzzParseFilter(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		e, err := odata.ParseFilter(s)
		if err != nil {
			var se *odata.SyntaxError
			require.True(t, errors.As(err, &se), "error %v is not a *SyntaxError", err)
			require.GreaterOrEqual(t, se.Pos, 0)
			require.LessOrEqual(t, se.Pos, len(s))
			return
		}
		canon := e.String()
		if len(canon) > odata.MaxLength {
			return // normalisation may lengthen a filter near the limit
		}
		e2, err := odata.ParseFilter(canon)
		require.NoError(t, err, "canonical form %q of %q", canon, s)
		require.Equal(t, e, e2, "canonical form %q of %q", canon, s)
		require.Equal(t, canon, e2.String())
	})
}
