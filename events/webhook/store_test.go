package webhook_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// The dispatcher's query finds, from a range of events, the active subscriptions they may concern: the
// reportee's and the service owner's of the event's service; not another reportee's, nor an ended or paused
// one, nor any for events outside the range.
func TestSubscriptionsWithEvents(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	q := store.New(pool)
	var a, b int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(id), max(id) FROM parties`).Scan(&a, &b))
	var owner string
	require.NoError(t, pool.QueryRow(ctx, `SELECT service_owner_code FROM services WHERE service_code = '7001' AND service_edition = 1`).Scan(&owner))
	sub := func(reportee int64, ownerCode, status string) int64 {
		var id int64
		var r any = reportee
		var o any = ownerCode
		if reportee == 0 {
			r = nil
		} else {
			o = nil
		}
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO webhook_subscriptions (reportee_id, service_owner_code, endpoint, secret, status, cursor)
			VALUES ($1, $2, 'https://example.org/hook', 's', $3, 0) RETURNING id`, r, o, status).Scan(&id))
		return id
	}
	ofA, ofB, ofOwner := sub(a, "", "active"), sub(b, "", "active"), sub(0, owner, "active")
	sub(a, "", "paused")
	sub(a, "", "ended")

	mark, err := q.LastEventSeq(ctx)
	require.NoError(t, err)
	require.NoError(t, q.AppendEvents(ctx, store.Event{Type: "no.postbox.test.v1", Source: "http://x/r", Subject: "/party/r1",
		Data: json.RawMessage(`{}`), ReporteeID: a, MessageID: "a1", Service: store.ServiceKey{Code: "7001", Edition: 1}}))
	head, err := q.LastEventSeq(ctx)
	require.NoError(t, err)

	ids, err := webhook.NewStore(store.New(pool)).SubscriptionsWithEvents(ctx, mark, head)
	require.NoError(t, err)
	assert.ElementsMatch(t, []int64{ofA, ofOwner}, ids, "the reportee's and the owner's; not %d of another reportee", ofB)
	ids, err = webhook.NewStore(store.New(pool)).SubscriptionsWithEvents(ctx, head, head)
	require.NoError(t, err)
	assert.Empty(t, ids, "no events in the range, no subscription")
}
