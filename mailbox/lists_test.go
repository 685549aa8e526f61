package mailbox_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
	"github.com/postbox/postbox/store/storetest"
)

const (
	o1  = "310123455"   // Fjellheim Maskin AS: 135 messages
	p1  = "12857812326" // Ingrid Fjellheim: HADM on O1, and her own mailbox
	all = 135
)

func filter(t *testing.T, s string) store.ListQuery {
	t.Helper()
	f, err := odata.ParseFilter(s)
	require.NoError(t, err)
	return store.ListQuery{Filter: f, Page: store.Page{Limit: 50}}
}

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

// listAll pages through a list with pages of lq.Limit and returns every message in order.
func listAll(t *testing.T, q *store.Queries, reportee int64, vis store.Visibility, lq store.ListQuery) []store.MessageSummary {
	t.Helper()
	return listFound(t, q, reportee, vis, lq, mailbox.Search{})
}

// listFound is listAll of the messages search finds.
func listFound(t *testing.T, q *store.Queries, reportee int64, vis store.Visibility, lq store.ListQuery, search mailbox.Search) []store.MessageSummary {
	t.Helper()
	var out []store.MessageSummary
	for lq.Skip = 0; ; lq.Skip += lq.Limit {
		page, more, err := mailbox.NewLists(q).Messages(context.Background(), reportee, vis, lq, search)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), lq.Limit)
		out = append(out, page...)
		if !more {
			return out
		}
		require.Len(t, page, lq.Limit, "a page followed by more is full")
		require.Less(t, lq.Skip, 10_000, "paging does not end")
	}
}

func ids(ms []store.MessageSummary) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.MessageID
	}
	return out
}

func TestListMessagesListView(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	org := storetest.PartyID(t, pool, o1)

	page, more, err := mailbox.NewLists(q).Messages(ctx, org, store.Visibility{All: true}, store.ListQuery{Page: store.Page{Limit: 50}}, mailbox.Search{})
	require.NoError(t, err)
	assert.True(t, more)
	require.Len(t, page, 50)
	assert.Equal(t, []string{"a3101312", "a3101305", "a3101298"}, ids(page[:3]), "newest first")
	for i := 1; i < len(page); i++ {
		assert.False(t, page[i].CreatedDate.After(page[i-1].CreatedDate), "newest first")
	}

	demo := storetest.DemoMessages(t)
	owners := map[string]string{"FJE": "Fjordetaten", "NSF": "Nordlys skatteforvaltning", "VSB": "Vidde statistikkbyrå"}
	for _, id := range []string{"a3100808", "a3101102", "a3100150"} {
		t.Run(id, func(t *testing.T) {
			got, _, err := mailbox.NewLists(q).Messages(ctx, org, store.Visibility{All: true}, filter(t, "MessageId eq '"+id+"'"), mailbox.Search{})
			require.NoError(t, err)
			require.Len(t, got, 1)
			want := demo[id]
			m := got[0]
			assert.Equal(t, store.MessageSummary{
				MessageID: id, Subject: want.Subject, Status: want.Status, Type: want.Type,
				ServiceOwner: owners[want.ServiceOwnerCode], ServiceCode: want.ServiceCode, ServiceEdition: want.ServiceEdition,
				CreatedDate: ts(want.CreatedDate), LastChangedDateTime: ts(want.LastChangedDateTime),
				LastChangedBy: want.LastChangedBy, MessageSender: want.MessageSender, ReplyOptions: m.ReplyOptions,
			}, m)
			if len(want.ReplyOptions) == 0 {
				assert.Empty(t, m.ReplyOptions)
			} else {
				assert.Equal(t, want.ReplyOptions, m.ReplyOptions)
			}
		})
	}
	withReplies, _, err := mailbox.NewLists(q).Messages(ctx, org, store.Visibility{All: true}, filter(t, "MessageId eq 'a3100808'"), mailbox.Search{})
	require.NoError(t, err)
	assert.Contains(t, withReplies[0].ReplyOptions, store.ReplyOption{Type: "Service", Text: "Send årsoppgave",
		URL: "https://portal.demo.example/ui/ServiceEngine/Start?ServiceCode=4711&ServiceEditionCode=2", ServiceCode: "4711", ServiceEditionCode: 2})
}

func TestListMessagesPagesEachMessageOnce(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	org := storetest.PartyID(t, pool, o1)

	for _, orderBy := range []string{"", "Status", "ServiceOwner desc", "Subject", "CreatedDate", "CreatedDate desc",
		"Type, LastChangedBy desc", "ServiceEdition, MessageSender"} {
		for _, size := range []int{50, 7} {
			t.Run(orderBy, func(t *testing.T) {
				lq := store.ListQuery{Page: store.Page{Limit: size}}
				if orderBy != "" {
					var err error
					lq.OrderBy, err = odata.ParseOrderBy(orderBy)
					require.NoError(t, err)
				}
				page := listAll(t, q, org, store.Visibility{All: true}, lq)
				got := ids(page)
				assert.Len(t, got, all)
				for i := 1; i < len(page) && strings.HasPrefix(orderBy+" ", "CreatedDate "); i++ {
					assert.Equal(t, orderBy != "CreatedDate", page[i].CreatedDate.Before(page[i-1].CreatedDate), "in order")
				}
				sorted := slices.Clone(got)
				slices.Sort(sorted)
				assert.Len(t, slices.Compact(sorted), all, "every message exactly once")
			})
		}
	}
}

func TestListMessagesVisibility(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	org := storetest.PartyID(t, pool, o1)
	archived := func(status string) bool { return status == "Sendt og arkivert" || status == "Arkivert" }

	for _, tc := range []struct {
		name string
		vis  store.Visibility
		want int
		ok   func(m store.MessageSummary) bool
	}{
		{"self sees all", store.Visibility{All: true}, all, nil},
		{"P1 as HADM sees all", storetest.VisP1, all, nil},
		{"P4 sees 7102 but not its archived", storetest.VisP4, 19, func(m store.MessageSummary) bool {
			return m.ServiceCode == "7102" && m.Status != "Arkivert"
		}},
		{"P4 with ArchiveRead also the archived", store.Visibility{Read: storetest.VisP4.Read, ArchiveRead: []store.ServiceKey{storetest.Svc7102}}, 25,
			func(m store.MessageSummary) bool { return m.ServiceCode == "7102" }},
		{"ArchiveRead alone shows only the archived", store.Visibility{ArchiveRead: []store.ServiceKey{storetest.Svc7102}}, 6,
			func(m store.MessageSummary) bool { return m.ServiceCode == "7102" && m.Status == "Arkivert" }},
		{"P3 sees 4711 and unarchived 7001", storetest.VisP3, 30 + 20, func(m store.MessageSummary) bool {
			return m.ServiceCode == "4711" || m.ServiceCode == "7001" && !archived(m.Status)
		}},
		{"no rights, no messages", store.Visibility{}, 0, nil},
		{"rights on another edition do not count", store.Visibility{Read: []store.ServiceKey{{Code: "4711", Edition: 3}}}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := listAll(t, q, org, tc.vis, store.ListQuery{Page: store.Page{Limit: 50}})
			assert.Len(t, got, tc.want)
			for _, m := range got {
				if tc.ok != nil {
					assert.True(t, tc.ok(m), "%s %s/%d %s", m.MessageID, m.ServiceCode, m.ServiceEdition, m.Status)
				}
				assert.True(t, tc.vis.Allows(m.Service(), m.Status), "Allows agrees with the SQL")
			}
			if !tc.vis.All {
				// The same visibility with its arguments made once, as cached rights hold it.
				kept := store.NewVisibility(tc.vis.Read, tc.vis.ArchiveRead)
				assert.Equal(t, got, listAll(t, q, org, kept, store.ListQuery{Page: store.Page{Limit: 50}}))
			}
		})
	}

	t.Run("counts and paging reflect visibility", func(t *testing.T) {
		page, more, err := mailbox.NewLists(q).Messages(context.Background(), org, storetest.VisP4, store.ListQuery{Page: store.Page{Skip: 10, Limit: 9}}, mailbox.Search{})
		require.NoError(t, err)
		assert.Len(t, page, 9)
		assert.False(t, more, "P4's 19 messages end on this page")
	})
}

func TestListMessagesFilters(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	org := storetest.PartyID(t, pool, o1)

	for _, tc := range []struct {
		filter string
		vis    store.Visibility
		want   int
	}{
		{"ServiceOwner eq 'Nordlys skatteforvaltning'", store.Visibility{All: true}, 45},
		{"ServiceOwner eq 'Fjordetaten'", store.Visibility{All: true}, 60},
		{"ServiceOwner eq 'Vidde statistikkbyrå'", store.Visibility{All: true}, 30},
		{"CreatedDate gt DateTime'2024-07-01T00:00:00' and ServiceOwner eq 'Nordlys skatteforvaltning'", store.Visibility{All: true}, 21},
		{"CreatedDate lt DateTime'2023-10-01T00:00:00'", store.Visibility{All: true}, 36},
		{"Status eq 'Ulest'", store.Visibility{All: true}, 17},
		{"Status eq 'Sendt og arkivert'", store.Visibility{All: true}, 56},
		{"not (Status eq 'Sendt og arkivert')", store.Visibility{All: true}, all - 56},
		{"Type eq 'Correspondence'", store.Visibility{All: true}, 55},
		{"ServiceCode eq '4711' and ServiceEdition eq 2", store.Visibility{All: true}, 30},
		{"ServiceOwner eq 'Fjordetaten' or ServiceOwner eq 'Vidde statistikkbyrå'", store.Visibility{All: true}, 90},
		{"MessageSender eq null", store.Visibility{All: true}, 80},
		{"MessageSender eq 'Nordlys skatteforvaltning'", store.Visibility{All: true}, 25},
		{"startswith(Subject, 'Årsoppgave')", store.Visibility{All: true}, 0}, // counted below from the data
		{"LastChangedDateTime ge DateTime'2025-01-01T00:00'", store.Visibility{All: true}, 0},
		{"ServiceOwner eq 'Nordlys skatteforvaltning'", storetest.VisP4, 19},
		{"Status eq 'Arkivert'", storetest.VisP4, 0},
		{"ServiceOwner eq 'Fjordetaten'", storetest.VisP4, 0},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			want := tc.want
			if want == 0 && tc.vis.All { // the expectation comes from the dataset itself
				want = countDemo(t, tc.filter)
			}
			got := listAll(t, q, org, tc.vis, filter(t, tc.filter))
			assert.Len(t, got, want)
		})
	}

	t.Run("unknown field", func(t *testing.T) {
		_, _, err := mailbox.NewLists(q).Messages(context.Background(), org, store.Visibility{All: true}, filter(t, "Body eq 'x'"), mailbox.Search{})
		var unknown *odatasql.UnknownFieldError
		require.ErrorAs(t, err, &unknown)
	})
}

// countDemo counts O1's messages in the dataset for the filters whose count the README does not give.
func countDemo(t *testing.T, f string) int {
	n := 0
	for _, m := range storetest.DemoMessages(t) {
		if m.Reportee != o1 {
			continue
		}
		switch f {
		case "startswith(Subject, 'Årsoppgave')":
			if strings.HasPrefix(m.Subject, "Årsoppgave") {
				n++
			}
		case "LastChangedDateTime ge DateTime'2025-01-01T00:00'":
			if m.LastChangedDateTime >= "2025-01-01T00:00:00" {
				n++
			}
		default:
			t.Fatalf("no count for %s", f)
		}
	}
	require.NotZero(t, n, "the filter should match something")
	return n
}

func TestCountMessages(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	org, self := storetest.PartyID(t, pool, o1), storetest.PartyID(t, pool, p1)

	counts := func(vis map[int64]store.Visibility) map[int64]map[string]int {
		got, err := mailbox.NewLists(q).Count(context.Background(), vis)
		require.NoError(t, err)
		out := map[int64]map[string]int{}
		for _, c := range got {
			if out[c.ReporteeID] == nil {
				out[c.ReporteeID] = map[string]int{}
			}
			out[c.ReporteeID][c.Type+"/"+c.Status] = c.Count
		}
		return out
	}

	orgAll := map[string]int{"FormTask/Utfylling": 18, "FormTask/Signering": 6, "FormTask/Sendt og arkivert": 56,
		"Correspondence/Ulest": 17, "Correspondence/Lest": 22, "Correspondence/Arkivert": 16}
	for _, tc := range []struct {
		name string
		vis  map[int64]store.Visibility
		want map[int64]map[string]int
	}{
		{"the organization as a whole", map[int64]store.Visibility{org: {All: true}}, map[int64]map[string]int{org: orgAll}},
		{"P1 as HADM", map[int64]store.Visibility{org: storetest.VisP1}, map[int64]map[string]int{org: orgAll}},
		{"P1 for herself and P4's view of O1 in one call",
			map[int64]store.Visibility{self: {All: true}, org: storetest.VisP4},
			map[int64]map[string]int{
				self: {"FormTask/Utfylling": 4, "Correspondence/Ulest": 1, "Correspondence/Lest": 1, "Correspondence/Arkivert": 1},
				org:  {"Correspondence/Ulest": 7, "Correspondence/Lest": 12},
			}},
		{"no rights", map[int64]store.Visibility{org: {}}, map[int64]map[string]int{}},
		{"nobody", nil, map[int64]map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, counts(tc.vis))
		})
	}
}

// TestCaseInsensitiveFiltersUseIndexes: the tolower forms of the string functions and comparisons are
// answered from the trigram indexes of the lowered text. Sequential scans are priced out so that the
// plan of a small table shows which indexes can serve the condition at all.
func TestCaseInsensitiveFiltersUseIndexes(t *testing.T) {
	pool := storetest.New(t)
	ctx := context.Background()
	for f, index := range map[string]string{
		"substringof('skatt',tolower(Subject))":           "messages_subject_trgm",
		"startswith(tolower(Subject),'årsoppgave')":       "messages_subject_trgm",
		"endswith(tolower(Subject),'2024') eq true":       "messages_subject_trgm",
		"tolower(Subject) eq 'vedtak'":                    "messages_subject_trgm",
		"substringof('nordlys',tolower(MessageSender))":   "messages_sender_trgm",
		"startswith(tolower(MessageSender),'fjord_etat')": "messages_sender_trgm",
	} {
		where, args, err := odatasql.Where(filter(t, f).Filter, mailbox.MessageFields, 1)
		require.NoError(t, err)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
		require.NoError(t, err)
		rows, err := tx.Query(ctx, "EXPLAIN SELECT m.id FROM messages m WHERE "+where, args...)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(ctx))
		assert.Contains(t, strings.Join(lines, "\n"), "Bitmap Index Scan on "+index, f)
	}
}
