package mailbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/store"
)

// Limits of a free-text search, so that one request stays a handful of index lookups.
const (
	MaxSearchWords    = 8
	MaxSearchWordLen  = 64 // characters
	minSubstringRunes = 3  // shorter words would be inside too many others: they match as word prefixes only
	// MaxSearchTerms is how many different words of the lexicon one search word may stand for, each an
	// exact entry of the search's GIN lookup.
	MaxSearchTerms = 1000
)

// Search is a free-text search over messages: every word must occur in the Subject, Summary, Body text,
// MessageSender or ServiceOwner of a message, either as the start of a word in the message's language
// (full-text search, so inflected forms match: "meldingene" finds "melding") or, for words of three
// characters or more, anywhere in a word of the text ("melding" finds "skattemelding"). Letters are
// matched without regard to case. The zero Search matches everything.
//
// A search is run in two steps: ResolveSearch looks its words up in the lexicon of every word
// the messages hold and makes the search one tsquery, which the list statements match search_words with.
type Search struct {
	words    []string
	resolved bool
	query    string     // the tsquery, once resolved; "" when a word is found nowhere
	lexemes  [][]string // once resolved, the lexemes each word stands for (the clauses of query)
	share    float64    // once resolved, the estimated share of messages that match
}

// SearchError reports a search= value that cannot be searched for. Its message is meant for the client.
type SearchError struct{ Msg string }

func (e *SearchError) Error() string { return "search: " + e.Msg }

// ParseSearch splits a search= value into its words: runs of letters and digits, lowered. An empty value
// is no search.
func ParseSearch(s string) (Search, error) {
	if strings.TrimSpace(s) == "" {
		return Search{}, nil
	}
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	switch {
	case len(words) == 0:
		return Search{}, &SearchError{Msg: "give at least one word of letters or digits"}
	case len(words) > MaxSearchWords:
		return Search{}, &SearchError{Msg: fmt.Sprintf("at most %d words", MaxSearchWords)}
	}
	for _, w := range words {
		if utf8.RuneCountInString(w) > MaxSearchWordLen {
			return Search{}, &SearchError{Msg: fmt.Sprintf("words are at most %d characters", MaxSearchWordLen)}
		}
	}
	return Search{words: words}, nil
}

// Empty tells whether s matches every message.
func (s Search) Empty() bool { return len(s.words) == 0 }

func (s Search) String() string { return strings.Join(s.words, " ") }

// ResolveSearch makes s one tsquery over search_words, of the exact lexemes of the lexicon each word
// stands for: those that start with its stem in either configuration (the vector of each message is in
// its own language, so a stem of the other language's stemming simply finds nothing there), and, for a
// word of three characters or more, the terms that contain it; words are ANDed. A word that stands for
// more than MaxSearchTerms lexemes is a *SearchError.
func ResolveSearch(ctx context.Context, db store.DBTX, s Search) (Search, error) {
	if s.Empty() || s.resolved {
		return s, nil
	}
	patterns := make([]*string, len(s.words))
	for i, w := range s.words {
		// Words hold only letters and digits, which neither tsquery nor LIKE give a meaning to.
		if utf8.RuneCountInString(w) >= minSubstringRunes {
			p := "%" + w + "%"
			patterns[i] = &p
		}
	}
	rows, err := db.Query(ctx, `SELECT ARRAY(
			SELECT l.word FROM unnest(tsvector_to_array(to_tsvector('norwegian', t.word) || to_tsvector('english', t.word))) stem
				JOIN search_lexicon l ON l.word LIKE stem || '%'
			UNION
			SELECT l.word FROM search_lexicon l WHERE l.term AND l.word LIKE t.pattern
			LIMIT $3)
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(word, pattern, n) ORDER BY t.n`,
		s.words, patterns, MaxSearchTerms+1)
	if err != nil {
		return s, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	if err != nil {
		return s, err
	}
	stats, err := lexemeStats(ctx, db)
	if err != nil {
		return s, err
	}
	clauses := make([]string, len(found))
	for i, lexemes := range found {
		switch {
		case len(lexemes) > MaxSearchTerms:
			return s, &SearchError{Msg: fmt.Sprintf("%q stands for more than %d different words: give more of the word", s.words[i], MaxSearchTerms)}
		case len(lexemes) == 0:
			return Search{words: s.words, resolved: true}, nil // a word found nowhere: nothing matches
		}
		quoted := make([]string, len(lexemes))
		for j, l := range lexemes {
			quoted[j] = tsqueryQuoter.Replace(l)
		}
		clauses[i] = "('" + strings.Join(quoted, "' | '") + "')"
	}
	return Search{words: s.words, resolved: true, query: strings.Join(clauses, " & "), lexemes: found, share: stats.share(found)}, nil
}

// tsqueryQuoter escapes a lexeme for a quoted tsquery operand: the stems of the parser's other tokens
// (e-mail addresses, paths) may hold what a search word cannot.
var tsqueryQuoter = strings.NewReplacer(`\`, `\\`, `'`, `''`)

// errUnresolvedSearch is a programming error: a list statement built from a Search not yet resolved.
var errUnresolvedSearch = errors.New("search: not resolved (ResolveSearch)")

// sql is the condition of s over messages m with its arguments, placeholders from $first: one GIN lookup
// of the resolved tsquery, exact, so no message text is read again to check it.
func (s Search) sql(first int) (string, []any, error) {
	switch {
	case s.Empty():
		return "TRUE", nil, nil
	case !s.resolved:
		return "", nil, errUnresolvedSearch
	case s.query == "":
		return "FALSE", nil, nil
	}
	return fmt.Sprintf("m.search_words @@ $%d::tsquery", first), []any{s.query}, nil
}

// Month windows of a search over every party (see ListAllMessagesSQL): the newest month of messages, the
// two before it, the four before those, and so on; the last window is every older month.
const (
	searchWindows = 5 // windows of months before the rest: 1 + 2 + 4 + 8 + 16 = 31 months
	// maxWindowLexemes bounds the lexemes of a search looked up by month: a window of 16 months makes
	// each of them 16 entries of the index lookup. A search of more (a short word standing for many)
	// runs as one lookup over all months instead.
	maxWindowLexemes = 32
	// maxWindowShare is the estimated share of messages matching from which a search is frequent. On
	// 1,000,000 messages over 43 months a word in 5 % of them (fiskerikvote) has 1,200 matches a month to
	// read and sort, while a walk newest first finds a page of them in about 2,000 messages; a word in
	// 1.3 to 2.5 % (fishing, deadline, due) takes 6 to 15 ms by month against 30 to 90 ms by the walk.
	maxWindowShare = 0.04
)

// byMonth tells whether s is best run window by window of months: a resolved search with matches
// possible, few enough lexemes, and not a frequent one. A frequent search fills a page from the newest
// messages soon, walking messages_newest, while each month holds many of its matches to read and sort.
func (s Search) byMonth() bool {
	if !s.resolved || s.query == "" || s.share >= maxWindowShare {
		return false
	}
	n := 0
	for _, lexemes := range s.lexemes {
		n += len(lexemes)
	}
	return n <= maxWindowLexemes
}

// monthSQL is the condition of s over messages m in the months first..last (SQL expressions), one index
// condition per word of the search, with its arguments (the word's lexemes), placeholders from $first.
func (s Search) monthSQL(firstMonth, lastMonth string, first int) (string, []any) {
	conds, args := make([]string, len(s.lexemes)), make([]any, len(s.lexemes))
	for i, lexemes := range s.lexemes {
		conds[i] = fmt.Sprintf("search_month_words(m.search_words, m.created_date) && search_months_of($%d::text[], %s, %s)",
			first+i, firstMonth, lastMonth)
		args[i] = lexemes
	}
	return strings.Join(conds, " AND "), args
}

// lexemeShares are the planner's statistics of search_words: the share of messages holding each of its
// most common lexemes, and the share it takes for any other (half the least common one's).
type lexemeShares struct {
	at     time.Time
	shares map[string]float64
	other  float64
}

// share is the estimated share of messages holding a lexeme of each word, the words taken as independent
// as the planner takes them. A word's stem and its term are mostly in the same messages, so a word counts
// its most frequent lexeme or half the sum of its lexemes', whichever is more.
func (st *lexemeShares) share(words [][]string) float64 {
	share := 1.0
	for _, lexemes := range words {
		most, sum := 0.0, 0.0
		for _, l := range lexemes {
			f, ok := st.shares[l]
			if !ok {
				f = st.other
			}
			most, sum = max(most, f), sum+f
		}
		share *= min(max(most, sum/2), 1)
	}
	return share
}

// lexemeStatsAge is how long the statistics are kept; PostgreSQL gathers them anew when autovacuum
// analyzes messages, after a tenth of them changed.
const lexemeStatsAge = time.Minute

// lexemeStatsCache holds the statistics of each pool's database: reading pg_stats costs about 1.5 ms of
// planning, more than the search it would decide.
var lexemeStatsCache sync.Map // *pgxpool.Pool → *lexemeShares

// lexemeStats returns the statistics of search_words, none (every share 0) before the first ANALYZE.
// Reads over a pool keep them for lexemeStatsAge; reads in a transaction read them each time.
func lexemeStats(ctx context.Context, db store.DBTX) (*lexemeShares, error) {
	pool, cached := db.(*pgxpool.Pool)
	if cached {
		if st, ok := lexemeStatsCache.Load(pool); ok && time.Since(st.(*lexemeShares).at) < lexemeStatsAge {
			return st.(*lexemeShares), nil
		}
	}
	st := &lexemeShares{at: time.Now(), shares: map[string]float64{}}
	var (
		lexemes []string
		freqs   []float64
	)
	err := db.QueryRow(ctx, `SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs FROM pg_stats s
		WHERE s.schemaname = current_schema() AND s.tablename = 'messages' AND s.attname = 'search_words'`).Scan(&lexemes, &freqs)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return nil, err
	case len(freqs) > len(lexemes): // after the lexemes' shares: the least, the most, and the share of empty ones
		for i, l := range lexemes {
			st.shares[l] = freqs[i]
		}
		st.other = freqs[len(lexemes)] / 2
	}
	if cached {
		lexemeStatsCache.Store(pool, st)
	}
	return st, nil
}
