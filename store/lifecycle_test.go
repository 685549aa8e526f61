package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

func TestPurgeTrashbin(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	now := clock.Now()
	// Three correspondences and an archived form task of O1 in the trashbin for 40 days, one for a day.
	old := []string{"a3100115", "a3100122", "a3100136", "a3100129"}
	for _, id := range old {
		_, err := pool.Exec(ctx, `UPDATE messages SET deleted_at = $2, deleted_by = 'test' WHERE id = $1`, id, now.Add(-40*24*time.Hour))
		require.NoError(t, err)
	}
	_, err := pool.Exec(ctx, `UPDATE messages SET deleted_at = $2, deleted_by = 'test' WHERE id = $1`, "a3100150", now.Add(-24*time.Hour))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO prints (document_digest, pdf_sha256) VALUES ('\x02', $1)`, storetest.Blob(t, pool, []byte("%PDF-1.4")))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest)
		VALUES ('AR9100129', 'a3100129', '2024-01-01', 'test', '[]', '[]', '\x02')`)
	require.NoError(t, err)

	actor := audit.Entry{At: now, ActorName: "Postbox", ActorMethod: "schedule", RequestID: "trashbin-purge/run"}
	q := store.New(pool)
	before := now.Add(-30 * 24 * time.Hour)
	for _, want := range []int{3, 1, 0} { // batches of three
		n, err := q.PurgeTrashbin(ctx, before, 3, actor, purgedEvent)
		require.NoError(t, err)
		assert.Equal(t, want, n)
	}
	var left, tombstones, audited, archives int
	require.NoError(t, pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM messages WHERE id = ANY ($1) OR id = 'a3100150'),
			(SELECT count(*) FROM purged_messages WHERE id = ANY ($1)),
			(SELECT count(*) FROM message_audit WHERE message_id = ANY ($1) AND action = 'Purge' AND actor_name = 'Postbox'
				AND reportee_id = (SELECT id FROM parties WHERE organization_number = '310123455')),
			(SELECT count(*) FROM archives WHERE message_id = 'a3100129')`, old).Scan(&left, &tombstones, &audited, &archives))
	assert.Equal(t, 1, left, "only the message deleted a day ago is left")
	assert.Equal(t, 4, tombstones)
	assert.Equal(t, 4, audited)
	assert.Equal(t, 1, archives, "the archive of a form task outlives its message")
	evs, err := q.EventsAfter(ctx, 0, 10)
	require.NoError(t, err)
	var evIDs []string
	for _, e := range evs {
		evIDs = append(evIDs, e.MessageID)
	}
	assert.ElementsMatch(t, old, evIDs, "one event per purged message, with it")
}

// purgedEvent is an event of a purged message, as the activity makes one.
func purgedEvent(m store.PurgedMessage) store.Event {
	return store.Event{Type: "purged", Source: "http://x/" + m.ID, Subject: "/party/x", Data: []byte(`{}`), ReporteeID: m.ReporteeID,
		MessageID: m.ID, Service: m.Service}
}

// A form task in progress in the trashbin is its workflow's to purge: the batch purge leaves it, and lists
// it as due.
func TestPurgeTrashbinLeavesTasksInProgressToTheirWorkflows(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	now := clock.Now()
	for id, days := range map[string]int{"a3101179": 40, "a3101109": 40, "a3100115": 40, "a3101151": 1} {
		_, err := pool.Exec(ctx, `UPDATE messages SET deleted_at = $2, deleted_by = 'test' WHERE id = $1`, id, now.Add(-time.Duration(days)*24*time.Hour))
		require.NoError(t, err)
	}
	q := store.New(pool)
	before := now.Add(-30 * 24 * time.Hour)
	n, err := q.PurgeTrashbin(ctx, before, 10, audit.Entry{At: now, ActorName: "Postbox"}, purgedEvent)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only the correspondence")
	ids := func(after string) []string {
		due, err := q.DueTasksInTrashbin(ctx, before, after, 10)
		require.NoError(t, err)
		var out []string
		for _, d := range due {
			assert.Equal(t, "Utfylling", d.Status)
			assert.True(t, d.DeletedAt.Before(before))
			out = append(out, d.ID)
		}
		return out
	}
	assert.Equal(t, []string{"a3101109", "a3101179"}, ids(""))
	assert.Equal(t, []string{"a3101179"}, ids("a3101109"), "the page after a3101109")
}
