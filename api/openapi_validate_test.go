package api_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	vErrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"

	"github.com/postbox/postbox/api/problem"
)

// Every response of the suite's requests (do, doWith, serve) is checked against the served OpenAPI
// document by libopenapi-validator: its status must be listed for the operation, its Content-Type be one
// the document names, and a JSON body match the schema (whose objects allow no property they do not
// list). libopenapi-validator, not kin-openapi: the document is OpenAPI 3.1 (JSON Schema 2020-12: type
// lists for null, const), which libopenapi-validator validates in full, kin-openapi only in part. XML bodies
// are checked here to be well-formed documents of the right root; their fields are compared with the JSON
// form's by TestEveryResourceHasTheSameFieldsInEveryMediaType. A request to no documented operation (a
// wrong path or method) must be answered with a problem document of a listed type.

var documentValidator = sync.OnceValues(func() (validator.Validator, error) {
	rec := httptest.NewRecorder()
	shared.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://postbox.test/api/openapi.json", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET /api/openapi.json: %d %s", rec.Code, rec.Body.String())
	}
	doc, err := libopenapi.NewDocument(rec.Body.Bytes())
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc, config.WithoutSecurityValidation())
	if len(errs) > 0 {
		return nil, fmt.Errorf("the document cannot be validated against: %v", errs)
	}
	if ok, errs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("the document is not valid OpenAPI 3.1: %v", validationMessages(errs))
	}
	return v, nil
})

// serve serves req on h and checks the response against the document (not in benchmarks, which would
// measure the validator).
func serve(t testing.TB, h http.Handler, rec *httptest.ResponseRecorder, req *http.Request) {
	t.Helper()
	h.ServeHTTP(rec, req)
	if _, benchmark := t.(*testing.B); !benchmark {
		checkAgainstDocument(t, req, rec)
	}
}

// checkAgainstDocument fails t when rec is not an answer the document describes for req (whose path the
// server has rewritten to its registered spelling).
func checkAgainstDocument(t testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code == problem.ClientClosed {
		return // nobody was listening: no answer was sent
	}
	v, err := documentValidator()
	if err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	resp := rec.Result()
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if strings.Contains(ct, "xml") && rec.Body.Len() > 0 {
		checkXMLRoot(t, req, rec.Code, ct, rec.Body.Bytes())
	}
	if ok, errs := v.GetResponseBodyValidator().ValidateResponseBody(req, resp); !ok {
		if noOperation(errs) {
			checkUndocumentedAnswer(t, req, rec)
			return
		}
		body := rec.Body.String()
		if len(body) > 2000 {
			body = body[:2000] + "…"
		}
		t.Errorf("%s %s answered %d (%s), which the OpenAPI document does not describe:\n%s\nbody: %s\n"+
			"fix the route's entry in api/openapi_routes.go (or the handler, if it breaks the interface)",
			req.Method, req.URL.Path, rec.Code, ct, strings.Join(validationMessages(errs), "\n"), body)
	}
}

// checkUndocumentedAnswer: a request to no operation of the document is refused with a listed problem.
func checkUndocumentedAnswer(t testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code < 400 || (req.Method == http.MethodOptions && rec.Code < 500) {
		if req.Method != http.MethodOptions {
			t.Errorf("%s %s is no operation of the OpenAPI document, yet it answered %d", req.Method, req.URL.Path, rec.Code)
		}
		return
	}
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/problem+json") {
		return // the XML form was checked for its root
	}
	var p struct {
		Type   string
		Status int
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Errorf("%s %s answered %d with a problem that is no JSON: %s", req.Method, req.URL.Path, rec.Code, rec.Body.String())
		return
	}
	if !listedProblem(p.Type, p.Status) || p.Status != rec.Code {
		t.Errorf("%s %s answered %d with problem type %q status %d, which api/problem.Types does not list", req.Method, req.URL.Path, rec.Code, p.Type, p.Status)
	}
}

func listedProblem(typ string, status int) bool {
	if typ == "about:blank" {
		return status == http.StatusInternalServerError
	}
	for _, k := range problem.Types {
		if k.URI() == typ && k.Status == status {
			return true
		}
	}
	return false
}

// noOperation tells whether the validator found no operation of the document for the request.
func noOperation(errs []*vErrors.ValidationError) bool {
	for _, e := range errs {
		if e.ValidationType == helpers.PathValidation || e.ValidationSubType == helpers.ValidationMissingOperation {
			return true
		}
	}
	return false
}

func validationMessages(errs []*vErrors.ValidationError) []string {
	var out []string
	for _, e := range errs {
		line := "- " + e.Message + ": " + e.Reason
		for _, f := range e.SchemaValidationErrors {
			line += "\n    " + f.FieldPath + ": " + f.Reason
		}
		out = append(out, line)
	}
	return out
}

// checkXMLRoot: an XML answer is one well-formed document of the root its kind has.
func checkXMLRoot(t testing.TB, req *http.Request, status int, contentType string, body []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(body))
	root := ""
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Errorf("%s %s answered %d with XML that is not well-formed: %v", req.Method, req.URL.Path, status, err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	want := map[bool][]string{true: {"problem"}, false: {"resource", "resources"}}[strings.HasPrefix(contentType, "application/problem+xml")]
	if strings.HasPrefix(contentType, "application/hal+xml") || strings.HasPrefix(contentType, "application/xml") || strings.HasPrefix(contentType, "application/problem+xml") {
		if root != "" && !slices.Contains(want, root) && !strings.Contains(req.URL.Path, "/formdata") && !strings.HasSuffix(req.URL.Path, "/xsd") && !strings.Contains(req.URL.Path, "/attachments/") {
			t.Errorf("%s %s answered %d with an XML document of root <%s>, not %v", req.Method, req.URL.Path, status, root, want)
		}
	}
}
