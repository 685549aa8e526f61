package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// A running request keeps its key by renewing its claim; a claim left unrenewed past the abandonment
// time (its process died) is taken over by a retry, and the old claim can no longer renew or complete.
func TestIdempotencyClaimIsRenewedWhileItsRequestRuns(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	q := store.New(pool)
	scope := store.IdempotencyScope{APIKey: []byte("k"), Caller: "c", Key: "renewed"}
	const abandon = time.Minute
	age := func() {
		_, err := pool.Exec(ctx, `UPDATE idempotent_requests SET claimed_at = now() - interval '2 minutes' WHERE key = 'renewed'`)
		require.NoError(t, err)
	}
	first, _, ok, err := q.ClaimIdempotencyKey(ctx, scope, time.Hour, abandon)
	require.NoError(t, err)
	require.True(t, ok)

	age()
	renewed, err := q.RenewIdempotencyClaim(ctx, first)
	require.NoError(t, err)
	assert.True(t, renewed)
	_, kept, ok, err := q.ClaimIdempotencyKey(ctx, scope, time.Hour, abandon)
	require.NoError(t, err)
	assert.False(t, ok, "a renewed claim is still running")
	assert.False(t, kept.Done)

	age() // no renewal since: the process died
	second, _, ok, err := q.ClaimIdempotencyKey(ctx, scope, time.Hour, abandon)
	require.NoError(t, err)
	require.True(t, ok, "an abandoned claim is taken over")
	renewed, err = q.RenewIdempotencyClaim(ctx, first)
	require.NoError(t, err)
	assert.False(t, renewed, "the old claim is no longer the key's")
	require.NoError(t, q.CompleteIdempotencyKey(ctx, first, store.IdempotentResponse{Status: 201, RequestDigest: []byte{1}}))
	_, kept, _, err = q.ClaimIdempotencyKey(ctx, scope, time.Hour, abandon)
	require.NoError(t, err)
	assert.False(t, kept.Done, "the old claim's answer was not kept")
	require.NoError(t, q.CompleteIdempotencyKey(ctx, second, store.IdempotentResponse{Status: 201, RequestDigest: []byte{2}}))
	_, kept, _, err = q.ClaimIdempotencyKey(ctx, scope, time.Hour, abandon)
	require.NoError(t, err)
	assert.True(t, kept.Done)
	assert.Equal(t, []byte{2}, kept.RequestDigest)
}
