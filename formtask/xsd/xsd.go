// Package xsd validates XML form data against XSD schemas with libxml2 and
// reports every problem as an Issue carrying the XPath of the element in
// error, as the REST contract's validation result expects.
//
// Documents are untrusted: they are parsed without entity substitution, DTD
// loading or network access, a DOCTYPE is rejected outright, every external
// resource is refused, and size, nesting, attributes per element and
// namespaces in scope are limited. Documents are always read as UTF-8 (form
// data arrives in JSON strings); an encoding declaration is ignored. A
// document that is malformed or hostile yields a Result with an error Issue,
// never an error value.
//
// The package sets libxml2's process-wide external entity loader to one that
// refuses everything.
package xsd

/*
#cgo pkg-config: libxml-2.0
#include "xsd.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"
)

// Issue is one validation problem.
type Issue struct {
	FieldName    string // local name of the element (or attribute) in error; "" if none
	ErrorMessage string // libxml2's message, or ours for rejected documents
	FieldXPath   string // e.g. "/Skjema/Omsetning"; "" when not tied to a node
	Line         int    // line in the document, 0 if unknown
}

// Result holds the issues of one validation.
type Result struct {
	Errors   []Issue
	Warnings []Issue
}

// Valid reports whether the document had no errors (warnings are allowed).
func (r Result) Valid() bool { return len(r.Errors) == 0 }

// Limits bound the resources one document may use. Zero fields take the
// defaults.
type Limits struct {
	MaxBytes int // default 10 MiB
	MaxDepth int // element nesting; default and maximum 256
}

// DefaultMaxBytes is the largest document Limits admit by default.
const DefaultMaxBytes = 10 << 20

const (
	// libxml2 refuses deeper documents itself unless XML_PARSE_HUGE, with
	// a message that suggests that option; our check must fire first.
	maxDepth = 256
	// Namespace declarations in scope at any element; see xsd.c.
	maxNamespaces = 64
	// Caps the issues of one call, so a hostile document cannot make us
	// build an unbounded list.
	maxIssues = 100
)

func (l Limits) normalize() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	l.MaxBytes = min(l.MaxBytes, math.MaxInt32) // libxml2 takes an int length
	if l.MaxDepth <= 0 || l.MaxDepth > maxDepth {
		l.MaxDepth = maxDepth
	}
	return l
}

// ErrClosed is returned when a closed Schema or Cache is used.
var ErrClosed = errors.New("xsd: closed")

var initLibxml = sync.OnceFunc(func() { C.pbx_init() })

// session collects the issues of one compile or validation call. C reaches
// it only through the cgo.Handle in sink.
type session struct {
	res  Result
	sink C.pbx_sink // no Go pointers, so C may be given its address
	h    cgo.Handle
}

func newSession(lim Limits) *session {
	s := &session{}
	s.h = cgo.NewHandle(s)
	s.sink.handle = C.uintptr_t(s.h)
	s.sink.room = maxIssues
	s.sink.max_depth = C.int(lim.MaxDepth)
	s.sink.max_namespaces = maxNamespaces
	return s
}

func (s *session) errorf(line int, format string, args ...any) {
	s.res.Errors = append(s.res.Errors, Issue{ErrorMessage: fmt.Sprintf(format, args...), Line: line})
}

// close releases the handle and returns the issues, noting any beyond the cap.
func (s *session) close() Result {
	s.h.Delete()
	if n := int(s.sink.dropped_errors); n > 0 {
		s.errorf(0, "%d more errors not reported", n)
	}
	if n := int(s.sink.dropped_warnings); n > 0 {
		s.res.Warnings = append(s.res.Warnings, Issue{ErrorMessage: fmt.Sprintf("%d more warnings not reported", n)})
	}
	return s.res
}

//export xsdIssue
func xsdIssue(h C.uintptr_t, level, line C.int, msg, name, path *C.char) {
	s := cgo.Handle(h).Value().(*session)
	is := Issue{
		FieldName:    C.GoString(name),
		ErrorMessage: strings.ReplaceAll(strings.TrimSpace(C.GoString(msg)), "\n", " "),
		FieldXPath:   C.GoString(path),
		Line:         int(line),
	}
	if level == C.XML_ERR_WARNING {
		s.res.Warnings = append(s.res.Warnings, is)
	} else {
		s.res.Errors = append(s.res.Errors, is)
	}
}

// document is a parsed libxml2 tree owned by Go code.
type document struct{ p C.xmlDocPtr }

func (d document) free() { C.xmlFreeDoc(d.p) }

// parse applies the size limit and parses data with the hardened parser.
// ok is false when the document was rejected; the reasons are in s.
func parse(s *session, data []byte, lim Limits) (d document, ok bool, err error) {
	initLibxml()
	switch {
	case len(data) == 0:
		s.errorf(0, "document is empty")
		return d, false, nil
	case len(data) > lim.MaxBytes:
		s.errorf(0, "document is %d bytes, larger than the limit of %d bytes", len(data), lim.MaxBytes)
		return d, false, nil
	}
	if off := crowdedTag(data); off >= 0 {
		s.errorf(1+bytes.Count(data[:off], []byte("\n")), "element has more than %d attributes", maxAttributes)
		return d, false, nil
	}
	if C.pbx_parse(&s.sink, (*C.char)(unsafe.Pointer(&data[0])), C.int(len(data)), &d.p) < 0 {
		return d, false, errors.New("xsd: libxml2 could not allocate a parser")
	}
	if d.p == nil {
		if len(s.res.Errors) == 0 {
			s.errorf(0, "document is not well-formed XML")
		}
		return d, false, nil
	}
	return d, true, nil
}

// Schema is a compiled XSD. It is safe for concurrent use; Close frees it.
type Schema struct {
	mu     sync.RWMutex // Validate holds it shared, so Close waits for them
	schema C.xmlSchemaPtr
	doc    document // the schema's own tree, kept alive with the schema
	limits Limits
}

// Compile compiles an XSD. The schema text is parsed with the same
// restrictions as documents (no DOCTYPE, no external resources, so no
// xs:include or xs:import). lim applies to the documents validated with it.
func Compile(xsd []byte, lim Limits) (*Schema, error) {
	lim = lim.normalize()
	schemaLimits := Limits{}.normalize()
	s := newSession(schemaLimits)
	d, ok, err := parse(s, xsd, schemaLimits)
	if err != nil {
		s.close()
		return nil, err
	}
	var schema C.xmlSchemaPtr
	if ok {
		schema = C.pbx_compile(&s.sink, d.p)
	}
	res := s.close()
	if schema == nil {
		if ok {
			d.free()
		}
		return nil, compileError(res)
	}
	return &Schema{schema: schema, doc: d, limits: lim}, nil
}

func compileError(res Result) error {
	msgs := make([]string, 0, len(res.Errors))
	for _, is := range res.Errors {
		if is.Line > 0 {
			msgs = append(msgs, fmt.Sprintf("line %d: %s", is.Line, is.ErrorMessage))
		} else {
			msgs = append(msgs, is.ErrorMessage)
		}
	}
	if len(msgs) == 0 {
		msgs = append(msgs, "libxml2 gave no reason")
	}
	return fmt.Errorf("xsd: invalid schema: %s", strings.Join(msgs, "; "))
}

// Validate parses and validates doc. Problems with the document, including
// malformed or hostile XML, are reported in the Result; the error is only
// for internal failures and for a closed Schema.
func (s *Schema) Validate(doc []byte) (Result, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.schema == nil {
		return Result{}, ErrClosed
	}
	ss := newSession(s.limits)
	d, ok, err := parse(ss, doc, s.limits)
	if ok {
		defer d.free()
		switch rc := C.pbx_validate(&ss.sink, s.schema, d.p); {
		case rc < 0:
			err = errors.New("xsd: libxml2 internal error during validation")
		case rc > 0 && len(ss.res.Errors) == 0:
			// Valid must never be true for a document libxml2 rejected.
			ss.errorf(0, "document is not valid against the schema")
		}
	}
	res := ss.close()
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// Close frees the schema after running validations have finished. Later
// calls to Validate return ErrClosed.
func (s *Schema) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.schema == nil {
		return
	}
	C.xmlSchemaFree(s.schema)
	s.doc.free()
	s.schema = nil
}
