package api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

// xmlBodyTypes are the media types an XML request body may have.
var xmlBodyTypes = []string{"application/xml", "text/xml", "application/hal+xml"}

// Limits of XML request bodies. They are small documents (a delegation is a few hundred bytes), so the
// limits are far below the server's body limit and anything past them is refused before it costs much.
const (
	maxXMLBodyBytes = 64 << 10
	maxXMLDepth     = 10
	maxXMLElements  = 2000
	maxXMLText      = 4 << 10
)

// xmlNode is an element of a parsed XML body: its local name, attributes, text and child elements.
type xmlNode struct {
	Name     string
	Attrs    map[string]string
	Text     string
	Children []*xmlNode
	path     string
}

// attr returns the value of an attribute by local name, in any case.
func (n *xmlNode) attr(name string) string {
	for k, v := range n.Attrs {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// readXML reads the request body as an XML document with a hardened decoder: 415 for another content
// type, 413 past maxXMLBodyBytes, and 400 for anything but a plain document: any DOCTYPE or other
// declaration (so no DTD, no entity definitions, no external entities: only the five predefined entities
// and character references are known), processing instructions other than the XML declaration, an
// encoding other than UTF-8, nesting deeper than maxXMLDepth, more than maxXMLElements elements, text
// longer than maxXMLText, more than one root, or malformed XML. It reads nothing but the body.
func readXML(c *gin.Context) (*xmlNode, error) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || !slices.Contains(xmlBodyTypes, mt) {
		return nil, problem.New(http.StatusUnsupportedMediaType, "unsupported-media-type", "the body must be application/xml")
	}
	if c.Request.ContentLength > maxXMLBodyBytes {
		return nil, &http.MaxBytesError{Limit: maxXMLBodyBytes}
	}
	body := http.MaxBytesReader(c.Writer, c.Request.Body, maxXMLBodyBytes)
	return parseXML(body)
}

func xmlBad(format string, args ...any) *problem.Problem {
	return problem.New(http.StatusBadRequest, "invalid-xml", format, args...)
}

// parseXML is readXML's decoder over any reader.
func parseXML(r io.Reader) (*xmlNode, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = true
	dec.Entity = nil // only the predefined entities
	dec.CharsetReader = func(charset string, input io.Reader) (io.Reader, error) {
		switch strings.ToLower(charset) {
		case "utf-8", "utf8", "us-ascii":
			return input, nil
		}
		return nil, fmt.Errorf("unsupported charset %q", charset)
	}
	var (
		root     *xmlNode
		stack    []*xmlNode
		elements int
		first    = true
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, xmlError(err, dec)
		}
		switch t := tok.(type) {
		case xml.ProcInst:
			if t.Target != "xml" || !first {
				return nil, xmlBad("processing instructions are not allowed (<?%s ...?>)", t.Target)
			}
		case xml.Directive:
			return nil, xmlBad("DOCTYPE and other declarations (<!...>) are not allowed: the body must not carry a DTD or entities")
		case xml.Comment:
		case xml.StartElement:
			if len(stack) == 0 && root != nil {
				return nil, xmlBad("the body has more than one root element")
			}
			if len(stack) >= maxXMLDepth {
				return nil, xmlBad("elements are nested deeper than %d levels", maxXMLDepth)
			}
			if elements++; elements > maxXMLElements {
				return nil, xmlBad("the body has more than %d elements", maxXMLElements)
			}
			n := &xmlNode{Name: t.Name.Local, Attrs: map[string]string{}}
			for _, a := range t.Attr {
				if err := checkText("attribute "+a.Name.Local+" of "+t.Name.Local, a.Value, fieldLimit(a.Name.Local)); err != nil {
					return nil, err
				}
				n.Attrs[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				root, n.path = n, t.Name.Local
			} else {
				parent := stack[len(stack)-1]
				parent.Children = append(parent.Children, n)
				n.path = parent.path + "/" + t.Name.Local
			}
			stack = append(stack, n)
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, xmlBad("the body has text outside its root element")
				}
				break
			}
			n := stack[len(stack)-1]
			if len(n.Text)+len(t) > maxXMLText {
				return nil, xmlBad("the text of %s is longer than %d bytes", n.path, maxXMLText)
			}
			n.Text += string(t)
		case xml.EndElement:
			// The text of a leaf element is a field's value, held to that field's limit.
			if n := stack[len(stack)-1]; len(n.Children) == 0 {
				if err := checkText(n.path, strings.TrimSpace(n.Text), fieldLimit(n.Name)); err != nil {
					return nil, err
				}
			}
			stack = stack[:len(stack)-1]
		}
		first = false
	}
	if root == nil {
		return nil, xmlBad("the body is empty: an XML document is required")
	}
	return root, nil
}

// xmlError explains a decoder error: past the size limit it stays a MaxBytesError (413).
func xmlError(err error, dec *xml.Decoder) error {
	var (
		maxBytes *http.MaxBytesError
		prob     *problem.Problem
		syntax   *xml.SyntaxError
	)
	switch {
	case errors.As(err, &maxBytes), errors.As(err, &prob):
		return err
	case errors.As(err, &syntax):
		if strings.Contains(syntax.Msg, "entity") {
			return xmlBad("line %d: %s: only the predefined entities (&amp; &lt; &gt; &quot; &apos;) and character references are allowed", syntax.Line, syntax.Msg)
		}
		return xmlBad("the body is not well-formed XML: line %d: %s", syntax.Line, syntax.Msg)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return xmlBad("the body is cut short")
	}
	line, _ := dec.InputPos()
	msg := err.Error()
	if strings.Contains(msg, "charset") {
		return xmlBad("the body must be encoded in UTF-8")
	}
	if !utf8.ValidString(msg) {
		msg = "unreadable"
	}
	return xmlBad("the body is not well-formed XML: line %d: %s", line, strings.TrimPrefix(msg, "xml: "))
}

// xmlText is the trimmed text of a simple element.
func xmlText(n *xmlNode) (string, error) {
	if len(n.Children) > 0 {
		return "", xmlBad("%s must hold text, not elements", n.path)
	}
	return strings.TrimSpace(n.Text), nil
}

// xmlNodeError names where in the document something is wrong.
func xmlNodeError(n *xmlNode, format string, args ...any) *problem.Problem {
	return problem.BadRequest("%s: %s", n.path, fmt.Sprintf(format, args...))
}
