package api

import (
	"encoding/json"
	"reflect"
	"strconv"
)

// Field types of JSON request bodies that take what clients send beside what the interface writes.

// jsonText is every string field of a JSON request body. The interface writes these fields as strings,
// but clients send JSON numbers where a string holds digits ("RoleDescription": 64, "ServiceCode": 4711);
// such a number is taken as its digits. Other numbers (negative, fractions, exponents), booleans, objects
// and arrays are refused, naming the field.
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = jsonText(s)
		return nil
	case isDigits(b):
		*t = jsonText(b)
		return nil
	}
	return fieldTypeError[jsonText](b)
}

// flexInt is a whole number sent as a JSON number or as a string of digits (the interface writes
// DataFormatVersion as a string), bounded so that no huge number reaches the store.
type flexInt struct {
	n   int
	set bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	raw := b
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		raw = b[1 : len(b)-1]
	}
	n, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil || n < 0 || !isDigits(raw) {
		return fieldTypeError[flexInt](b)
	}
	f.n, f.set = int(n), true
	return nil
}

// isDigits tells whether b is a JSON number of digits only: a whole number without sign or exponent.
func isDigits(b []byte) bool {
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fieldTypeError is the error a field of type T gives for the JSON value b; the decoder adds the field's
// path and jsonProblem says what T takes (fieldTypes).
func fieldTypeError[T any](b []byte) error {
	value := "null"
	switch {
	case len(b) == 0:
	case b[0] == '"':
		value = "string " + string(b)
	case b[0] == '{':
		value = "object"
	case b[0] == '[':
		value = "array"
	case b[0] == 't' || b[0] == 'f':
		value = "bool " + string(b)
	case b[0] != 'n':
		value = "number " + string(b)
	}
	return &json.UnmarshalTypeError{Value: value, Type: reflect.TypeFor[T]()}
}

// fieldTypes say what the field types of this file take.
var fieldTypes = map[reflect.Type]string{
	reflect.TypeFor[jsonText](): "a string (or a JSON number of digits only)",
	reflect.TypeFor[flexInt]():  "a whole number from 0 to 2147483647 (a JSON number or a string of digits)",
}
