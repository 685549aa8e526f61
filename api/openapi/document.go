// Package openapi holds an OpenAPI 3.1 document as Go values and makes JSON Schemas (2020-12, the dialect
// of OpenAPI 3.1) from Go types by reflection, so the description of a response is the type the handler
// writes.
package openapi

import (
	"encoding/json"

	"github.com/goccy/go-yaml"
)

// Document is an OpenAPI 3.1 document; only the parts this service uses.
type Document struct {
	OpenAPI    string               `json:"openapi"`
	Info       Info                 `json:"info"`
	Servers    []Server             `json:"servers,omitempty"`
	Tags       []Tag                `json:"tags,omitempty"`
	Paths      map[string]*PathItem `json:"paths"`
	Components Components           `json:"components"`
}

type Info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// PathItem holds the operations of one path.
type PathItem struct {
	Get    *Operation `json:"get,omitempty"`
	Put    *Operation `json:"put,omitempty"`
	Post   *Operation `json:"post,omitempty"`
	Delete *Operation `json:"delete,omitempty"`
}

// Operation returns the item's operation for an HTTP method, nil when there is none.
func (p *PathItem) Operation(method string) *Operation {
	if slot := p.slot(method); slot != nil {
		return *slot
	}
	return nil
}

// SetOperation puts op on the item for method; it reports false for a method a path item cannot hold here.
func (p *PathItem) SetOperation(method string, op *Operation) bool {
	slot := p.slot(method)
	if slot == nil {
		return false
	}
	*slot = op
	return true
}

func (p *PathItem) slot(method string) **Operation {
	switch method {
	case "GET":
		return &p.Get
	case "PUT":
		return &p.Put
	case "POST":
		return &p.Post
	case "DELETE":
		return &p.Delete
	}
	return nil
}

type Operation struct {
	OperationID string                 `json:"operationId"`
	Summary     string                 `json:"summary"`
	Description string                 `json:"description,omitempty"`
	Tags        []string               `json:"tags,omitempty"`
	Parameters  []*Parameter           `json:"parameters,omitempty"`
	RequestBody *RequestBody           `json:"requestBody,omitempty"`
	Responses   map[string]*Response   `json:"responses"`
	Security    *[]SecurityRequirement `json:"security,omitempty"`
	// Extensions name the route's API-key area and whether an Idempotency-Key makes it safe to retry.
	Area       string `json:"x-postbox-area,omitempty"`
	Idempotent bool   `json:"x-postbox-idempotent,omitempty"`
}

// SecurityRequirement names the schemes that together admit a call, with the scopes a token needs.
type SecurityRequirement map[string][]string

type Parameter struct {
	Ref         string  `json:"$ref,omitempty"`
	Name        string  `json:"name,omitempty"`
	In          string  `json:"in,omitempty"`
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required,omitempty"`
	Schema      *Schema `json:"schema,omitempty"`
}

type RequestBody struct {
	Description string                `json:"description,omitempty"`
	Required    bool                  `json:"required,omitempty"`
	Content     map[string]*MediaType `json:"content"`
}

type Response struct {
	Ref         string                `json:"$ref,omitempty"`
	Description string                `json:"description,omitempty"`
	Headers     map[string]*Header    `json:"headers,omitempty"`
	Content     map[string]*MediaType `json:"content,omitempty"`
}

type Header struct {
	Ref         string  `json:"$ref,omitempty"`
	Description string  `json:"description,omitempty"`
	Schema      *Schema `json:"schema,omitempty"`
}

type MediaType struct {
	Schema  *Schema `json:"schema,omitempty"`
	Example any     `json:"example,omitempty"`
}

type Components struct {
	Schemas         map[string]*Schema         `json:"schemas,omitempty"`
	Responses       map[string]*Response       `json:"responses,omitempty"`
	Parameters      map[string]*Parameter      `json:"parameters,omitempty"`
	Headers         map[string]*Header         `json:"headers,omitempty"`
	SecuritySchemes map[string]*SecurityScheme `json:"securitySchemes,omitempty"`
}

type SecurityScheme struct {
	Type         string `json:"type"`
	Description  string `json:"description,omitempty"`
	Name         string `json:"name,omitempty"`
	In           string `json:"in,omitempty"`
	Scheme       string `json:"scheme,omitempty"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// Schema is a JSON Schema (2020-12) as OpenAPI 3.1 uses it.
type Schema struct {
	Ref         string `json:"$ref,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is one type name, or a list of them (["string", "null"]).
	Type                 any                `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Const                any                `json:"const,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	ContentMediaType     string             `json:"contentMediaType,omitempty"`
}

// JSON is the document as JSON.
func (d *Document) JSON() ([]byte, error) { return json.MarshalIndent(d, "", "  ") }

// YAML is the document as YAML, converted from its JSON so both say the same.
func (d *Document) YAML() ([]byte, error) {
	j, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}
