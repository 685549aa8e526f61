package mailbox_test

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// perParty is what the list of every party's messages must hold: the messages of each party the
// principal represents, as the one-party list shows them under the rights identity evaluates for that
// party, newest first across parties.
func perParty(t *testing.T, q *store.Queries, p identity.Principal, search mailbox.Search) []string {
	t.Helper()
	ctx := context.Background()
	rights := identity.NewRights(q, slog.New(slog.DiscardHandler))
	parties, _, err := identity.NewStore(q).ListReportees(ctx, p.Subject(), p.Self(), store.ServiceFilter{}, store.Unpaged)
	require.NoError(t, err)
	var all []store.MessageSummary
	for _, party := range parties {
		set, err := rights.For(ctx, p, party.ID)
		require.NoError(t, err)
		vis := store.Visibility{All: set.All, Read: set.Services(identity.Read), ArchiveRead: set.Services(identity.ArchiveRead)}
		all = append(all, listFound(t, q, party.ID, vis, store.ListQuery{Page: store.Page{Limit: 50}}, search)...)
	}
	slices.SortFunc(all, func(a, b store.MessageSummary) int {
		if c := b.CreatedDate.Compare(a.CreatedDate); c != 0 {
			return c
		}
		return compareIDsDesc(a.MessageID, b.MessageID)
	})
	return ids(all)
}

// compareIDsDesc orders message ids as the database does with "id DESC" (text, C collation for 'a' and digits).
func compareIDsDesc(a, b string) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// listEveryParty pages through the list of every party's messages.
func listEveryParty(t *testing.T, q *store.Queries, p identity.Principal, lq store.ListQuery, search mailbox.Search) []mailbox.PartyMessage {
	t.Helper()
	var out []mailbox.PartyMessage
	for lq.Skip = 0; ; lq.Skip += lq.Limit {
		page, more, err := mailbox.NewLists(q).AllMessages(context.Background(), p.Subject(), p.Self(), lq, search)
		require.NoError(t, err)
		out = append(out, page...)
		if !more {
			return out
		}
		require.Len(t, page, lq.Limit)
	}
}

func person(t *testing.T, pool *pgxpool.Pool, ssn string) identity.Principal {
	return identity.Principal{Method: identity.MethodPersonToken, PersonID: storetest.PartyID(t, pool, ssn)}
}

// TestListAllMessagesFollowsEachPartysRights: persons who represent several parties with different
// roles, and an enterprise user, see in one list exactly what they see party by party.
func TestListAllMessagesFollowsEachPartysRights(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	var loginID, orgID int64
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT id, organization_id FROM logins WHERE user_name = 'NORDKYST_INTEGRASJON'`).Scan(&loginID, &orgID))
	principals := map[string]identity.Principal{
		"Ingrid (self, DAGL and HADM on O1, roles on O2 and O3)": person(t, pool, p1),
		"Ola":                  person(t, pool, "03919023480"),
		"Sigrid (REGNA on O1)": person(t, pool, "27828534586"),
		"Per (INNSK on O1)":    person(t, pool, "19886945720"),
		"Eivind":               person(t, pool, "01928216752"),
		"enterprise user":      {Method: identity.MethodEnterpriseUser, LoginID: loginID, OrganizationID: orgID},
	}
	for name, p := range principals {
		t.Run(name, func(t *testing.T) {
			want := perParty(t, q, p, mailbox.Search{})
			require.NotEmpty(t, want)
			got := listEveryParty(t, q, p, store.ListQuery{Page: store.Page{Limit: 17}}, mailbox.Search{})
			assert.Equal(t, want, ids(summaries(got)))
			for _, m := range got {
				assert.NotZero(t, m.ReporteeID)
				assert.NotEmpty(t, m.ReporteeName)
			}
			// A common word, and several words of which one is rare: the rows each party's rights give.
			for _, s := range []string{"skatt", "årsoppgave 2023 nordlys", "statistikk kvartal 2024"} {
				assert.Equal(t, perParty(t, q, p, search(t, s)),
					ids(summaries(listEveryParty(t, q, p, store.ListQuery{Page: store.Page{Limit: 50}}, search(t, s)))), s)
			}
		})
	}
	t.Run("ReporteeId narrows to some parties", func(t *testing.T) {
		p := principals["Ingrid (self, DAGL and HADM on O1, roles on O2 and O3)"]
		org := storetest.PartyID(t, pool, o1)
		got := listEveryParty(t, q, p, filter(t, "ReporteeId eq 'r"+strconv.FormatInt(org, 10)+"' and Status eq 'Ulest'"), mailbox.Search{})
		require.Len(t, got, 17)
		for _, m := range got {
			assert.Equal(t, org, m.ReporteeID)
			assert.Equal(t, "Fjellheim Maskin AS", m.ReporteeName)
		}
		got = listEveryParty(t, q, p, filter(t, "ReporteeId ne 'r"+strconv.FormatInt(org, 10)+"'"), mailbox.Search{})
		assert.Len(t, got, len(perParty(t, q, p, mailbox.Search{}))-all)
	})
}

func summaries(ms []mailbox.PartyMessage) []store.MessageSummary {
	out := make([]store.MessageSummary, len(ms))
	for i, m := range ms {
		out[i] = m.MessageSummary
	}
	return out
}
