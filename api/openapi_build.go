// How each route becomes an operation of the document: its path, id, tag, parameters, body, answers, the
// general answers every route has, the problems and the security schemes.

package api

import (
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/openapi"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/formtask"
)

func (b *docBuilder) add(r Route, d routeDoc) {
	path, pathParamNames := openAPIPath(r.Path)
	item := b.doc.Paths[path]
	if item == nil {
		item = &openapi.PathItem{}
		b.doc.Paths[path] = item
	}
	op := &openapi.Operation{Summary: d.Summary, Description: d.Description, OperationID: b.operationID(r, d),
		Responses: map[string]*openapi.Response{}, Area: r.Area, Idempotent: r.Idempotent}
	op.Tags = []string{b.tag(r, d)}
	for _, name := range pathParamNames {
		op.Parameters = append(op.Parameters, &openapi.Parameter{Name: name, In: "path", Required: true,
			Description: pathParams[name], Schema: &openapi.Schema{Type: "string"}})
	}
	for _, q := range d.Query {
		op.Parameters = append(op.Parameters, queryParameter(q))
	}
	if d.Body != nil {
		op.RequestBody = b.requestBody(d.Body)
	}
	if d.OK.Status == 0 { // undocumented: the drift test fails, the document stays valid
		op.Responses["default"] = &openapi.Response{Description: "undocumented: add the route's entry to routeDocs in api/openapi_routes.go"}
		op.Security = security(r)
		item.SetOperation(r.Method, op)
		return
	}
	for _, a := range append([]answer{d.OK}, d.More...) {
		op.Responses[strconv.Itoa(a.Status)] = b.response(r, a)
	}
	b.generalAnswers(r, d, op)
	op.Security = security(r)
	item.SetOperation(r.Method, op)
}

// openAPIPath turns a gin path (/api/:who/messages) into an OpenAPI one (/api/{who}/messages).
func openAPIPath(gin string) (string, []string) {
	parts := strings.Split(gin, "/")
	var names []string
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			parts[i] = "{" + name + "}"
			names = append(names, name)
		}
	}
	return strings.Join(parts, "/"), names
}

func (b *docBuilder) operationID(r Route, d routeDoc) string {
	id := d.OperationID
	if id == "" {
		id = handlerName(r.Handler)
	}
	b.ids[id]++
	if n := b.ids[id]; n > 1 {
		id += strconv.Itoa(n)
	}
	return id
}

// handlerName is the name of a handler method: getMessage of api.(*mailboxHandlers).getMessage-fm.
func handlerName(h gin.HandlerFunc) string {
	name := runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
	name = strings.TrimSuffix(name[strings.LastIndexByte(name, '.')+1:], "-fm")
	return name
}

func (b *docBuilder) tag(r Route, d routeDoc) string {
	switch {
	case d.Tag != "":
		return d.Tag
	case r.Area != "":
		return areaTags[r.Area]
	case strings.HasPrefix(r.Path, "/api/authentication"):
		return "Authentication"
	}
	return "Metadata"
}

func queryParameter(q param) *openapi.Parameter {
	p := &openapi.Parameter{Name: q.Name, In: "query", Description: q.Description, Required: q.Required, Schema: &openapi.Schema{Type: q.Type}}
	if q.Type == flag {
		p.Schema = &openapi.Schema{Type: "string", Description: "present without a value"}
	}
	return p
}

func (b *docBuilder) requestBody(rd *requestDoc) *openapi.RequestBody {
	schema := rd.Schema
	if schema == nil {
		schema = b.schemaOf(rd.Type)
	}
	body := &openapi.RequestBody{Required: !rd.Optional, Content: map[string]*openapi.MediaType{}}
	for _, mt := range rd.Media {
		m := &openapi.MediaType{Schema: schema}
		if _, isText := rd.Example.(string); !isText || strings.HasSuffix(mt, "xml") {
			m.Example = rd.Example
		}
		if strings.HasSuffix(mt, "xml") {
			m.Schema = &openapi.Schema{Type: "string", ContentMediaType: mt, Description: "the XML form of the body"}
		}
		body.Content[mt] = m
	}
	return body
}

// schemaOf is the schema of a body: a schema as given, a collection, or a Go value's type.
func (b *docBuilder) schemaOf(body any) *openapi.Schema {
	switch v := body.(type) {
	case *openapi.Schema:
		return v
	case halCollection:
		item := b.ref.Of(v.item)
		name := strings.TrimPrefix(item.Ref, "#/components/schemas/") + "Collection"
		if item.Ref == "" {
			name = capitalize(v.name) + "Collection"
		}
		if _, done := b.ref.Schemas[name]; !done {
			b.ref.Component(name, &openapi.Schema{Type: "object", AdditionalProperties: false, Required: []string{"_links", "_embedded"},
				Properties: map[string]*openapi.Schema{
					"_links": linksSchema,
					"_embedded": {Type: "object", AdditionalProperties: false, Required: []string{v.name},
						Properties: map[string]*openapi.Schema{v.name: {Type: "array", Items: item}}},
				}})
		}
		return openapi.Ref(name)
	}
	return b.ref.Of(body)
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func (b *docBuilder) response(r Route, a answer) *openapi.Response {
	resp := &openapi.Response{Description: a.Description, Headers: map[string]*openapi.Header{}}
	for _, h := range a.Headers {
		resp.Headers[h] = headerRef(h)
	}
	if r.Area != "" {
		for _, h := range []string{"RateLimit", "RateLimit-Policy"} {
			resp.Headers[h] = headerRef(h)
		}
	}
	if r.Idempotent && a.Status < 300 {
		resp.Headers["Idempotent-Replayed"] = headerRef("Idempotent-Replayed")
	}
	switch a.Media {
	case "":
	case negotiated:
		schema := b.schemaOf(a.Body)
		example := exampleOf(a.Body)
		resp.Content = map[string]*openapi.MediaType{}
		for _, mt := range render.MediaTypes {
			if strings.HasSuffix(mt, "xml") {
				resp.Content[mt] = &openapi.MediaType{Schema: &openapi.Schema{Type: "string", ContentMediaType: mt,
					Description: "the HAL+XML form of " + refName(schema) + ": a <resource> element whose href is its self link, " +
						"other links as <link rel href/>, fields as elements named like the JSON fields, embedded resources as nested <resource rel>"}}
				continue
			}
			resp.Content[mt] = &openapi.MediaType{Schema: schema, Example: example}
		}
		for mt, body := range a.Also {
			resp.Content[mt] = &openapi.MediaType{Schema: b.schemaOf(body)}
		}
	default:
		resp.Content = map[string]*openapi.MediaType{a.Media: {Schema: b.schemaOf(a.Body)}}
	}
	if len(resp.Headers) == 0 {
		resp.Headers = nil
	}
	return resp
}

// exampleOf is the example of a body: of its type in resourceExamples, or a page of one such item.
func exampleOf(body any) any {
	if c, ok := body.(halCollection); ok {
		item, ok := resourceExamples[reflect.TypeOf(c.item)]
		if !ok {
			return nil
		}
		return render.Collection{Links: exampleLinks("self", "/api/…", "next", "/api/…?$skip=50"), Embedded: render.EmbedList(c.name, []any{item})}
	}
	if body == nil {
		return nil
	}
	return resourceExamples[reflect.TypeOf(body)]
}

func refName(s *openapi.Schema) string {
	if s.Ref != "" {
		return strings.TrimPrefix(s.Ref, "#/components/schemas/")
	}
	return "the resource"
}

func headerRef(name string) *openapi.Header {
	if _, ok := responseHeaders[name]; !ok {
		panic("openapi: no response header " + name)
	}
	return &openapi.Header{Ref: "#/components/headers/" + name}
}

// generalAnswers adds what every route of r's kind can answer: problems of the middleware, of its area,
// of a body, of idempotency and of conditions.
func (b *docBuilder) generalAnswers(r Route, d routeDoc, op *openapi.Operation) {
	problems := slices.Clone(d.Problems)
	// Every request: a malformed URL or language (400), a forwarded client certificate that is not valid
	// (401), too large headers (431), a bug (500), an outage (503).
	problems = append(problems, http.StatusBadRequest, http.StatusUnauthorized, http.StatusRequestHeaderFieldsTooLarge,
		http.StatusInternalServerError, http.StatusServiceUnavailable)
	if strings.Contains(r.Path, "/:") {
		problems = append(problems, http.StatusNotFound)
	}
	if r.Negotiated {
		problems = append(problems, http.StatusNotAcceptable)
	}
	if r.Area != "" {
		problems = append(problems, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests)
	}
	if r.Method != http.MethodGet { // a body too large is refused before the route is known
		problems = append(problems, http.StatusRequestEntityTooLarge, http.StatusRequestTimeout)
	}
	if d.Body != nil && len(d.Body.Media) > 0 && d.Body.Media[0] != "application/octet-stream" {
		problems = append(problems, http.StatusUnsupportedMediaType)
	}
	if r.Idempotent {
		problems = append(problems, http.StatusConflict, http.StatusUnprocessableEntity)
		op.Parameters = append(op.Parameters, &openapi.Parameter{Ref: "#/components/parameters/Idempotency-Key"})
	}
	if d.Conditional {
		op.Parameters = append(op.Parameters, &openapi.Parameter{Ref: "#/components/parameters/If-None-Match"})
		op.Responses["304"] = &openapi.Response{Description: "not modified: If-None-Match names the current ETag",
			Headers: map[string]*openapi.Header{"ETag": headerRef("ETag")}}
	}
	if d.Download {
		problems = append(problems, http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable)
		for _, h := range []string{"Range", "If-Range", "If-Unmodified-Since"} {
			op.Parameters = append(op.Parameters, &openapi.Parameter{Ref: "#/components/parameters/" + h})
		}
		op.Responses["206"] = b.response(r, answerOf(http.StatusPartialContent, "the range asked for (several: multipart/byteranges)",
			d.OK.Media, binary, "Content-Range"))
	}
	if slices.Contains(problems, http.StatusPreconditionFailed) {
		op.Parameters = append(op.Parameters, &openapi.Parameter{Ref: "#/components/parameters/If-Match"})
	}
	for _, st := range problems {
		key := strconv.Itoa(st)
		if _, listed := b.doc.Components.Responses["Problem"+key]; !listed {
			b.faults = append(b.faults, fmt.Sprintf("%s %s answers problems of status %d, of which api/problem.Types has none", r.Method, r.Path, st))
			continue
		}
		if _, own := op.Responses[key]; !own {
			op.Responses[key] = &openapi.Response{Ref: "#/components/responses/Problem" + key}
		}
	}
}

// problems adds a response and a schema per problem status: the Problem with the type URIs of that status.
func (b *docBuilder) problems() {
	base := b.ref.Of(problem.Problem{})
	b.ref.Schemas["Problem"].Properties["errors"] = &openapi.Schema{Type: "array",
		Description: "what is wrong: the validation errors of a form task, or the faults of a body or request as texts",
		Items:       &openapi.Schema{OneOf: []*openapi.Schema{{Type: "string"}, b.ref.Of(formtask.ValidationEntry{})}}}
	byStatus := map[int][]problem.Type{}
	for _, t := range problem.Types {
		byStatus[t.Status] = append(byStatus[t.Status], t)
	}
	byStatus[http.StatusInternalServerError] = nil // a bug: about:blank
	for status, types := range byStatus {
		key := strconv.Itoa(status)
		typeSchema := &openapi.Schema{Const: "about:blank"}
		var lines []string
		if len(types) > 0 {
			typeSchema = &openapi.Schema{}
			for _, t := range types {
				typeSchema.Enum = append(typeSchema.Enum, t.URI())
				lines = append(lines, fmt.Sprintf("- `%s`: %s", t.URI(), t.Means))
			}
		}
		b.ref.Component("Problem"+key, &openapi.Schema{AllOf: []*openapi.Schema{base, {
			Properties: map[string]*openapi.Schema{"type": typeSchema, "status": {Const: status}}}}})
		desc := http.StatusText(status) + ": a problem document"
		if len(lines) > 0 {
			desc += " of one of these types:\n" + strings.Join(lines, "\n")
		}
		example := problem.New(status, "", "%s", "what went wrong, and what to do about it")
		if len(types) > 0 {
			example = problem.New(status, types[0].Kind, "%s", types[0].Means)
		}
		example.Instance = "/api/my/messages"
		resp := &openapi.Response{Description: desc, Content: map[string]*openapi.MediaType{
			"application/problem+json": {Schema: openapi.Ref("Problem" + key), Example: example},
			"application/problem+xml": {Schema: &openapi.Schema{Type: "string", ContentMediaType: "application/problem+xml",
				Description: "the same fields as elements of <problem xmlns=\"" + problem.Namespace + "\">"}},
		}}
		switch status {
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			resp.Headers = map[string]*openapi.Header{"Retry-After": headerRef("Retry-After")}
		case http.StatusPreconditionFailed:
			resp.Headers = map[string]*openapi.Header{"ETag": headerRef("ETag"), "Last-Modified": headerRef("Last-Modified")}
		case http.StatusRequestedRangeNotSatisfiable:
			resp.Headers = map[string]*openapi.Header{"Content-Range": headerRef("Content-Range")}
		}
		b.doc.Components.Responses["Problem"+key] = resp
	}
}

// security is who may call r: nobody needs to log in on an open route; the others need the API key and a
// login (session cookie, bearer token with one of the route's scopes, or an enterprise certificate).
func security(r Route) *[]openapi.SecurityRequirement {
	if r.Area == "" {
		return &[]openapi.SecurityRequirement{}
	}
	scopes := append(slices.Clone(r.Scopes), generalScopes(r.Area)...)
	if r.Scopes != nil && len(r.Scopes) == 0 {
		scopes = []string{}
	}
	return &[]openapi.SecurityRequirement{
		{"ApiKey": {}, "session": {}},
		{"ApiKey": {}, "bearer": scopes},
		{"ApiKey": {}, "enterpriseCertificate": {}},
	}
}

var securitySchemes = map[string]*openapi.SecurityScheme{
	"ApiKey": {Type: "apiKey", In: "header", Name: "ApiKey",
		Description: "the API key of the application, registered for one or more areas of the interface"},
	"session": {Type: "apiKey", In: "cookie", Name: sessionCookie,
		Description: "the session cookie set by POST /api/authentication/authenticatewithpassword"},
	"bearer": {Type: "http", Scheme: "bearer", BearerFormat: "JWT",
		Description: "an access token of a trusted identity or token provider; the operation lists the scopes of which the token needs one"},
	"enterpriseCertificate": {Type: "mutualTLS",
		Description: "an enterprise certificate as TLS client certificate (service-owner calls add ?ForceEIAuthentication)"},
}

var responseHeaders = map[string]*openapi.Header{
	"Location":            {Description: "the URI of the resource created or changed", Schema: &openapi.Schema{Type: "string"}},
	"ETag":                {Description: "a strong validator of the returned representation, for If-None-Match and If-Match", Schema: &openapi.Schema{Type: "string"}},
	"Last-Modified":       {Description: "when the content last changed (412 modified-since)", Schema: &openapi.Schema{Type: "string"}},
	"Content-Range":       {Description: "the range sent (206), or bytes */size: the content's size (416 range-not-satisfiable)", Schema: &openapi.Schema{Type: "string"}},
	"Retry-After":         {Description: "seconds to wait before retrying", Schema: &openapi.Schema{Type: "integer"}},
	"RateLimit":           {Description: "the API key's remaining quota in the current window (IETF RateLimit header fields)", Schema: &openapi.Schema{Type: "string"}},
	"RateLimit-Policy":    {Description: "the API key's quota policy for the area", Schema: &openapi.Schema{Type: "string"}},
	"Idempotent-Replayed": {Description: "true when the answer is the stored answer of an earlier request with the same Idempotency-Key", Schema: &openapi.Schema{Type: "string"}},
	"Link":                {Description: "the next page of the feed, rel=\"next\"", Schema: &openapi.Schema{Type: "string"}},
	"Set-Cookie":          {Description: "the session cookie " + sessionCookie, Schema: &openapi.Schema{Type: "string"}},
}

var requestHeaders = map[string]*openapi.Parameter{
	"Idempotency-Key": {Name: "Idempotency-Key", In: "header", Schema: &openapi.Schema{Type: "string"},
		Description: "a key (quoted string) that makes a retry of the creation safe: the first complete answer is kept for 24 hours and replayed"},
	"If-None-Match": {Name: "If-None-Match", In: "header", Schema: &openapi.Schema{Type: "string"},
		Description: "ETags the client has: 304 when the current one is among them"},
	"If-Match": {Name: "If-Match", In: "header", Schema: &openapi.Schema{Type: "string"},
		Description: "the ETag the change is based on: 412 with the current ETag when the resource has changed since"},
	"Range": {Name: "Range", In: "header", Schema: &openapi.Schema{Type: "string"},
		Description: "the bytes wanted (bytes=first-last, bytes=first-, bytes=-suffixlength): 206; 416 when none is within the content"},
	"If-Range": {Name: "If-Range", In: "header", Schema: &openapi.Schema{Type: "string"},
		Description: "an ETag or date: Range counts only while it still names the content, else the whole content comes"},
	"If-Unmodified-Since": {Name: "If-Unmodified-Since", In: "header", Schema: &openapi.Schema{Type: "string"},
		Description: "an HTTP date: 412 modified-since when the content changed after it (without If-Match)"},
}
