package api

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

// The longest text each field of a request may hold, in characters, whether it comes in a JSON or an
// XML body. Longer values, like a NUL character (which PostgreSQL cannot store) or invalid UTF-8, get
// 400 naming the field before any query runs. The table of field limits in docs/http.md is this one.
const (
	maxUserNameChars        = 256
	maxPasswordChars        = 1024
	maxRoleNameChars        = 100
	maxRoleDescriptionChars = 1000
	maxFileNameChars        = 255
	maxSummaryChars         = 2000 // a correspondence's Summary (correspondence.MaxSummary)
	maxCustomValueChars     = 1000 // a CustomMessageData Value (correspondence.MaxCustomDataLen)
	// maxTextChars bounds every other text field: names, codes, types, identity numbers.
	maxTextChars = 256
	// unboundedText marks fields held only by the body limit (form data, base64 attachments).
	unboundedText = -1

	// maxPathSegmentBytes and maxQueryValueBytes bound each path segment and query value.
	maxPathSegmentBytes = 256
	maxQueryValueBytes  = 4096
)

// fieldLimits are the fields whose limit is not maxTextChars, by their name in the body.
var fieldLimits = map[string]int{
	"UserName":        maxUserNameChars,
	"UserPassword":    maxPasswordChars,
	"RoleName":        maxRoleNameChars,
	"RoleDescription": maxRoleDescriptionChars,
	"FileName":        maxFileNameChars,
	"FormData":        unboundedText,
	"Data":            unboundedText,
	"Summary":         maxSummaryChars,
	"Value":           maxCustomValueChars,
	// A correspondence's HTML Body is bounded in bytes by its room (correspondence.MaxBodyBytes).
	"Body": unboundedText,
}

// fieldLimit is the longest text the field name may hold, or unboundedText.
func fieldLimit(name string) int {
	if limit, ok := fieldLimits[name]; ok {
		return limit
	}
	return maxTextChars
}

// checkText tells what is wrong with the text of a field, if anything.
func checkText(field, text string, limit int) error {
	switch {
	case strings.IndexByte(text, 0) >= 0:
		return problem.BadRequest("%s holds a NUL character (\\u0000), which is not allowed", field)
	case !utf8.ValidString(text):
		return problem.BadRequest("%s is not valid UTF-8", field)
	case limit != unboundedText && utf8.RuneCountInString(text) > limit:
		return problem.BadRequest("%s is longer than %d characters", field, limit)
	}
	return nil
}

// checkFields walks a decoded JSON body and checks every string in it against its field's limit,
// naming the field by its path in the body (_embedded.forms[0].FormData).
func checkFields(v reflect.Value, path, name string) error {
	switch v.Kind() {
	case reflect.String:
		return checkText(path, v.String(), fieldLimit(name))
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkFields(v.Elem(), path, name)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes (json.RawMessage), not text
		}
		for i := range v.Len() {
			if err := checkFields(v.Index(i), fmt.Sprintf("%s[%d]", path, i), name); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			key := fmt.Sprint(iter.Key().Interface())
			if err := checkText(joinField(path, "(a key)"), key, maxTextChars); err != nil {
				return err
			}
			if err := checkFields(iter.Value(), joinField(path, key), key); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			field := f.Name
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == "-" {
				continue
			} else if tag != "" {
				field = tag
			}
			if err := checkFields(v.Field(i), joinField(path, field), field); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinField(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// checkURL refuses, before anything else runs, a path segment or query value that no handler could
// use: one holding NUL or invalid UTF-8 (PostgreSQL would refuse it as a 500), an over-long one, and a
// query string that cannot be parsed.
func (s *Server) checkURL(c *gin.Context) {
	if err := checkURLText(c.Request.URL); err != nil {
		abort(c, err)
		return
	}
	c.Next()
}

func checkURLText(u *url.URL) error {
	for i, seg := range strings.Split(strings.Trim(u.Path, "/"), "/") {
		if len(seg) > maxPathSegmentBytes {
			return problem.BadRequest("path segment %d is longer than %d bytes", i+1, maxPathSegmentBytes)
		}
		// The segment is named only when it fails: a Sprintf per segment was a percent of a request.
		if checkText("", seg, unboundedText) != nil {
			return checkText(fmt.Sprintf("path segment %d", i+1), seg, unboundedText)
		}
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return problem.BadRequest("the query string is malformed: %s", err.Error())
	}
	for name, values := range query {
		if err := checkText("a query parameter name", name, maxTextChars); err != nil {
			return err
		}
		for _, v := range values {
			if len(v) > maxQueryValueBytes {
				return problem.BadRequest("query parameter %s is longer than %d bytes", name, maxQueryValueBytes)
			}
			if err := checkText("query parameter "+name, v, unboundedText); err != nil {
				return err
			}
		}
	}
	return nil
}
