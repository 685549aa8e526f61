package mailbox_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

func search(t *testing.T, s string) mailbox.Search {
	t.Helper()
	found, err := mailbox.ParseSearch(s)
	require.NoError(t, err)
	return found
}

func TestParseSearch(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"   ":                          "",
		"Skatt":                        "skatt",
		"  Årsoppgave,  2023! ":        "årsoppgave 2023",
		"a_b%c\\d 'x' OR 1=1; --":      "a b c d x or 1 1",
		"Blåbær-syltetøy ÆØÅ":          "blåbær syltetøy æøå",
		strings.Repeat("ord ", 8):      strings.TrimSpace(strings.Repeat("ord ", 8)),
		strings.Repeat("x", 64) + " y": strings.Repeat("x", 64) + " y",
	} {
		got, err := mailbox.ParseSearch(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got.String(), in)
		assert.Equal(t, want == "", got.Empty(), in)
	}
	for in, msg := range map[string]string{
		"!!! ---":                       "search: give at least one word of letters or digits",
		strings.Repeat("ord ", 9):       "search: at most 8 words",
		strings.Repeat("ø", 65):         "search: words are at most 64 characters",
		"ok " + strings.Repeat("x", 65): "search: words are at most 64 characters",
	} {
		_, err := mailbox.ParseSearch(in)
		var se *mailbox.SearchError
		require.ErrorAs(t, err, &se, in)
		assert.EqualError(t, err, msg, in)
	}
}

// demoSearchText is what a message of the dataset is searched in, written out independently of the
// trigger: Subject, Summary, Body without tags, MessageSender and the owner's name, lowered.
func demoSearchText(m storetest.DemoMessage) string {
	owners := map[string]string{"FJE": "Fjordetaten", "NSF": "Nordlys skatteforvaltning", "VSB": "Vidde statistikkbyrå"}
	body := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m.Body, " ")
	return strings.ToLower(strings.Join([]string{m.Subject, m.Summary, body, m.MessageSender, owners[m.ServiceOwnerCode]}, " "))
}

func TestListMessagesSearchInTheDataset(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	org := storetest.PartyID(t, pool, o1)
	// Words that are their own stems, so the word-prefix match finds nothing the substring does not.
	for _, s := range []string{"skatt", "SKATT", "årsoppgave", "Årsoppgave 2023", "lønnsstatistikk kvartal", "frist", "statistikkbyrå", "nordlys"} {
		t.Run(s, func(t *testing.T) {
			var want []string
			words := strings.Fields(strings.ToLower(s))
			for _, m := range storetest.DemoMessages(t) {
				text := demoSearchText(m)
				matches := m.Reportee == o1
				for _, w := range words {
					matches = matches && strings.Contains(text, w)
				}
				if matches {
					want = append(want, m.MessageID)
				}
			}
			require.NotEmpty(t, want)
			got := listFound(t, q, org, store.Visibility{All: true}, store.ListQuery{Page: store.Page{Limit: 20}}, search(t, s))
			assert.ElementsMatch(t, want, ids(got))
			for i := 1; i < len(got); i++ {
				assert.False(t, got[i].CreatedDate.After(got[i-1].CreatedDate), "newest first")
			}
		})
	}
	t.Run("with a filter and rights", func(t *testing.T) {
		all := listFound(t, q, org, store.Visibility{All: true}, filter(t, "Type eq 'Correspondence'"), search(t, "skatt"))
		seen := listFound(t, q, org, storetest.VisP4, filter(t, "Type eq 'Correspondence'"), search(t, "skatt"))
		require.NotEmpty(t, seen)
		assert.Less(t, len(seen), len(all))
		for _, m := range seen {
			assert.True(t, storetest.VisP4.Allows(m.Service(), m.Status))
		}
	})
}

// searchMessage adds a correspondence of service 7102 (Nordlys skatteforvaltning) to O1.
func searchMessage(t *testing.T, pool *pgxpool.Pool, id string, language int, subject, body string) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `INSERT INTO messages (id, reportee_id, type, service_code, service_edition,
			subject, status, created_date, last_changed, last_changed_by, message_sender, summary, body, language)
		SELECT $1, id, 'Correspondence', '7102', 1, $2, 'Ulest', '2026-01-01', '2026-01-01', 'Test', 'Testetaten', NULL, $3, $4
		FROM parties WHERE organization_number = $5`, id, subject, body, language, o1)
	require.NoError(t, err)
}

// searchFinder returns what a search finds among the messages searchMessage added to org.
func searchFinder(t *testing.T, q *store.Queries, org int64) func(s string) []string {
	return func(s string) []string {
		t.Helper()
		var out []string
		for _, m := range listFound(t, q, org, store.Visibility{All: true}, store.ListQuery{Page: store.Page{Limit: 50}}, search(t, s)) {
			if strings.HasPrefix(m.MessageID, "a9") {
				out = append(out, m.MessageID)
			}
		}
		return out
	}
}

func TestListMessagesSearchMatching(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	org := storetest.PartyID(t, pool, o1)
	searchMessage(t, pool, "a9000001", 1044, "Skattemeldingen for 2025", "<p>Meldingene om <b>lønn</b> er mottatt.</p>")
	searchMessage(t, pool, "a9000002", 1033, "Tax return", "<p>The invoices made us happy &amp; were approved.</p>")
	searchMessage(t, pool, "a9000003", 1044, "Tax return", "<p>The invoices made us happy &amp; were approved.</p>")
	searchMessage(t, pool, "a9000004", 2068, "Søknad om løyve", "<p>Vi har motteke søknaden.</p>")

	found := searchFinder(t, q, org)
	for s, want := range map[string][]string{
		"melding":              {"a9000001"}, // inside a compound: the substring
		"kattemeldingen":       {"a9000001"}, // the substring of a whole word
		"ttemel 2025":          {"a9000001"},
		"meldinger":            {"a9000001"},                                     // an inflection: Norwegian stemming of Meldingene
		"skattemeldingene":     {"a9000001"},                                     // stemmed to skattemelding, the start of Skattemeldingen
		"MOTTATT lønn 2025":    {"a9000001"},                                     // every word, in any field and case
		"mottatt regnskap":     nil,                                              // one word missing
		"happiness":            {"a9000002"},                                     // English stemming (happi), only for the English message
		"invoice approved":     {"a9000002", "a9000003"},                         // substrings in both
		"amp":                  nil,                                              // entities are text, not words
		"testetaten":           {"a9000001", "a9000002", "a9000003", "a9000004"}, // MessageSender
		"løyve søknad":         {"a9000004"},
		"sø":                   {"a9000004"}, // short: the start of a word only (Søknad, søknaden)
		"ak":                   nil,          // not the middle of a word (Vedtak, takk)
		"ta":                   {"a9000002", "a9000003"},
		"nordlys forvaltning":  {"a9000001", "a9000002", "a9000003", "a9000004"}, // the owner's name
		"lønn \u00a0 mottatt ": {"a9000001"},
	} {
		assert.ElementsMatch(t, want, found(s), s)
	}

	t.Run("an owner's new name is searched", func(t *testing.T) {
		_, err := pool.Exec(context.Background(), `UPDATE service_owners SET name = 'Nordlys skatteetat' WHERE code = 'NSF'`)
		require.NoError(t, err)
		assert.Contains(t, found("skatteetat"), "a9000004")
		assert.Empty(t, found("skatteforvaltning"))
	})
	t.Run("a changed subject is searched", func(t *testing.T) {
		_, err := pool.Exec(context.Background(), `UPDATE messages SET subject = 'Vedtak om utlegg' WHERE id = 'a9000004'`)
		require.NoError(t, err)
		assert.Equal(t, []string{"a9000004"}, found("utlegg"))
		assert.Empty(t, found("løyve"))
	})
}

func inLexicon(t *testing.T, pool *pgxpool.Pool, word string) bool {
	t.Helper()
	var in bool
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT FROM search_lexicon WHERE word = $1)`, word).Scan(&in))
	return in
}

// TestSearchLexiconFollowsTheMessages: the words of a new message, a changed one and a renamed owner are
// found inside other words; the lexicon only grows, and what a message no longer holds it is not found by.
func TestSearchLexiconFollowsTheMessages(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	found := searchFinder(t, q, storetest.PartyID(t, pool, o1))
	ctx := context.Background()

	searchMessage(t, pool, "a9000011", 1044, "Kvartalsrapport om blåbærplukking", "<p>Sendt inn.</p>")
	assert.True(t, inLexicon(t, pool, "blåbærplukking"))
	assert.Equal(t, []string{"a9000011"}, found("bærplukk"))

	_, err := pool.Exec(ctx, `UPDATE messages SET subject = 'Rapport om tyttebærsanking' WHERE id = 'a9000011'`)
	require.NoError(t, err)
	assert.Equal(t, []string{"a9000011"}, found("bærsank"))
	assert.Empty(t, found("bærplukk"))
	assert.True(t, inLexicon(t, pool, "blåbærplukking"), "the lexicon only grows")

	_, err = pool.Exec(ctx, `UPDATE service_owners SET name = 'Nordlys skattekontor' WHERE code = 'NSF'`)
	require.NoError(t, err)
	assert.True(t, inLexicon(t, pool, "skattekontor"))
	assert.Equal(t, []string{"a9000011"}, found("kattekont bærsank"))

	_, err = pool.Exec(ctx, `DELETE FROM messages WHERE id = 'a9000011'`)
	require.NoError(t, err)
	assert.Empty(t, found("bærsank"))

	// The parser's stems of addresses and paths hold quotes, backslashes and dots, which the search quotes.
	searchMessage(t, pool, "a9000012", 1044, "Adresser", `<p>Skriv til o'brien@fjordetaten.no, se c:\mapper\fil.txt eller /srv/a'b\c.txt</p>`)
	for _, s := range []string{"brien fjordeta", "o", "b", "mapper fil txt", "srv"} {
		assert.Equal(t, []string{"a9000012"}, found(s), s)
	}
}

func TestSearchWordInsideTooManyWords(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	org := storetest.PartyID(t, pool, o1)
	var body strings.Builder
	for i := range mailbox.MaxSearchTerms + 1 {
		fmt.Fprintf(&body, "<p>zyx%04d</p>", i)
	}
	searchMessage(t, pool, "a9000021", 1044, "Mange ord", body.String())

	_, _, err := mailbox.NewLists(q).Messages(context.Background(), org, store.Visibility{All: true}, store.ListQuery{Page: store.Page{Limit: 50}}, search(t, "zyx"))
	var se *mailbox.SearchError
	require.ErrorAs(t, err, &se)
	assert.EqualError(t, err, `search: "zyx" stands for more than 1000 different words: give more of the word`)
	assert.Equal(t, []string{"a9000021"}, searchFinder(t, q, org)("zyx099"))
}

func TestListStatementsNeedAResolvedSearch(t *testing.T) {
	_, _, err := mailbox.ListMessagesSQL(1, store.Visibility{All: true}, store.ListQuery{Page: store.Page{Limit: 50}}, search(t, "skatt"))
	assert.Error(t, err)
	_, _, err = mailbox.ListAllMessagesSQL(store.Subject{PartyID: 1}, 1, store.ListQuery{Page: store.Page{Limit: 50}}, search(t, "skatt"))
	assert.Error(t, err)
}
