// Package rendertest holds resources that write their own JSON (render.JSONAppender) to what
// encoding/json writes of them.
package rendertest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/postbox/postbox/api/render"
)

// Tricky is text that JSON must escape, or may get wrong: quotes, backslashes, control characters,
// HTML, invalid UTF-8, U+2028 and U+2029, and letters beyond ASCII.
const Tricky = "\"a\\b\n\t\r\b\f\x01\x1f<&>\u2028\u2029\xff\xc3 æøå ÆØÅ 😀 /"

// Filled is a T with every exported field set, recursively: strings to Tricky and a number, numbers and
// times to something not zero, bools to true, pointers to filled values and slices to two filled
// elements. So a field added to T but not to its AppendJSON makes SameAsEncodingJSON fail.
func Filled[T any]() T {
	var v T
	n := 0
	fill(reflect.ValueOf(&v).Elem(), &n)
	return v
}

var timestampType = reflect.TypeFor[render.Timestamp]()

func fill(v reflect.Value, n *int) {
	*n++
	if v.Type() == timestampType {
		v.Set(reflect.ValueOf(render.TimestampOf(time.Date(2024, 2, 29, 23, 59, 58, *n*1000, time.Local))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(Tricky + strconv.Itoa(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n) * 1_000_003)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n) * 1_000_003)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	default:
		panic("rendertest: cannot fill a " + v.Type().String())
	}
}

// SameAsEncodingJSON asserts that v writes itself as encoding/json writes it with HTML left unescaped.
func SameAsEncodingJSON(t *testing.T, v render.JSONAppender) bool {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	got, err := render.AppendJSON(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return assert.Equal(t, want.String(), string(got), "%T", v)
}
