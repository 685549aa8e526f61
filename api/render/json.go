package render

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/postbox/postbox/clock"
)

// JSONAppender is a resource that writes its own JSON without reflection: byte for byte what
// encoding/json writes of it with HTML left unescaped (tests hold every such type to that). The message
// resources are: a list page holds fifty, and encoding/json's reflection over them was a quarter of the
// API's CPU for a list.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

var appenderType = reflect.TypeFor[JSONAppender]()

// AppendJSON appends v as the JSON media types write it, newline included: by its own AppendJSON when it
// has one (or is a collection of such items), else by encoding/json.
func AppendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case JSONAppender:
		return append(v.AppendJSON(b), '\n'), nil
	case Collection:
		if out, ok := v.appendJSON(b); ok {
			return append(out, '\n'), nil
		}
	default:
		// A resource passed by value whose pointer writes itself (AppendJSON has a pointer receiver, as
		// the message resource's does): a copy of it writes itself rather than reflection over it.
		if rv := reflect.ValueOf(v); rv.IsValid() && rv.Kind() != reflect.Pointer && reflect.PointerTo(rv.Type()).Implements(appenderType) {
			p := reflect.New(rv.Type())
			p.Elem().Set(rv)
			return append(p.Interface().(JSONAppender).AppendJSON(b), '\n'), nil
		}
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// appendJSON writes the collection when its links are Links and its items write themselves; ok is false
// (and nothing is written) when they do not.
func (c Collection) appendJSON(b []byte) (out []byte, ok bool) {
	if len(c.Embedded) != 1 {
		return b, false
	}
	var (
		name  string
		items reflect.Value
	)
	for n, v := range c.Embedded {
		name, items = n, reflect.ValueOf(v)
	}
	if items.Kind() != reflect.Slice || !reflect.PointerTo(items.Type().Elem()).Implements(appenderType) {
		return b, false
	}
	b = append(b, `{"_links":`...)
	if b, ok = c.Links.appendJSON(b); !ok {
		return b, false
	}
	b = append(b, `,"_embedded":{`...)
	b = AppendString(b, name)
	b = append(b, ":["...)
	for i := range items.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		b = items.Index(i).Addr().Interface().(JSONAppender).AppendJSON(b)
	}
	return append(b, "]}}"...), true
}

// appendJSON writes the links in the order of their relations (as encoding/json orders map keys); ok
// is false when a relation holds something other than a Link or []Link.
func (l Links) appendJSON(b []byte) (out []byte, ok bool) {
	if l == nil {
		return append(b, "null"...), true
	}
	rels := make([]string, 0, len(l))
	for rel := range l {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	b = append(b, '{')
	for i, rel := range rels {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, rel)
		b = append(b, ':')
		switch link := l[rel].(type) {
		case Link:
			b = link.AppendJSON(b)
		case []Link:
			b = AppendLinks(b, link)
		default:
			return b, false
		}
	}
	return append(b, '}'), true
}

// AppendJSON writes the link as encoding/json does.
func (l *Link) AppendJSON(b []byte) []byte {
	b = append(b, `{"href":`...)
	b = AppendString(b, l.Href)
	if l.IsTemplated {
		b = append(b, `,"isTemplated":true`...)
	}
	if l.MimeType != "" {
		b = append(b, `,"mime-type":`...)
		b = AppendString(b, l.MimeType)
	}
	if l.Name != "" {
		b = append(b, `,"name":`...)
		b = AppendString(b, l.Name)
	}
	if l.FileName != "" {
		b = append(b, `,"fileName":`...)
		b = AppendString(b, l.FileName)
	}
	for _, f := range []struct {
		key string
		v   *bool
	}{{`,"encrypted":`, l.Encrypted}, {`,"signinglocked":`, l.SigningLocked}, {`,"signedbydefault":`, l.SignedByDefault}} {
		if f.v != nil {
			b = append(b, f.key...)
			b = strconv.AppendBool(b, *f.v)
		}
	}
	if l.FileSize != nil {
		b = append(b, `,"filesize":`...)
		b = strconv.AppendInt(b, *l.FileSize, 10)
	}
	return append(b, '}')
}

// AppendLinks writes an array of links as encoding/json does (null for a nil one).
func AppendLinks(b []byte, links []Link) []byte {
	if links == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range links {
		if i > 0 {
			b = append(b, ',')
		}
		b = links[i].AppendJSON(b)
	}
	return append(b, ']')
}

// AppendJSON writes the timestamp as a JSON string, as encoding/json writes its text.
func (t Timestamp) AppendJSON(b []byte) []byte {
	b = append(b, '"')
	b = t.t.AppendFormat(b, clock.LocalTimeLayout)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string exactly as encoding/json does with HTML left unescaped: '"',
// '\\' and control characters escaped, invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look of its own (most of a text, all of an address).
		for i+8 <= len(s) && plainWord(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainWord tells whether none of the eight bytes of w needs escaping or decoding: each is ASCII, at least
// 0x20, and neither '"' nor '\\'. The tests for a byte below n and a zero byte are those of "Bit Twiddling
// Hacks"; their borrows can only mark a byte above one that matches, so "none matches" is exact.
func plainWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	control := (w - ones*0x20) &^ w
	return (control|(quote-ones)&^quote|(backslash-ones)&^backslash|w)&highs == 0
}
