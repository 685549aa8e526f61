package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask/taskstatus"
)

// The shape of the large mailbox benchmarks run on.
const (
	LargeMailboxMessages = 100_000
	LargeMailboxServices = 50
	LargeMailboxOwners   = 5
	// LargeMailboxOrg is the organization number of the large mailbox's owner.
	LargeMailboxOrg = "310000001"
)

// LargeMailbox builds, in a database of its own, one organization (LargeMailboxOrg) with n messages spread
// over LargeMailboxServices services of LargeMailboxOwners owners ("Etat 0".."Etat 4"), created over three
// years from 2022, and returns the pool and the organization's party id.
func LargeMailbox(tb testing.TB, n int) (*pgxpool.Pool, int64) {
	tb.Helper()
	ctx := context.Background()
	pool := NewEmpty(tb)
	var org int64
	require.NoError(tb, pool.QueryRow(ctx, `INSERT INTO parties (kind, organization_number, name, status)
		VALUES ('Organization', $1, 'Benk AS', 'Active') RETURNING id`, LargeMailboxOrg).Scan(&org))
	for i := range LargeMailboxOwners {
		_, err := pool.Exec(ctx, `INSERT INTO service_owners (code, name, organization_number) VALUES ($1, $2, $3)`,
			fmt.Sprintf("B%d", i), fmt.Sprintf("Etat %d", i), fmt.Sprintf("31090%04d", i))
		require.NoError(tb, err)
	}
	for i := range LargeMailboxServices {
		_, err := pool.Exec(ctx, `INSERT INTO services (service_code, service_edition, service_owner_code, service_name,
				service_type, valid_from, valid_to, rest_enabled, eus_enabled, enterprise_user_enabled)
			VALUES ($1, 1, $2, $3, $4, '2020-01-01', '2030-01-01', true, false, false)`,
			LargeMailboxService(i), fmt.Sprintf("B%d", i%LargeMailboxOwners), "Tjeneste "+LargeMailboxService(i), largeMailboxType(i))
		require.NoError(tb, err)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	span := int64(3 * 365 * 24 * time.Hour / time.Second)
	archived := taskstatus.Archived
	formStatus := []string{archived, archived, archived, archived, taskstatus.Filling, taskstatus.Signing}
	corrStatus := []string{"Lest", "Lest", "Lest", "Arkivert", "Arkivert", "Ulest"}
	rows := make([][]any, n)
	for i := range rows {
		s := rng.IntN(LargeMailboxServices)
		created := start.Add(time.Duration(rng.Int64N(span)) * time.Second)
		typ, status, sender := largeMailboxType(s), formStatus[rng.IntN(len(formStatus))], any(nil)
		if typ == "Correspondence" {
			status, sender = corrStatus[rng.IntN(len(corrStatus))], fmt.Sprintf("Etat %d", s%LargeMailboxOwners)
		}
		rows[i] = []any{fmt.Sprintf("a%d", 9_000_000+i), org, typ, LargeMailboxService(s), int32(1),
			fmt.Sprintf("Melding %d", i), status, created, created, "Benk", sender, "[]"}
	}
	copied, err := pool.CopyFrom(ctx, pgx.Identifier{"messages"}, []string{"id", "reportee_id", "type", "service_code",
		"service_edition", "subject", "status", "created_date", "last_changed", "last_changed_by", "message_sender",
		"reply_options"}, pgx.CopyFromRows(rows))
	require.NoError(tb, err)
	require.EqualValues(tb, n, copied)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE") // as autovacuum would have by then
	require.NoError(tb, err)
	return pool, org
}

// LargeMailboxService is the service code of the large mailbox's i-th service (edition 1).
func LargeMailboxService(i int) string { return fmt.Sprintf("%d", 9000+i) }

func largeMailboxType(i int) string {
	if i%2 == 0 {
		return "FormTask"
	}
	return "Correspondence"
}
