package correspondence

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// storeShipment checks s and stores it as shipment id of FJE, as Send does without its workflow, and
// returns what became of each recipient.
func storeShipment(t *testing.T, pool *pgxpool.Pool, id string, s Send) []Outcome {
	t.Helper()
	ctx := context.Background()
	outcomes := screen(s.Recipients)
	parties, err := lookUpParties(ctx, pool, outcomes)
	require.NoError(t, err)
	s, err = check(s, time.Now(), MaxRecipients)
	require.NoError(t, err)
	require.NoError(t, store.InTx(ctx, pool, func(tx pgx.Tx) error {
		return insertShipment(ctx, tx, id, s, Actor{ServiceOwner: "FJE", ServiceOwnerName: "Fjordetaten"}, time.Now(), outcomes, parties)
	}))
	return outcomes
}

// Batches of one shipment running at once (an activity retried while its first attempt still runs) make
// each message once, and a retraction between them keeps its message from being made.
func TestBatchesMakeEachMessageOnce(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	const persons = 3
	id := "6f1c1b8e-0d0a-4d8e-9a3b-2f7e1c9d4a11"
	outcomes := storeShipment(t, pool, id, Send{ServiceCode: "7001", ServiceEdition: 1,
		Recipients: []string{"12857812326", "03919023480", "27828534586", "nope"}, Subject: "Brev", Body: "<p>Hei</p>"})
	assert.Equal(t, RefusedMalformed, outcomes[3].Refused)
	retracted := outcomes[1].MessageID
	require.NoError(t, store.InTx(ctx, pool, func(tx pgx.Tx) error {
		m, err := lockSent(ctx, tx, "FJE", retracted)
		require.NoError(t, err)
		require.False(t, m.Created)
		return markRetracted(ctx, tx, retracted, time.Now())
	}))

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
	)
	for range 4 {
		wg.Go(func() {
			err := store.InTx(ctx, pool, func(tx pgx.Tx) error {
				list, _, err := createBatch(ctx, tx, id, 0, BatchSize, time.Now())
				mu.Lock()
				total += len(list)
				mu.Unlock()
				return err
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, persons-1, total, "each accepted, unretracted recipient's message made once")
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE shipment_id = $1`, id).Scan(&n))
	assert.Equal(t, persons-1, n)
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE id = $1`, retracted).Scan(&n))
	assert.Zero(t, n)

	// Another owner finds none of it.
	_, err := getShipment(ctx, pool, "NSF", id)
	assert.ErrorIs(t, err, ErrNotFound)
	sh, err := getShipment(ctx, pool, "FJE", id)
	require.NoError(t, err)
	assert.Equal(t, Shipment{ID: id, ServiceCode: "7001", ServiceEdition: 1, CreatedAt: sh.CreatedAt, CreatedBy: "Fjordetaten",
		Subject: "Brev", Recipients: 4, Created: 2, Refused: 1, Retracted: 1}, sh)
}

func TestScreenAndDates(t *testing.T) {
	got := screen([]string{"310123455", "12857812326", "31012345", "31012345a", "310123455"})
	assert.Equal(t, []string{"", "", RefusedMalformed, RefusedMalformed, RefusedDuplicate},
		[]string{got[0].Refused, got[1].Refused, got[2].Refused, got[3].Refused, got[4].Refused})
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	at := func(h int) *time.Time { t := now.Add(time.Duration(h) * time.Hour); return &t }
	assert.NoError(t, checkDates(Send{VisibleAt: at(1), DueAt: at(2), AllowSystemDeleteAt: at(3)}, now))
	assert.NoError(t, checkDates(Send{VisibleAt: at(-5), DueAt: at(1)}, now), "a past VisibleDateTime is now")
	assert.Error(t, checkDates(Send{DueAt: at(-1)}, now), "due in the past")
	assert.Error(t, checkDates(Send{VisibleAt: at(2), DueAt: at(1)}, now))
	assert.Error(t, checkDates(Send{DueAt: at(2), AllowSystemDeleteAt: at(1)}, now))
}

// At the due date, only the unconfirmed messages of a shipment that asks for confirmation are overdue, and
// a step run again writes no event twice.
func TestMarkOverdueOnce(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	id := "0b6c9a52-3f0e-4c43-9d7e-51f4a0d7e3c2"
	outcomes := storeShipment(t, pool, id, Send{ServiceCode: "7001", ServiceEdition: 1,
		Recipients: []string{"12857812326", "03919023480"}, Subject: "Brev", IsConfirmationNeeded: true})
	require.NoError(t, store.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, _, err := createBatch(ctx, tx, id, 0, BatchSize, time.Now())
		return err
	}))
	_, err := pool.Exec(ctx, `UPDATE messages SET confirmed_at = now(), confirmed_by = 'Ingrid' WHERE id = $1`, outcomes[0].MessageID)
	require.NoError(t, err)

	a := &Activities{Pool: pool, Events: events.NewBuilder("http://postbox.test")}
	require.NoError(t, a.MarkOverdue(ctx, id))
	require.NoError(t, a.MarkOverdue(ctx, id), "a retried step")
	rows, err := pool.Query(ctx, `SELECT message_id FROM events WHERE type = $1 ORDER BY seq`, events.CorrespondenceOverdue)
	require.NoError(t, err)
	overdue, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{outcomes[1].MessageID}, overdue)
}

// storePrefill stores a scheduled pre-fill of FJE for O1 under a reserved id, with a notification order,
// as schedulePrefill does without its workflow; it returns the id and the order's.
func storePrefill(t *testing.T, pool *pgxpool.Pool) (string, string) {
	t.Helper()
	ctx := context.Background()
	var id, order string
	visible := time.Now().Add(time.Hour)
	require.NoError(t, store.InTx(ctx, pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT 'a' || nextval('message_id_seq')`).Scan(&id); err != nil {
			return err
		}
		var party int64
		if err := tx.QueryRow(ctx, `SELECT id FROM parties WHERE organization_number = '310123455'`).Scan(&party); err != nil {
			return err
		}
		var err error
		order, err = notification.PlaceTx(ctx, tx, "FJE", "Fjordetaten", notification.Order{Channel: notification.Email, EmailSubject: "s",
			SendAt: &visible}, notification.Target{Messages: []notification.TargetMessage{{MessageID: id, PartyID: party}}})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO scheduled_prefills (message_id, service_owner_code, service_owner_name, reportee_id,
				service_code, service_edition, subject, visible_at, forms, attachments, notification_order, created_at)
			VALUES ($1, 'FJE', 'Fjordetaten', $2, '4711', 2, 'x', $3, '[]', '[]', $4, now())`, id, party, visible, order)
		return err
	}))
	return id, order
}

// A pre-fill that fails keeps why and loses its notification order; one dropped loses both; each again
// changes nothing.
func TestFailAndDropPrefill(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	count := func(query, id string) (n int) {
		require.NoError(t, pool.QueryRow(ctx, query, id).Scan(&n))
		return n
	}
	orders := `SELECT count(*) FROM notification_orders WHERE id = $1`
	failed, order := storePrefill(t, pool)
	for range 2 {
		require.NoError(t, failPrefill(ctx, pool, failed, "the service is closed"))
		sp, err := loadScheduledPrefill(ctx, pool, failed)
		require.NoError(t, err)
		assert.Equal(t, "the service is closed", sp.failure)
		assert.Zero(t, count(orders, order))
	}
	dropped, order := storePrefill(t, pool)
	for range 2 {
		require.NoError(t, dropPrefill(ctx, pool, dropped))
		assert.Zero(t, count(`SELECT count(*) FROM scheduled_prefills WHERE message_id = $1`, dropped))
		assert.Zero(t, count(orders, order))
	}
}
