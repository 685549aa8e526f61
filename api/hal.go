package api

import (
	"bytes"
	"encoding"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
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

// Links is a resource's `_links`, kept in the order the relations were added.
type Links struct {
	rels []linkRel
}

type linkRel struct {
	name  string
	links []Link
	array bool
}

// Add sets a relation to a single link.
func (l *Links) Add(rel string, link Link) *Links {
	l.rels = append(l.rels, linkRel{name: rel, links: []Link{link}})
	return l
}

// AddArray sets a relation to an array of links (rendered as an array even when it holds one).
func (l *Links) AddArray(rel string, links []Link) *Links {
	l.rels = append(l.rels, linkRel{name: rel, links: links, array: true})
	return l
}

// Self returns the href of the self relation.
func (l Links) Self() string {
	for _, r := range l.rels {
		if r.name == "self" && len(r.links) == 1 {
			return r.links[0].Href
		}
	}
	return ""
}

// MarshalJSON writes the relations as one object in insertion order.
func (l Links) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, r := range l.rels {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(r.name)
		b.Write(name)
		b.WriteByte(':')
		var v any = r.links
		if !r.array {
			v = r.links[0]
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b.Write(enc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Embedded is a collection's `_embedded`: one named list of resources.
type Embedded struct {
	Name  string
	Items any // a slice
}

// MarshalJSON writes {"<name>": [...]}, with an empty list rather than null.
func (e Embedded) MarshalJSON() ([]byte, error) {
	items := e.Items
	if v := reflect.ValueOf(items); !v.IsValid() || (v.Kind() == reflect.Slice && v.IsNil()) {
		items = []struct{}{}
	}
	return json.Marshal(map[string]any{e.Name: items})
}

// Collection is the spec's list shape: `{ _links: { self, ... }, _embedded: { <name>: [ ... ] } }`.
type Collection struct {
	Links    Links    `json:"_links"`
	Embedded Embedded `json:"_embedded"`
}

// Timestamp is an ISO 8601 local date-time without zone, as the interface writes them.
type Timestamp struct{ time.Time }

// TimestampLayout is the format of every timestamp in responses.
const TimestampLayout = "2006-01-02T15:04:05"

// MarshalText writes the local date-time.
func (t Timestamp) MarshalText() ([]byte, error) {
	return []byte(t.Format(TimestampLayout)), nil
}

// MarshalJSON writes the local date-time as a JSON string (time.Time's own would add a zone).
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.Format(TimestampLayout) + `"`), nil
}

// At returns a Timestamp for t, or nil for a nil t, which renders as null.
func At(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	return &Timestamp{*t}
}

// writeHALXML renders v as HAL+XML: the resource is a <resource> element whose href is its self link;
// other links are <link rel=".." href=".."/>, fields are elements named like the JSON fields, and
// embedded resources are nested <resource rel="<collection name>"> elements.
func writeHALXML(w io.Writer, v any) error {
	enc := xml.NewEncoder(w)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	x := xmlWriter{enc: enc}
	rv := reflect.ValueOf(v)
	if k := indirect(rv).Kind(); k == reflect.Slice || k == reflect.Array {
		x.list("resources", "resource", indirect(rv))
	} else {
		x.resource(rv, "")
	}
	if x.err != nil {
		return x.err
	}
	return enc.Flush()
}

// writePlainXML renders v as an element named root, fields as child elements; used for problem bodies.
func writePlainXML(w io.Writer, root, namespace string, v any) error {
	enc := xml.NewEncoder(w)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	x := xmlWriter{enc: enc}
	start := xml.StartElement{Name: xml.Name{Local: root}}
	if namespace != "" {
		start.Attr = []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: namespace}}
	}
	x.token(start)
	x.fields(indirect(reflect.ValueOf(v)))
	x.token(start.End())
	if x.err != nil {
		return x.err
	}
	return enc.Flush()
}

type xmlWriter struct {
	enc *xml.Encoder
	err error
}

func (x *xmlWriter) token(t xml.Token) {
	if x.err == nil {
		x.err = x.enc.EncodeToken(t)
	}
}

func indirect(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

var linksType = reflect.TypeOf(Links{})

func (x *xmlWriter) resource(v reflect.Value, rel string) {
	v = indirect(v)
	start := xml.StartElement{Name: xml.Name{Local: "resource"}}
	if rel != "" {
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "rel"}, Value: rel})
	}
	if self := findLinks(v).Self(); self != "" {
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "href"}, Value: self})
	}
	x.token(start)
	x.fields(v)
	x.token(start.End())
}

// findLinks returns the _links of a struct, looking into embedded structs.
func findLinks(v reflect.Value) Links {
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return Links{}
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Type == linksType {
			return v.Field(i).Interface().(Links)
		}
		if f.Anonymous {
			if l := findLinks(indirect(v.Field(i))); len(l.rels) > 0 {
				return l
			}
		}
	}
	return Links{}
}

func (x *xmlWriter) fields(v reflect.Value) {
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		name, omitEmpty := jsonName(f)
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			x.fields(indirect(fv))
			continue
		}
		if name == "" {
			name = f.Name
		}
		if omitEmpty && fv.IsZero() {
			continue
		}
		switch val := fv.Interface().(type) {
		case Links:
			x.links(val)
		case Embedded:
			items := indirect(reflect.ValueOf(val.Items))
			for j := 0; items.IsValid() && j < items.Len(); j++ {
				x.resource(items.Index(j), val.Name)
			}
		default:
			x.value(name, itemName(f, name), fv)
		}
	}
}

func (x *xmlWriter) links(l Links) {
	for _, r := range l.rels {
		if r.name == "self" && !r.array {
			continue // carried as the resource's href
		}
		for _, link := range r.links {
			start := xml.StartElement{Name: xml.Name{Local: "link"}, Attr: []xml.Attr{{Name: xml.Name{Local: "rel"}, Value: r.name}}}
			lv := reflect.ValueOf(link)
			for i := 0; i < lv.NumField(); i++ {
				name, _ := jsonName(lv.Type().Field(i))
				raw := lv.Field(i)
				if (raw.Kind() == reflect.Pointer && raw.IsNil()) || (raw.Kind() != reflect.Pointer && raw.IsZero()) {
					continue // pointers are the optional attachment fields: present whenever set, even when false or 0
				}
				fv := indirect(raw)
				if name == "isTemplated" {
					name = "templated"
				}
				start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: name}, Value: scalarText(fv)})
			}
			x.token(start)
			x.token(start.End())
		}
	}
}

func (x *xmlWriter) value(name, item string, v reflect.Value) {
	start := xml.StartElement{Name: xml.Name{Local: name}}
	if tm, ok := v.Interface().(encoding.TextMarshaler); ok && !(v.Kind() == reflect.Pointer && v.IsNil()) {
		text, err := tm.MarshalText()
		if err != nil && x.err == nil {
			x.err = err
		}
		x.token(start)
		x.token(xml.CharData(text))
		x.token(start.End())
		return
	}
	v = indirect(v)
	if !v.IsValid() { // null: an empty element
		x.token(start)
		x.token(start.End())
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		x.token(start)
		x.fields(v)
		x.token(start.End())
	case reflect.Slice, reflect.Array:
		x.list(name, item, v)
	case reflect.Map:
		x.token(start)
		keys := v.MapKeys()
		strs := make([]string, len(keys))
		for i, k := range keys {
			strs[i] = fmt.Sprint(k.Interface())
		}
		for i := range keys {
			x.value(strs[i], "item", v.MapIndex(keys[i]))
		}
		x.token(start.End())
	default:
		x.token(start)
		x.token(xml.CharData(scalarText(v)))
		x.token(start.End())
	}
}

func (x *xmlWriter) list(name, item string, v reflect.Value) {
	start := xml.StartElement{Name: xml.Name{Local: name}}
	x.token(start)
	for i := 0; i < v.Len(); i++ {
		if item == "resource" {
			x.resource(v.Index(i), "")
			continue
		}
		x.value(item, "item", v.Index(i))
	}
	x.token(start.End())
}

func scalarText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

func jsonName(f reflect.StructField) (name string, omitEmpty bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	return name, strings.Contains(opts, "omitempty")
}

// itemName is the element name of a list's entries: the `xmlitem` tag, or the list's name without its plural s.
func itemName(f reflect.StructField, name string) string {
	if n := f.Tag.Get("xmlitem"); n != "" {
		return n
	}
	if s, ok := strings.CutSuffix(name, "s"); ok && s != "" {
		return s
	}
	return "item"
}
