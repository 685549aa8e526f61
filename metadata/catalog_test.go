package metadata_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/metadata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// A service edition is found as its own type and as either; as the other type it does not exist, with the
// same refusal as an edition that does not.
func TestCatalogService(t *testing.T) {
	c := metadata.New(store.New(storetest.New(t)))
	ctx := context.Background()

	svc, err := c.Service(ctx, metadata.FormTask, "4711", 1)
	require.NoError(t, err)
	assert.Equal(t, metadata.FormTask, svc.ServiceType)
	_, err = c.Service(ctx, "", "7001", 1)
	require.NoError(t, err)

	_, err = c.Service(ctx, metadata.Correspondence, "4711", 1)
	assert.True(t, refusal.Is(err, metadata.NotFound), "%v", err)
	assert.EqualError(t, err, "there is no Correspondence service 4711 edition 1")
	_, err = c.Service(ctx, "", "4711", 99)
	assert.EqualError(t, err, "there is no service 4711 edition 99")
}

// A code list without a language is bokmål's; one in a language it lacks, a schema of a form the edition
// does not have, and an attachment rule without XSD are refused as not found.
func TestCatalogCodeListsAndSchemas(t *testing.T) {
	c := metadata.New(store.New(storetest.New(t)))
	ctx := context.Background()

	list, codes, err := c.CodeList(ctx, "Landkoder", 2, 0)
	require.NoError(t, err)
	assert.Equal(t, 1044, list.Language)
	assert.NotEmpty(t, codes)
	_, _, err = c.CodeList(ctx, "Landkoder", 2, 2068)
	assert.True(t, refusal.Is(err, metadata.NotFound), "%v", err)

	lists, _, err := c.CodeLists(ctx, 1033, store.Unpaged)
	require.NoError(t, err)
	for _, l := range lists {
		assert.Equal(t, 1033, l.Language)
	}

	_, err = c.FormSchema(ctx, "4711", 1, "no-such-format", 1)
	assert.True(t, refusal.Is(err, metadata.NotFound), "%v", err)
	_, err = c.AttachmentRuleSchema(ctx, "4711", 1, 999)
	assert.True(t, refusal.Is(err, metadata.NotFound), "%v", err)
}
