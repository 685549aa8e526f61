package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
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
// A search is run in two steps: Queries.ResolveSearch looks its words up in the lexicon of every word
// the messages hold and makes the search one tsquery, which the list statements match search_words with.
type Search struct {
	words    []string
	resolved bool
	query    string // the tsquery, once resolved; "" when a word is found nowhere
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
func (q *Queries) ResolveSearch(ctx context.Context, s Search) (Search, error) {
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
	rows, err := q.db.Query(ctx, `SELECT ARRAY(
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
	clauses := make([]string, len(found))
	for i, lexemes := range found {
		switch {
		case len(lexemes) > MaxSearchTerms:
			return s, &SearchError{Msg: fmt.Sprintf("%q stands for more than %d different words: give more of the word", s.words[i], MaxSearchTerms)}
		case len(lexemes) == 0:
			return Search{words: s.words, resolved: true}, nil // a word found nowhere: nothing matches
		}
		for j, l := range lexemes {
			lexemes[j] = tsqueryQuoter.Replace(l)
		}
		clauses[i] = "('" + strings.Join(lexemes, "' | '") + "')"
	}
	return Search{words: s.words, resolved: true, query: strings.Join(clauses, " & ")}, nil
}

// tsqueryQuoter escapes a lexeme for a quoted tsquery operand: the stems of the parser's other tokens
// (e-mail addresses, paths) may hold what a search word cannot.
var tsqueryQuoter = strings.NewReplacer(`\`, `\\`, `'`, `''`)

// errUnresolvedSearch is a programming error: a list statement built from a Search not yet resolved.
var errUnresolvedSearch = errors.New("search: not resolved (Queries.ResolveSearch)")

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
