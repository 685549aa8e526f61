package mailbox_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// monthMessages adds n messages to the parties the principal represents, newer than every message of the
// dataset and spread over about five years (a message every 9 days and 7 hours, the newest on
// 2027-06-28), over services, types and statuses (archived ones too) and some in the trashbin: one in three
// says "sjelden", one in seventy "sjeldnest", and every one "månedsvindu".
func monthMessages(t *testing.T, pool *pgxpool.Pool, q *store.Queries, p identity.Principal, n int) {
	t.Helper()
	ctx := context.Background()
	parties, _, err := identity.NewStore(q).ListReportees(ctx, p.Subject(), p.Self(), store.ServiceFilter{}, store.Unpaged)
	require.NoError(t, err)
	var ids []int64
	for _, party := range parties {
		ids = append(ids, party.ID)
	}
	require.Greater(t, len(ids), 2)
	// The services signed once: the spread of types and statuses over them (i % 2, i % 3) was laid out
	// for those six, and leaves archived messages in the windows the principal may read.
	_, err = pool.Exec(ctx, `WITH svc AS (SELECT array_agg(service_code ORDER BY service_code, service_edition) AS codes,
			array_agg(service_edition ORDER BY service_code, service_edition) AS editions FROM services WHERE signing_steps IS NULL)
		INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status, created_date,
			last_changed, last_changed_by, message_sender, body, language, deleted_at, deleted_by)
		SELECT 'a95' || lpad(i::text, 5, '0'), ($1::bigint[])[i % cardinality($1::bigint[]) + 1],
			CASE WHEN i % 2 = 0 THEN 'Correspondence' ELSE 'FormTask' END,
			svc.codes[i % cardinality(svc.codes) + 1], svc.editions[i % cardinality(svc.codes) + 1],
			'Månedsvindu ' || CASE WHEN i % 3 = 0 THEN 'sjelden' ELSE 'vanlig' END || CASE WHEN i % 70 = 1 THEN ' sjeldnest' ELSE '' END,
			CASE WHEN i % 2 = 0 THEN (ARRAY['Ulest', 'Lest', 'Arkivert'])[i / 2 % 3 + 1]
				ELSE (ARRAY['Utfylling', 'Signering', 'Sendt og arkivert'])[i / 2 % 3 + 1] END,
			'2027-06-28 12:00'::timestamp - i * interval '9 days 7 hours', '2027-06-28', 'Test', 'Testetaten', '<p>Vindu</p>', 1044,
			CASE WHEN i % 17 = 0 THEN '2027-06-28'::timestamp END, CASE WHEN i % 17 = 0 THEN 'Test' END
		FROM svc, generate_series(0, $2 - 1) i`, ids, n)
	require.NoError(t, err)
}

// classically is a list query whose order is newest first, as the default's, written so that the list
// of every party's messages runs it as one statement rather than month by month: message ids are
// unique, so the Subject never orders anything.
func classically(t *testing.T, lq store.ListQuery) store.ListQuery {
	t.Helper()
	var err error
	lq.OrderBy, err = odata.ParseOrderBy("CreatedDate desc, MessageId desc, Subject")
	require.NoError(t, err)
	return lq
}

// TestListAllMessagesSearchByMonth: a search over every party newest first, run month window by month
// window, lists the same pages (and "more") as the one statement over every month, and as each party's
// list shows it, for searches whose matches span every window or fill less than a page, with filters
// and paging.
func TestListAllMessagesSearchByMonth(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	p := person(t, pool, p1)
	monthMessages(t, pool, q, p, 210) // 210 × 9 days: about 64 months, past the 31 of the windows

	resolved := func(s string) mailbox.Search {
		found, err := mailbox.ResolveSearch(ctx, q.DB(), search(t, s))
		require.NoError(t, err)
		return found
	}
	t.Run("the month windows run", func(t *testing.T) {
		sql, _, err := mailbox.ListAllMessagesSQL(p.Subject(), p.Self(), store.ListQuery{Page: store.Page{Limit: 50}}, resolved("månedsvindu sjelden"))
		require.NoError(t, err)
		assert.Contains(t, sql, "search_month_words(m.search_words, m.created_date) &&")
		sql, _, err = mailbox.ListAllMessagesSQL(p.Subject(), p.Self(), classically(t, store.ListQuery{Page: store.Page{Limit: 50}}), resolved("månedsvindu sjelden"))
		require.NoError(t, err)
		assert.NotContains(t, sql, "search_month_words")
	})

	// pages compares, page by page, the list month by month with the list in one statement.
	pages := func(t *testing.T, lq store.ListQuery, s mailbox.Search) []string {
		t.Helper()
		var out []string
		for lq.Skip = 0; ; lq.Skip += lq.Limit {
			got, more, err := mailbox.NewLists(q).AllMessages(ctx, p.Subject(), p.Self(), lq, s)
			require.NoError(t, err)
			want, wantMore, err := mailbox.NewLists(q).AllMessages(ctx, p.Subject(), p.Self(), classically(t, lq), s)
			require.NoError(t, err)
			require.Equal(t, ids(summaries(want)), ids(summaries(got)), "skip %d", lq.Skip)
			require.Equal(t, wantMore, more, "skip %d", lq.Skip)
			require.Equal(t, want, got)
			out = append(out, ids(summaries(got))...)
			if !more {
				return out
			}
		}
	}
	for _, words := range []string{
		"månedsvindu",         // every message: the first window fills a page
		"månedsvindu sjelden", // a third: pages from several windows
		"sjeldnest vindu",     // three messages, fewer than a page: every window and the rest
		"testetaten",          // the dataset's messages too, most of them older than the windows
	} {
		t.Run(words, func(t *testing.T) {
			s := resolved(words)
			all := pages(t, store.ListQuery{Page: store.Page{Limit: 50}}, s)
			require.NotEmpty(t, all)
			assert.Equal(t, perParty(t, q, p, s), all, "as party by party")
			for _, limit := range []int{1, 7} {
				assert.Equal(t, all, pages(t, store.ListQuery{Page: store.Page{Limit: limit}}, s), "pages of %d", limit)
			}
		})
	}

	t.Run("filters", func(t *testing.T) {
		org := storetest.PartyID(t, pool, o1)
		for _, f := range []string{
			"Status eq 'Arkivert' or Status eq 'Sendt og arkivert'",
			"ReporteeId eq 'r" + strconv.FormatInt(org, 10) + "'",
			"ReporteeId ne 'r" + strconv.FormatInt(org, 10) + "' and Type eq 'FormTask'",
			"CreatedDate lt DateTime'2025-01-01T00:00:00' and CreatedDate gt DateTime'2023-06-01T00:00:00'",
			"ServiceOwner eq 'Nordlys skatteforvaltning' or startswith(Subject, 'Månedsvindu s')",
			"substringof('vanlig', tolower(Subject))",
		} {
			t.Run(f, func(t *testing.T) {
				lq := filter(t, f)
				for _, words := range []string{"månedsvindu", "månedsvindu sjelden"} {
					lq.Limit = 50
					all := pages(t, lq, resolved(words))
					require.NotEmpty(t, all, words)
					lq.Limit = 7
					assert.Equal(t, all, pages(t, lq, resolved(words)), words)
				}
			})
		}
	})

	t.Run("newest first spelled out", func(t *testing.T) {
		s := resolved("månedsvindu sjelden")
		for _, order := range []string{"CreatedDate desc", "CreatedDate desc, MessageId desc"} {
			lq := store.ListQuery{Page: store.Page{Limit: 7}}
			var err error
			lq.OrderBy, err = odata.ParseOrderBy(order)
			require.NoError(t, err)
			sql, _, err := mailbox.ListAllMessagesSQL(p.Subject(), p.Self(), lq, s)
			require.NoError(t, err)
			assert.Contains(t, sql, "search_month_words", order)
			assert.Equal(t, pages(t, store.ListQuery{Page: store.Page{Limit: 7}}, s), pages(t, lq, s), order)
		}
	})

	t.Run("a new message and a changed one are found in their month", func(t *testing.T) {
		s := resolved("sjeldnest")
		before := pages(t, store.ListQuery{Page: store.Page{Limit: 50}}, s)
		_, err := pool.Exec(ctx, `INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status,
				created_date, last_changed, last_changed_by, message_sender, body, language)
			VALUES ('a9600001', $1, 'Correspondence', '7102', 1, 'Sjeldnest av alle', 'Ulest', '2027-09-01', '2027-09-01', 'Test',
				'Testetaten', NULL, 1044)`, p.Self())
		require.NoError(t, err)
		// The oldest of the person's own messages, older than the windows, now says the word too.
		var changed string
		require.NoError(t, pool.QueryRow(ctx, `UPDATE messages SET subject = 'Månedsvindu sjeldnest igjen'
			WHERE id = (SELECT id FROM messages WHERE id LIKE 'a95%' AND reportee_id = $1 AND deleted_at IS NULL
				ORDER BY created_date LIMIT 1)
			RETURNING id`, p.Self()).Scan(&changed))
		// The index holds the new message's words under its month.
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck // read only
		_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
		require.NoError(t, err)
		const inSeptember = `FROM messages WHERE search_month_words(search_words, created_date) && search_months_of('{sjeldnest}', search_month('2027-09-01'), search_month('2027-09-01'))`
		var plan string
		require.NoError(t, tx.QueryRow(ctx, "EXPLAIN SELECT id "+inSeptember).Scan(&plan))
		assert.Contains(t, plan, "Bitmap Heap Scan")
		var september []string
		require.NoError(t, tx.QueryRow(ctx, "SELECT array_agg(id) "+inSeptember).Scan(&september))
		assert.Equal(t, []string{"a9600001"}, september)

		s = resolved("sjeldnest")
		got := pages(t, store.ListQuery{Page: store.Page{Limit: 2}}, s)
		assert.Equal(t, append(append([]string{"a9600001"}, before...), changed), got)
		assert.Equal(t, perParty(t, q, p, s), got)
	})
}

// TestFrequentSearchWalksNewestFirst: once the planner's statistics say a search is frequent, the list of
// every party's messages walks them newest first in one statement; a rare search still runs by month.
func TestFrequentSearchWalksNewestFirst(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	p := person(t, pool, p1)
	monthMessages(t, pool, q, p, 210)
	_, err := pool.Exec(ctx, "ANALYZE messages")
	require.NoError(t, err)
	for words, byMonth := range map[string]bool{"månedsvindu": false, "sjeldnest": true} {
		s, err := mailbox.ResolveSearch(ctx, q.DB(), search(t, words))
		require.NoError(t, err)
		sql, _, err := mailbox.ListAllMessagesSQL(p.Subject(), p.Self(), store.ListQuery{Page: store.Page{Limit: 50}}, s)
		require.NoError(t, err)
		assert.Equal(t, byMonth, strings.Contains(sql, "search_month_words"), words)
		assert.Equal(t, perParty(t, q, p, s), ids(summaries(listEveryParty(t, q, p, store.ListQuery{Page: store.Page{Limit: 50}}, s))), words)
	}
}
