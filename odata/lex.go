package odata

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits that keep hostile query options cheap to reject.
const (
	MaxLength = 2000 // bytes per $filter or $orderby value
	MaxDepth  = 32   // nested parentheses and nots in $filter
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokLiteral
	tokLParen
	tokRParen
	tokComma
)

type token struct {
	kind tokKind
	pos  int
	text string  // source text, quoted back in error messages
	lit  Literal // for tokLiteral
}

// describe names the token for an error message.
func (t token) describe() string {
	switch {
	case t.kind == tokEOF:
		return "end of input"
	case t.kind == tokLiteral && t.lit.Kind == LitString:
		return "string " + clip(t.text)
	case t.kind == tokLiteral && t.lit.Kind == LitDateTime:
		return clip(t.text)
	}
	return "'" + clip(t.text) + "'"
}

// clip keeps messages short when a client sends a huge token.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// keywords cannot be property names; they may touch a following quote,
// as in "Name eq'x'".
var keywords = map[string]bool{
	"and": true, "or": true, "not": true,
	"eq": true, "ne": true, "gt": true, "ge": true, "lt": true, "le": true,
	"true": true, "false": true, "null": true,
}

func isKeyword(word string) bool { return keywords[strings.ToLower(word)] }

func lex(s string) ([]token, error) {
	if len(s) > MaxLength {
		return nil, &SyntaxError{Pos: MaxLength, Msg: fmt.Sprintf("longer than %d bytes", MaxLength)}
	}
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return nil, &SyntaxError{Pos: i, Msg: "invalid UTF-8"}
	}
	var toks []token
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return append(toks, token{kind: tokEOF, pos: i}), nil
		}
		start := i
		c := s[i]
		t := token{pos: start}
		switch {
		case c == '(':
			t.kind, i = tokLParen, i+1
		case c == ')':
			t.kind, i = tokRParen, i+1
		case c == ',':
			t.kind, i = tokComma, i+1
		case c == '\'':
			str, end, err := lexString(s, i)
			if err != nil {
				return nil, err
			}
			t.kind, t.lit, i = tokLiteral, Literal{Kind: LitString, Str: str}, end
		case isDigit(c) || c == '-' && i+1 < len(s) && isDigit(s[i+1]):
			n, end, err := lexInt(s, i)
			if err != nil {
				return nil, err
			}
			t.kind, t.lit, i = tokLiteral, Literal{Kind: LitInt, Int: n}, end
		case isIdentStart(c):
			for i++; i < len(s) && isIdentPart(s[i]); i++ {
			}
			word := s[start:i]
			t.kind = tokIdent
			if i < len(s) && s[i] == '\'' && !isKeyword(word) {
				if !strings.EqualFold(word, "datetime") {
					return nil, &SyntaxError{Pos: start, Msg: fmt.Sprintf("unsupported literal type '%s'", clip(word))}
				}
				tm, end, err := lexDateTime(s, start, i)
				if err != nil {
					return nil, err
				}
				t.kind, t.lit, i = tokLiteral, Literal{Kind: LitDateTime, Time: tm}, end
			}
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, &SyntaxError{Pos: i, Msg: fmt.Sprintf("unexpected character %q", r)}
		}
		t.text = s[start:i]
		toks = append(toks, t)
	}
}

// lexString reads the string literal whose opening quote is at s[i], where a
// doubled quote stands for one, and returns its value and the offset after it.
func lexString(s string, i int) (string, int, error) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			return b.String(), j + 1, nil
		case 0:
			// PostgreSQL text cannot hold NUL; reject it here rather than fail in the database.
			return "", 0, &SyntaxError{Pos: j, Msg: "NUL character in string"}
		}
		b.WriteByte(s[j])
	}
	return "", 0, &SyntaxError{Pos: i, Msg: "unterminated string"}
}

func lexInt(s string, i int) (int64, int, error) {
	j := i + 1
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		return 0, 0, &SyntaxError{Pos: i, Msg: "decimal numbers are not supported"}
	}
	if j < len(s) && isIdentPart(s[j]) {
		return 0, 0, &SyntaxError{Pos: i, Msg: "invalid number"}
	}
	n, err := strconv.ParseInt(s[i:j], 10, 64)
	if err != nil {
		// The text is only digits, so the sole possible failure is range.
		return 0, 0, &SyntaxError{Pos: i, Msg: "integer out of range"}
	}
	return n, j, nil
}

// lexDateTime reads DateTime'...' where s[start:q] is the prefix and s[q] the
// opening quote.
func lexDateTime(s string, start, q int) (time.Time, int, error) {
	end := strings.IndexByte(s[q+1:], '\'')
	if end < 0 {
		return time.Time{}, 0, &SyntaxError{Pos: start, Msg: "unterminated DateTime"}
	}
	end += q + 1
	tm, msg := parseDateTime(s[q+1 : end])
	if msg != "" {
		return time.Time{}, 0, &SyntaxError{Pos: start, Msg: "invalid DateTime: " + msg}
	}
	return tm, end + 1, nil
}

// parseDateTime accepts yyyy-mm-ddThh:mm[:ss[.fffffffff]] without a zone
// and returns the time in UTC, or a message saying what is wrong. It is
// stricter than time.Parse, which accepts one-digit hours and the like.
func parseDateTime(v string) (time.Time, string) {
	const format = "expected yyyy-mm-ddThh:mm[:ss[.fraction]]"
	num := func(i, n int) int {
		if i+n > len(v) {
			return -1
		}
		x := 0
		for _, c := range []byte(v[i : i+n]) {
			if !isDigit(c) {
				return -1
			}
			x = x*10 + int(c-'0')
		}
		return x
	}
	sep := func(i int, c byte) bool { return i < len(v) && v[i] == c }
	year, month, day, hour, minute := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2)
	if year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 ||
		!sep(4, '-') || !sep(7, '-') || !sep(10, 'T') || !sep(13, ':') {
		return time.Time{}, format
	}
	sec, nsec, i := 0, 0, 16
	if sep(i, ':') {
		if sec = num(i+1, 2); sec < 0 {
			return time.Time{}, format
		}
		i += 3
		if sep(i, '.') {
			j := i + 1
			for j < len(v) && isDigit(v[j]) && j-i <= 9 {
				nsec = nsec*10 + int(v[j]-'0')
				j++
			}
			if j == i+1 || j < len(v) && isDigit(v[j]) {
				return time.Time{}, "fractional seconds need 1 to 9 digits"
			}
			for k := j - i - 1; k < 9; k++ {
				nsec *= 10
			}
			i = j
		}
	}
	switch {
	case i < len(v) && strings.IndexByte("Zz+-", v[i]) >= 0:
		return time.Time{}, "time zones are not supported"
	case i < len(v):
		return time.Time{}, format
	case year < 1:
		return time.Time{}, "year out of range"
	case month < 1 || month > 12:
		return time.Time{}, "month out of range"
	case day < 1 || day > daysIn(year, month):
		return time.Time{}, "day out of range"
	case hour > 23:
		return time.Time{}, "hour out of range"
	case minute > 59:
		return time.Time{}, "minute out of range"
	case sec > 59:
		return time.Time{}, "second out of range"
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), ""
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func isSpace(c byte) bool      { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }
