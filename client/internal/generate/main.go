// Command generate writes the client's OpenAPI document (client/openapi.json, as GET /api/openapi.json
// serves it) and the Go code oapi-codegen generates from it (client/client.gen.go). `go generate ./client/`
// runs it; its test fails when either differs from what the current code gives, so neither can drift.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"

	"github.com/postbox/postbox/api"
)

// The generated files, relative to the client package.
const (
	documentFile = "openapi.json"
	codeFile     = "client.gen.go"
)

func main() {
	doc, code, err := generate()
	if err == nil {
		err = os.WriteFile(documentFile, doc, 0o644)
	}
	if err == nil {
		err = os.WriteFile(codeFile, code, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

// generate returns the document the API serves (indented, so that a change shows as one in a diff) and the
// client generated from it.
func generate() (doc, code []byte, err error) {
	if doc, err = document(); err != nil {
		return nil, nil, err
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, doc, "", "  "); err != nil {
		return nil, nil, err
	}
	doc = append(indented.Bytes(), '\n')
	forGo, err := firstTypes(doc)
	if err != nil {
		return nil, nil, err
	}
	spec, err := openapi3.NewLoader().LoadFromData(forGo)
	if err != nil {
		return nil, nil, fmt.Errorf("load the document: %w", err)
	}
	src, err := codegen.Generate(spec, codegen.Configuration{
		PackageName: "client",
		Generate:    codegen.GenerateOptions{Client: true, Models: true},
		// The document refers to nothing outside itself.
		AllowRemoteRefsFrom: []string{},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("oapi-codegen: %w", err)
	}
	return doc, []byte(src), nil
}

// document is GET /api/openapi.json of a server built from the current code, as make run serves it (the
// route needs no database).
func document() ([]byte, error) {
	srv, err := api.New(api.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/api/openapi.json", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /api/openapi.json: %d %s", rec.Code, body)
	}
	return body, nil
}

// firstTypes gives every schema that takes values of several types (OpenAPI 3.1's "type" list; a request's
// text field also takes a number of digits, a whole number also a string of digits) the first of them,
// the one the API itself writes, beside null: oapi-codegen makes a Go type of one JSON type (a pointer
// where null is allowed), and the client sends the API's own form.
func firstTypes(doc []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if types, ok := v["type"].([]any); ok {
				v["type"] = firstType(types)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return json.Marshal(v)
}

// firstType is the first type of a list but null, with null if the list has it.
func firstType(types []any) []any {
	var first any
	hasNull := false
	for _, t := range types {
		switch {
		case t == "null":
			hasNull = true
		case first == nil:
			first = t
		}
	}
	if first == nil {
		return types
	}
	if hasNull {
		return []any{first, "null"}
	}
	return []any{first}
}
