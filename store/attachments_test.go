package store_test

import (
	"context"
	"crypto/sha256"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

func TestAttachmentsOfTheDataset(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	org := storetest.PartyID(t, pool, o1)
	demo := storetest.DemoMessages(t)
	fs := storetest.Files(t, pool)

	for _, id := range []string{"a3100808", "a3100150", "a3100304", "a3100486"} {
		m, err := q.GetMessage(ctx, org, id)
		require.NoError(t, err)
		require.Len(t, m.Attachments, len(demo[id].Attachments))
		for i, a := range m.Attachments {
			r, err := fs.Open(ctx, a.SHA256, 0, -1)
			require.NoError(t, err)
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			require.NoError(t, r.Close())
			assert.Equal(t, demo[id].Attachments[i].Data, got, "%s attachment %d", id, i)
			sum := sha256.Sum256(got)
			assert.Equal(t, sum[:], a.SHA256)
		}
	}

	m, err := q.GetMessage(ctx, org, "a3100808")
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		reportee  int64
		messageID string
	}{
		{"another reportee", storetest.PartyID(t, pool, p1), "a3100808"},
		{"an attachment of another message", org, "a3100150"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := q.GetAttachment(ctx, tc.reportee, tc.messageID, m.Attachments[0].ID)
			assert.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}
