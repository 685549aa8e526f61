package api

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

var jsonBodyTypes = []string{"application/hal+json", "application/json"}

// bindJSON decodes a JSON request body into v: 415 for another content type, 413 past the size
// limit, 400 for anything malformed, with the reason, and 400 naming the field for text no field may
// hold (checkFields: NUL, past the field's limit).
func bindJSON(c *gin.Context, v any) error {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || !slices.Contains(jsonBodyTypes, mt) {
		return problem.New(http.StatusUnsupportedMediaType, "unsupported-media-type", "the body must be application/hal+json or application/json")
	}
	dec := json.NewDecoder(c.Request.Body)
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if answered(err) {
			return err
		}
		return problem.BadRequest("the body holds more than one JSON value")
	}
	return checkFields(reflect.ValueOf(v), "", "")
}

// answered tells whether a body decoder's error is already the answer: past the size limit (413), or a problem.
func answered(err error) bool {
	var (
		maxBytes *http.MaxBytesError
		prob     *problem.Problem
	)
	return errors.As(err, &maxBytes) || errors.As(err, &prob)
}

func jsonProblem(err error) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case answered(err):
		return err
	case errors.As(err, &syntax):
		return problem.BadRequest("the body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			want, ok := fieldTypes[typ.Type]
			if !ok {
				want = jsonKind(typ.Type.Kind().String())
			}
			return problem.BadRequest("field %s must be %s, not %s", typ.Field, want, typ.Value)
		}
		return problem.BadRequest("the body must be a JSON object")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return problem.BadRequest("the body is empty or cut short")
	}
	return problem.BadRequest("the body cannot be read as JSON")
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a number"
}
