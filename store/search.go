package store

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a free-text search, so that one request stays a handful of index lookups.
const (
	MaxSearchWords    = 8
	MaxSearchWordLen  = 64 // characters
	minSubstringRunes = 3  // shorter words have no trigram to look up, so they match as word prefixes only
)

// Search is a free-text search over messages: every word must occur in the Subject, Summary, Body text,
// MessageSender or ServiceOwner of a message, either as the start of a word in the message's language
// (full-text search, so inflected forms match: "meldingene" finds "melding") or, for words of three
// characters or more, anywhere in the text ("melding" finds "skattemelding"). Letters are matched
// without regard to case. The zero Search matches everything.
type Search struct {
	words []string
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

// sql is the condition of s over messages m with its arguments, placeholders from $first: per word, the
// prefix query in both configurations (the vector of each message is in its own language, so a query in
// the other language's stemming simply finds nothing there) or the substring. Both sides are GIN
// indexed, so each word is a bitmap of matching messages; words are ANDed.
func (s Search) sql(first int) (string, []any) {
	if s.Empty() {
		return "TRUE", nil
	}
	var (
		conds []string
		args  []any
	)
	for _, w := range s.words {
		// Words hold only letters and digits, which neither tsquery nor LIKE give a meaning to.
		args = append(args, w+":*")
		cond := fmt.Sprintf("m.search_words @@ (to_tsquery('norwegian', $%[1]d) || to_tsquery('english', $%[1]d))", first+len(args)-1)
		if utf8.RuneCountInString(w) >= minSubstringRunes {
			args = append(args, "%"+w+"%")
			cond = fmt.Sprintf("(%s OR m.search_text LIKE $%d)", cond, first+len(args)-1)
		}
		conds = append(conds, cond)
	}
	return strings.Join(conds, " AND "), args
}
