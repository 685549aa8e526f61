package mailbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

func BenchmarkListMessages(b *testing.B) {
	pool, org := storetest.LargeMailbox(b, storetest.LargeMailboxMessages)
	q := store.New(pool)
	ctx := context.Background()

	var oneService, someServices store.Visibility
	oneService.Read = []store.ServiceKey{{Code: storetest.LargeMailboxService(7), Edition: 1}}
	for i := range 10 {
		k := store.ServiceKey{Code: storetest.LargeMailboxService(i), Edition: 1}
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
		sql, args, err := mailbox.ListMessagesSQL(org, tc.vis, lq, mailbox.Search{})
		require.NoError(b, err)
		b.Logf("%s:\n%s", tc.name, explain(b, pool, sql, args))

		b.Run(tc.name+"/ListMessages", func(b *testing.B) {
			for b.Loop() {
				page, _, err := mailbox.NewLists(q).Messages(ctx, org, tc.vis, lq, mailbox.Search{})
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
					confirm                                           bool
					due                                               *time.Time
				)
				for rows.Next() {
					if err := rows.Scan(&id, &subject, &status, &typ, &owner, &code, &edition, &created, &changed, &by, &sender, &replies,
						&confirm, &due); err != nil {
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
	b.Logf("CountMessages, rights on 10 services:\n%s", explain(b, pool, mailbox.CountMessagesSQL, mailbox.CountMessagesArgs(counts)))
	b.Run("CountMessages", func(b *testing.B) {
		for b.Loop() {
			if _, err := mailbox.NewLists(q).Count(ctx, counts); err != nil {
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
