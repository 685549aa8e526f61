package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
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

// Keyset pages of organizations: each once, in id order, and a page starting after a key never holds it.
func TestServiceOwnerOrganizationsKeyset(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	var (
		all   []string
		after int64
	)
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		page, more, err := q.ListOrganizations(ctx, store.ContactSearch{}, store.ListQuery{Page: store.Page{Limit: 4}}, after)
		require.NoError(t, err)
		for _, o := range page {
			require.Greater(t, o.ID, after)
			all = append(all, o.OrganizationNumber)
		}
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	assert.Equal(t, []string{"310123455", "310123609", "310246808", "310369128", "310481203", "310593001"}, all)

	found, _, err := q.ListOrganizations(ctx, store.ContactSearch{Email: " Post@Fjellheim-Maskin.example", Phone: "+47 91000102"},
		store.ListQuery{Page: store.Page{Limit: 50}}, 0)
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, "310123609", found[0].OrganizationNumber)
}
