// Package render writes resources: HAL links and collections, the HAL+XML form of any resource, and the
// media type the client asked for (content negotiation).
package render

import (
	"reflect"
	"time"

	"github.com/postbox/postbox/clock"
)

// Link is a HAL link. Attachment links carry the extra attachment fields.
type Link struct {
	Href            string `json:"href"`
	IsTemplated     bool   `json:"isTemplated,omitempty"`
	MimeType        string `json:"mime-type,omitempty"`
	Name            string `json:"name,omitempty"`
	FileName        string `json:"fileName,omitempty"`
	Encrypted       *bool  `json:"encrypted,omitempty"`
	SigningLocked   *bool  `json:"signinglocked,omitempty"`
	SignedByDefault *bool  `json:"signedbydefault,omitempty"`
	FileSize        *int64 `json:"filesize,omitempty"`
}

// Links is a resource's `_links`: a relation maps to a Link, or to a []Link for array relations. It is a
// plain map so the JSON encoder writes it without a custom marshaler (which would re-scan every body).
type Links map[string]any

// Add sets a relation to a single link.
func (l *Links) Add(rel string, link Link) *Links {
	if *l == nil {
		*l = Links{}
	}
	(*l)[rel] = link
	return l
}

// AddArray sets a relation to an array of links (rendered as an array even when it holds one).
func (l *Links) AddArray(rel string, links []Link) *Links {
	if *l == nil {
		*l = Links{}
	}
	(*l)[rel] = links
	return l
}

// Self returns the href of the self relation.
func (l Links) Self() string {
	if self, ok := l["self"].(Link); ok {
		return self.Href
	}
	return ""
}

// Embedded is a collection's `_embedded`: one named list of resources. It is a plain map so the JSON
// encoder writes the items directly (a MarshalJSON here would have every body re-scanned).
type Embedded map[string]any

// EmbedList names a list, as an empty list rather than null when there are no items.
func EmbedList(name string, items any) Embedded {
	if v := reflect.ValueOf(items); !v.IsValid() || (v.Kind() == reflect.Slice && v.IsNil()) {
		items = []struct{}{}
	}
	return Embedded{name: items}
}

// Collection is the spec's list shape: `{ _links: { self, ... }, _embedded: { <name>: [ ... ] } }`.
type Collection struct {
	Links    Links    `json:"_links"`
	Embedded Embedded `json:"_embedded"`
}

// Timestamp is an ISO 8601 local date-time without zone, as the interface writes them. It is a
// TextMarshaler only, so JSON writes it as a string without re-scanning it.
type Timestamp struct{ t time.Time }

// TimestampOf is t as the interface writes it.
func TimestampOf(t time.Time) Timestamp { return Timestamp{t} }

// TimestampOrNull is t as the interface writes it, or null when there is none.
func TimestampOrNull(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	return &Timestamp{*t}
}

// MarshalText writes the local date-time.
func (t Timestamp) MarshalText() ([]byte, error) {
	return t.t.AppendFormat(nil, clock.LocalTimeLayout), nil
}
