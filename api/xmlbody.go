package api

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
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
	var syntax *xml.SyntaxError
	switch {
	case answered(err):
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

// readDocument reads a small HAL request body as a tree of nodes: the HAL-XML document (readXML), or its
// JSON HAL form (parseJSONDocument). Both are held to the same limits, so a handler validates one tree
// whatever form the client sent.
func readDocument(c *gin.Context, rootRel string) (*xmlNode, error) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	switch {
	case err == nil && slices.Contains(jsonBodyTypes, mt):
		if c.Request.ContentLength > maxXMLBodyBytes {
			return nil, &http.MaxBytesError{Limit: maxXMLBodyBytes}
		}
		return parseJSONDocument(http.MaxBytesReader(c.Writer, c.Request.Body, maxXMLBodyBytes), rootRel)
	case err == nil && slices.Contains(xmlBodyTypes, mt):
		return readXML(c)
	}
	return nil, problem.New(http.StatusUnsupportedMediaType, "unsupported-media-type", "the body must be application/xml or application/hal+json")
}

// jsonDocument turns the JSON HAL form of a resource into the nodes of its HAL-XML form: the root object
// is <resource rel="rootRel">, a property is a child element holding its value as text, an array under
// K (in _embedded or not) is <resource rel="K"> holding one <resource rel="K without its plural s"> per
// item, and _links is <link>. Paths are written the JSON way (_embedded.Roles[0].RoleDefinitionId).
type jsonDocument struct {
	dec      *json.Decoder
	elements int
}

func parseJSONDocument(r io.Reader, rootRel string) (*xmlNode, error) {
	d := &jsonDocument{dec: json.NewDecoder(r)}
	d.dec.UseNumber()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, jsonProblem(err)
	}
	if tok != json.Delim('{') {
		return nil, problem.BadRequest("the body must be a JSON object")
	}
	root := &xmlNode{Name: "resource", Attrs: map[string]string{"rel": rootRel}, path: "(the body)"}
	d.elements = 1
	if err := d.object(root, "", 1); err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		var maxBytes *http.MaxBytesError
		if errors.As(err, &maxBytes) {
			return nil, err
		}
		return nil, problem.BadRequest("the body holds more than one JSON value")
	}
	return root, nil
}

// object reads the members of an object, after its '{', as children of n; prefix is the object's path.
func (d *jsonDocument) object(n *xmlNode, prefix string, depth int) error {
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return jsonProblem(err)
		}
		key, _ := tok.(string)
		if err := checkText(joinField(prefix, "(a key)"), key, maxTextChars); err != nil {
			return err
		}
		if err := d.member(n, key, joinField(prefix, key), depth); err != nil {
			return err
		}
	}
	_, err := d.dec.Token() // '}'
	if err != nil {
		return jsonProblem(err)
	}
	return nil
}

// member reads the value of the member key of n, at path.
func (d *jsonDocument) member(n *xmlNode, key, path string, depth int) error {
	tok, err := d.dec.Token()
	if err != nil {
		return jsonProblem(err)
	}
	name := key
	if key == "_links" {
		name = "link"
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > maxXMLDepth {
			return problem.BadRequest("%s: the body is nested deeper than %d levels", path, maxXMLDepth)
		}
		switch {
		case t == '{' && key == "_embedded":
			return d.object(n, path, depth+1)
		case t == '{':
			child, err := d.child(n, name, path)
			if err != nil {
				return err
			}
			return d.object(child, path, depth+1)
		case t == '[':
			return d.array(n, key, path, depth+1)
		}
		return problem.BadRequest("%s: unexpected %s", path, t)
	default:
		child, err := d.child(n, name, path)
		if err != nil {
			return err
		}
		child.Text = jsonScalarText(t)
		if len(child.Text) > maxXMLText {
			return problem.BadRequest("the text of %s is longer than %d bytes", path, maxXMLText)
		}
		return checkText(path, strings.TrimSpace(child.Text), fieldLimit(key))
	}
}

// array reads the items of the array under key, after its '[', as <resource rel="key"> of n.
func (d *jsonDocument) array(n *xmlNode, key, path string, depth int) error {
	list, err := d.child(n, "resource", path)
	if err != nil {
		return err
	}
	list.Attrs["rel"] = key
	for i := 0; d.dec.More(); i++ {
		at := fmt.Sprintf("%s[%d]", path, i)
		tok, err := d.dec.Token()
		if err != nil {
			return jsonProblem(err)
		}
		if tok != json.Delim('{') {
			return problem.BadRequest("%s must be an object", at)
		}
		if depth+1 > maxXMLDepth {
			return problem.BadRequest("%s: the body is nested deeper than %d levels", at, maxXMLDepth)
		}
		item, err := d.child(list, "resource", at)
		if err != nil {
			return err
		}
		item.Attrs["rel"] = strings.TrimSuffix(key, "s")
		if err := d.object(item, at, depth+1); err != nil {
			return err
		}
	}
	if _, err := d.dec.Token(); err != nil { // ']'
		return jsonProblem(err)
	}
	return nil
}

// child adds an element to n, counted against maxXMLElements.
func (d *jsonDocument) child(n *xmlNode, name, path string) (*xmlNode, error) {
	if d.elements++; d.elements > maxXMLElements {
		return nil, problem.BadRequest("the body has more than %d values", maxXMLElements)
	}
	child := &xmlNode{Name: name, Attrs: map[string]string{}, path: path}
	n.Children = append(n.Children, child)
	return child, nil
}

// jsonScalarText is a JSON scalar as the text of an element: a number as written, true or false, null empty.
func jsonScalarText(tok json.Token) string {
	switch v := tok.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}
