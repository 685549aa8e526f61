package render

import (
	"encoding"
	"encoding/xml"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// WriteHALXML renders v as HAL+XML: the resource is a <resource> element whose href is its self link;
// other links are <link rel=".." href=".."/>, fields are elements named like the JSON fields, and
// embedded resources are nested <resource rel="<collection name>"> elements.
func WriteHALXML(w io.Writer, v any) error {
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

// WritePlainXML renders v as an element named root, fields as child elements; used for problem bodies.
func WritePlainXML(w io.Writer, root, namespace string, v any) error {
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

// isEmptyValue is what omitempty leaves out, as encoding/json has it: false, 0, "", nil, and empty
// arrays, slices and maps (an empty non-nil slice too).
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

func indirectType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
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

var linkType = reflect.TypeOf(Link{})

// linksOf reads a `_links` value: a Links map, or a struct whose fields (Link, *Link, []Link) are named by
// their JSON tags — the hot resources use one, since the JSON encoder sorts map keys on every write.
func linksOf(v reflect.Value) Links {
	v = indirect(v)
	if !v.IsValid() {
		return nil
	}
	if l, ok := v.Interface().(Links); ok {
		return l
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	var out Links
	for i := 0; i < v.NumField(); i++ {
		rel, _ := jsonName(v.Type().Field(i))
		fv := v.Field(i)
		switch {
		case fv.Type() == linkType:
			out.Add(rel, fv.Interface().(Link))
		case fv.Kind() == reflect.Pointer && fv.Type().Elem() == linkType && !fv.IsNil():
			out.Add(rel, *fv.Interface().(*Link))
		case fv.Kind() == reflect.Slice && fv.Type().Elem() == linkType && fv.Len() > 0:
			out.AddArray(rel, fv.Interface().([]Link))
		}
	}
	return out
}

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
		return nil
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if name, _ := jsonName(f); name == "_links" {
			return linksOf(v.Field(i))
		}
		if f.Anonymous {
			if l := findLinks(indirect(v.Field(i))); len(l) > 0 {
				return l
			}
		}
	}
	return nil
}

func (x *xmlWriter) fields(v reflect.Value) {
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fv := v.Field(i)
		name, omitEmpty := jsonName(f)
		if name == "-" {
			continue
		}
		// The fields of an embedded struct are the resource's own, as encoding/json promotes them: also
		// when the embedded type is unexported (reflect lets its exported fields be read).
		if f.Anonymous && name == "" && indirectType(f.Type).Kind() == reflect.Struct {
			x.fields(indirect(fv))
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if omitEmpty && isEmptyValue(fv) {
			continue
		}
		if name == "_links" {
			x.links(linksOf(fv))
			continue
		}
		switch val := fv.Interface().(type) {
		case Embedded:
			for name, list := range val {
				items := indirect(reflect.ValueOf(list))
				for j := 0; items.IsValid() && j < items.Len(); j++ {
					x.resource(items.Index(j), name)
				}
			}
		default:
			x.value(name, itemName(f, name), fv)
		}
	}
}

// links writes every relation but self (which is the resource's href), in name order.
func (x *xmlWriter) links(l Links) {
	rels := make([]string, 0, len(l))
	for rel := range l {
		if rel != "self" {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	for _, rel := range rels {
		var links []Link
		switch v := l[rel].(type) {
		case Link:
			links = []Link{v}
		case []Link:
			links = v
		}
		for _, link := range links {
			start := xml.StartElement{Name: xml.Name{Local: "link"}, Attr: []xml.Attr{{Name: xml.Name{Local: "rel"}, Value: rel}}}
			lv := reflect.ValueOf(link)
			for i := 0; i < lv.NumField(); i++ {
				name, _ := jsonName(lv.Type().Field(i))
				raw := lv.Field(i)
				if (raw.Kind() == reflect.Pointer && raw.IsNil()) || (raw.Kind() != reflect.Pointer && raw.IsZero()) {
					continue // pointers are the optional attachment fields: present whenever set, even when false or 0
				}
				if name == "isTemplated" {
					name = "templated"
				}
				start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: name}, Value: scalarText(indirect(raw))})
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
		order := make([]int, len(keys)) // by name, as JSON writes a map: the same document every time
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(strs[a], strs[b]) })
		for _, i := range order {
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
