package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store/storetest"
)

// Phone numbers match with or without +47 or 0047, spaces, dashes, dots and parentheses; other countries'
// numbers keep their prefix.
func TestServiceOwnerPhoneKey(t *testing.T) {
	pool := storetest.New(t)
	cases := map[string]string{
		"+4791000303":         "91000303",
		"91000303":            "91000303",
		"+47 910 00 303":      "91000303",
		"0047 910-00-303":     "91000303",
		"(+47) 910.00.303":    "91000303",
		"+46701234567":        "+46701234567",
		"0046 70 123 45 67":   "+46701234567",
		"+47123":              "+47123", // not a Norwegian number: left as it is
		"\t+47\u00a091000303": "91000303",
	}
	for in, want := range cases {
		var got string
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT contact_phone_key($1)`, in).Scan(&got))
		assert.Equal(t, want, got, "%q", in)
	}
}
