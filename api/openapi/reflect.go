package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"
)

// Reflector makes schemas from Go types the way encoding/json writes them: a named struct becomes a
// component (referenced by $ref), its fields properties named by their json tags, required unless
// omitempty, and no other property allowed; a pointer field without omitempty may be null.
type Reflector struct {
	// Schemas are the components made so far, by name.
	Schemas   map[string]*Schema
	names     map[reflect.Type]string
	overrides map[reflect.Type]func() *Schema
}

// NewReflector returns an empty reflector; it knows time.Time (RFC 3339) and json.RawMessage (any JSON).
func NewReflector() *Reflector {
	r := &Reflector{Schemas: map[string]*Schema{}, names: map[reflect.Type]string{}, overrides: map[reflect.Type]func() *Schema{}}
	r.Override(reflect.TypeFor[time.Time](), func() *Schema { return &Schema{Type: "string", Format: "date-time"} })
	r.Override(reflect.TypeFor[json.RawMessage](), func() *Schema { return &Schema{} })
	return r
}

// Name gives the component of t a name of its own instead of its Go name.
func (r *Reflector) Name(t reflect.Type, name string) { r.names[t] = name }

// Override describes t by the schema s makes, instead of by reflection: for types whose JSON is not their
// structure (a map of links, a time written as text).
func (r *Reflector) Override(t reflect.Type, s func() *Schema) { r.overrides[t] = s }

// Component registers s under name (a schema that is no Go type, such as a collection) and returns its $ref.
func (r *Reflector) Component(name string, s *Schema) *Schema {
	r.Schemas[name] = s
	return Ref(name)
}

// Ref is a reference to the component schema name.
func Ref(name string) *Schema { return &Schema{Ref: "#/components/schemas/" + name} }

// Nullable is s or null.
func Nullable(s *Schema) *Schema {
	if t, ok := s.Type.(string); ok && s.Ref == "" {
		c := *s
		c.Type = []string{t, "null"}
		return &c
	}
	return &Schema{OneOf: []*Schema{s, {Type: "null"}}}
}

// Of is the schema of v's type.
func (r *Reflector) Of(v any) *Schema { return r.Schema(reflect.TypeOf(v)) }

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// Schema is the schema of t.
func (r *Reflector) Schema(t reflect.Type) *Schema {
	if o, ok := r.overrides[t]; ok {
		return o()
	}
	if t.Implements(jsonMarshaler) {
		panic(fmt.Sprintf("openapi: %s writes its own JSON; describe it with Override", t))
	}
	if t.Kind() != reflect.Pointer && t.Implements(textMarshaler) {
		return &Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return r.Schema(t.Elem())
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Interface:
		return &Schema{}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string", ContentMediaType: "application/octet-stream", Description: "base64"}
		}
		return &Schema{Type: "array", Items: r.Schema(t.Elem())}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: r.Schema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return r.object(t)
		}
		name := r.name(t)
		if _, done := r.Schemas[name]; !done {
			r.Schemas[name] = &Schema{} // a placeholder while its fields are made: types may refer to themselves
			r.Schemas[name] = r.object(t)
		}
		return Ref(name)
	}
	panic(fmt.Sprintf("openapi: no schema for %s", t))
}

// name is the component name of a named type: its own name with a capital, and its package's before it
// when another package has a type of that name.
func (r *Reflector) name(t reflect.Type) string {
	if n, ok := r.names[t]; ok {
		return n
	}
	n := capital(t.Name())
	if i := strings.IndexByte(n, '['); i >= 0 { // a generic type
		n = n[:i]
	}
	for other, taken := range r.names {
		if taken == n && other != t {
			pkg := t.PkgPath()[strings.LastIndexByte(t.PkgPath(), '/')+1:]
			n = capital(pkg) + n
		}
	}
	r.names[t] = n
	return n
}

func capital(s string) string {
	if s == "" {
		return s
	}
	rs := []rune(s)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}

func (r *Reflector) object(t reflect.Type) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: false}
	r.fields(t, s)
	return s
}

// fields adds the properties of struct t to s, those of embedded structs too, as encoding/json promotes them.
func (r *Reflector) fields(t reflect.Type, s *Schema) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				r.fields(ft, s)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		fs := r.Schema(f.Type)
		if strings.Contains(","+opts+",", ",string,") {
			fs = &Schema{Type: "string"}
		}
		if f.Type.Kind() == reflect.Pointer && !optional {
			fs = Nullable(fs)
		}
		s.Properties[name] = fs
		if !optional {
			s.Required = append(s.Required, name)
		}
	}
}
