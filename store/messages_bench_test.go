package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

const (
	benchMessages = 100_000
	benchServices = 50
	benchOwners   = 5
)

// benchMailbox builds, in a database of the benchmark's own, one organization with benchMessages messages
// spread over benchServices services of benchOwners owners, created over three years, and returns its id.
func benchMailbox(b *testing.B) (*pgxpool.Pool, int64) {
	b.Helper()
	ctx := context.Background()
	pool := storetest.NewEmpty(b)
	var org int64
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO parties (kind, organization_number, name, status)
		VALUES ('Organization', '310000001', 'Benk AS', 'Active') RETURNING id`).Scan(&org))
	for i := range benchOwners {
		_, err := pool.Exec(ctx, `INSERT INTO service_owners (code, name, organization_number) VALUES ($1, $2, $3)`,
			fmt.Sprintf("B%d", i), fmt.Sprintf("Etat %d", i), fmt.Sprintf("31090%04d", i))
		require.NoError(b, err)
	}
	for i := range benchServices {
		_, err := pool.Exec(ctx, `INSERT INTO services (service_code, service_edition, service_owner_code, service_name,
				service_type, valid_from, valid_to, rest_enabled, eus_enabled, enterprise_user_enabled)
			VALUES ($1, 1, $2, $3, $4, '2020-01-01', '2030-01-01', true, false, false)`,
			benchService(i), fmt.Sprintf("B%d", i%benchOwners), "Tjeneste "+benchService(i), benchType(i))
		require.NoError(b, err)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	span := int64(3 * 365 * 24 * time.Hour / time.Second)
	formStatus := []string{"Sendt og arkivert", "Sendt og arkivert", "Sendt og arkivert", "Sendt og arkivert", "Utfylling", "Signering"}
	corrStatus := []string{"Lest", "Lest", "Lest", "Arkivert", "Arkivert", "Ulest"}
	rows := make([][]any, benchMessages)
	for i := range rows {
		s := rng.IntN(benchServices)
		created := start.Add(time.Duration(rng.Int64N(span)) * time.Second)
		typ, status, sender := benchType(s), formStatus[rng.IntN(len(formStatus))], any(nil)
		if typ == "Correspondence" {
			status, sender = corrStatus[rng.IntN(len(corrStatus))], fmt.Sprintf("Etat %d", s%benchOwners)
		}
		rows[i] = []any{fmt.Sprintf("a%d", 9_000_000+i), org, typ, benchService(s), int32(1),
			fmt.Sprintf("Melding %d", i), status, created, created, "Benk", sender, "[]"}
	}
	n, err := pool.CopyFrom(ctx, pgx.Identifier{"messages"}, []string{"id", "reportee_id", "type", "service_code",
		"service_edition", "subject", "status", "created_date", "last_changed", "last_changed_by", "message_sender",
		"reply_options"}, pgx.CopyFromRows(rows))
	require.NoError(b, err)
	require.EqualValues(b, benchMessages, n)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE") // as autovacuum would have by then

	require.NoError(b, err)
	return pool, org
}

func benchService(i int) string { return fmt.Sprintf("%d", 9000+i) }

func benchType(i int) string {
	if i%2 == 0 {
		return "FormTask"
	}
	return "Correspondence"
}

func BenchmarkListMessages(b *testing.B) {
	pool, org := benchMailbox(b)
	q := store.New(pool)
	ctx := context.Background()

	var oneService, someServices store.Visibility
	oneService.Read = []store.ServiceKey{{Code: benchService(7), Edition: 1}}
	for i := range 10 {
		k := store.ServiceKey{Code: benchService(i), Edition: 1}
		someServices.Read = append(someServices.Read, k)
		someServices.ArchiveRead = append(someServices.ArchiveRead, k)
	}
	for _, tc := range []struct {
		name, filter, orderBy string
		vis                   store.Visibility
	}{
		{"owner and date", "ServiceOwner eq 'Etat 3' and CreatedDate gt DateTime'2024-07-01T00:00:00'", "", store.Visibility{All: true}},
		{"default order", "", "", store.Visibility{All: true}},
		{"default order page 20", "", "", store.Visibility{All: true}},
		{"status", "Status eq 'Ulest'", "", store.Visibility{All: true}},
		{"created before", "CreatedDate lt DateTime'2023-10-01T00:00:00'", "", store.Visibility{All: true}},
		{"owner, rights on 10 services", "ServiceOwner eq 'Etat 3'", "", someServices},
		{"rights on one service", "", "", oneService},
		{"order by subject", "", "Subject", store.Visibility{All: true}},
	} {
		lq := store.ListQuery{Page: store.Page{Limit: 50}}
		if tc.name == "default order page 20" {
			lq.Skip = 19 * 50
		}
		if tc.filter != "" {
			f, err := odata.ParseFilter(tc.filter)
			require.NoError(b, err)
			lq.Filter = f
		}
		if tc.orderBy != "" {
			o, err := odata.ParseOrderBy(tc.orderBy)
			require.NoError(b, err)
			lq.OrderBy = o
		}
		sql, args, err := store.ListMessagesSQL(org, tc.vis, lq)
		require.NoError(b, err)
		b.Logf("%s:\n%s", tc.name, explain(b, pool, sql, args))

		b.Run(tc.name+"/ListMessages", func(b *testing.B) {
			for b.Loop() {
				page, _, err := q.ListMessages(ctx, org, tc.vis, lq)
				if err != nil || len(page) == 0 {
					b.Fatal(err, len(page))
				}
			}
		})
		b.Run(tc.name+"/raw", func(b *testing.B) {
			for b.Loop() {
				rows, err := pool.Query(ctx, sql, args...)
				if err != nil {
					b.Fatal(err)
				}
				var (
					id, subject, status, typ, owner, code, by, sender string
					edition                                           int
					created, changed                                  time.Time
					replies                                           []byte
				)
				for rows.Next() {
					if err := rows.Scan(&id, &subject, &status, &typ, &owner, &code, &edition, &created, &changed, &by, &sender, &replies); err != nil {
						b.Fatal(err)
					}
				}
				if rows.Err() != nil {
					b.Fatal(rows.Err())
				}
			}
		})
	}

	counts := map[int64]store.Visibility{org: someServices}
	b.Logf("CountMessages, rights on 10 services:\n%s", explain(b, pool, store.CountMessagesSQL, store.CountMessagesArgs(counts)))
	b.Run("CountMessages", func(b *testing.B) {
		for b.Loop() {
			if _, err := q.CountMessages(ctx, counts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// explain returns the plan PostgreSQL runs for sql with its arguments, with timings and buffers.
func explain(b *testing.B, pool *pgxpool.Pool, sql string, args []any) string {
	b.Helper()
	rows, err := pool.Query(context.Background(), "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
	require.NoError(b, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(b, err)
	return strings.Join(lines, "\n")
}
