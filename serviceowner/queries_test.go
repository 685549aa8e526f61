package serviceowner_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/serviceowner"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// Keyset pages of organizations: each once, in id order, and a page starting after a key never holds it.
func TestOrganizationsKeyset(t *testing.T) {
	pool := storetest.New(t)
	q := serviceowner.New(store.New(pool), nil)
	ctx := context.Background()
	var (
		all   []string
		after int64
	)
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		page, more, err := q.Organizations(ctx, serviceowner.ContactSearch{}, store.ListQuery{Page: store.Page{Limit: 4}}, after)
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

	found, _, err := q.Organizations(ctx, serviceowner.ContactSearch{Email: " Post@Fjellheim-Maskin.example", Phone: "+47 91000102"},
		store.ListQuery{Page: store.Page{Limit: 50}}, 0)
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, "310123609", found[0].OrganizationNumber)
}
