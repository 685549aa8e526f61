package formtask

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/postbox/postbox/store"
)

// The check of a file's bytes as they arrive: its format by extension, executables, text.

// SniffLen is how many leading bytes decide a file's format, and what CheckFileContent needs of a stored
// attachment to re-check it (store.AttachmentHeadBytes).
const SniffLen = store.AttachmentHeadBytes

// fileFormat is what the content of a file with a given extension must look like.
type fileFormat struct {
	name   string
	magics []string // one of them must start the file; none for text
	text   bool     // valid UTF-8 without NUL throughout
	xml    bool     // text whose first character after a byte-order mark and blanks is '<'
}

var (
	pdfFormat  = fileFormat{name: "PDF", magics: []string{"%PDF-"}}
	zipFormat  = fileFormat{name: "ZIP-based (Office Open XML, OpenDocument, ZIP)", magics: []string{"PK\x03\x04"}}
	oleFormat  = fileFormat{name: "OLE compound (legacy Office)", magics: []string{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"}}
	textFormat = fileFormat{name: "text", text: true}
	xmlFormat  = fileFormat{name: "XML", text: true, xml: true}
	jpegFormat = fileFormat{name: "JPEG", magics: []string{"\xff\xd8\xff"}}
	tiffFormat = fileFormat{name: "TIFF", magics: []string{"II*\x00", "MM\x00*"}}
)

// fileFormats are the formats whose content is checked, by file extension. Other extensions are checked
// only for being empty or executable.
var fileFormats = map[string]fileFormat{
	"pdf": pdfFormat,
	"png": {name: "PNG", magics: []string{"\x89PNG\r\n\x1a\n"}},
	"jpg": jpegFormat, "jpeg": jpegFormat, "jpe": jpegFormat, "jfif": jpegFormat,
	"gif": {name: "GIF", magics: []string{"GIF87a", "GIF89a"}},
	"tif": tiffFormat, "tiff": tiffFormat,
	"bmp":  {name: "BMP", magics: []string{"BM"}},
	"zip":  zipFormat,
	"docx": zipFormat, "xlsx": zipFormat, "pptx": zipFormat, "docm": zipFormat, "xlsm": zipFormat,
	"odt": zipFormat, "ods": zipFormat, "odp": zipFormat, "odg": zipFormat, "asice": zipFormat, "bdoc": zipFormat,
	"doc": oleFormat, "xls": oleFormat, "ppt": oleFormat, "msg": oleFormat,
	"rtf": {name: "RTF", magics: []string{"{\\rtf"}},
	"xml": xmlFormat, "xsd": xmlFormat, "xsl": xmlFormat, "xslt": xmlFormat, "gml": xmlFormat, "svg": xmlFormat,
	"txt": textFormat, "csv": textFormat, "tsv": textFormat, "json": textFormat, "md": textFormat, "log": textFormat,
}

// executableMagics start executable formats: DOS/PE, ELF, Mach-O (both byte orders, 32 and 64 bit, and
// fat binaries, whose magic Java class files share), WebAssembly and scripts with a shebang line.
var executableMagics = []struct{ magic, name string }{
	{"MZ", "a Windows executable (MZ/PE)"},
	{"\x7fELF", "an ELF executable"},
	{"\xfe\xed\xfa\xce", "a Mach-O executable"}, {"\xfe\xed\xfa\xcf", "a Mach-O executable"},
	{"\xce\xfa\xed\xfe", "a Mach-O executable"}, {"\xcf\xfa\xed\xfe", "a Mach-O executable"},
	{"\xca\xfe\xba\xbe", "a Mach-O universal binary or Java class"},
	{"\x00asm", "a WebAssembly module"},
	{"#!/", "a script (#!)"}, {"#! /", "a script (#!)"},
}

// executableExtensions name executables; a service that allows them by name gets them as they are.
var executableExtensions = map[string]bool{
	"exe": true, "dll": true, "com": true, "scr": true, "msi": true, "sys": true, "cpl": true, "so": true,
	"dylib": true, "bin": true, "elf": true, "app": true, "class": true, "jar": true, "wasm": true,
	"sh": true, "bash": true, "zsh": true, "py": true, "pl": true, "rb": true, "command": true,
}

func extensionOf(fileName string) string {
	i := strings.LastIndexByte(fileName, '.')
	if i < 0 {
		return ""
	}
	return strings.ToLower(fileName[i+1:])
}

// ContentCheck checks the bytes of an attachment as they arrive (it is an io.Writer), so a streamed upload
// is refused on its first bytes instead of after it is stored: the file must not be empty, must not be an
// executable under another name, must start as its extension's format does (a .pdf with %PDF-, a .png
// with the PNG signature, a .docx as a ZIP …), and text formats must be valid UTF-8 without NUL
// throughout. Write returns the *Violation as its error once the content is refused; Close tells whether
// the whole content passed.
type ContentCheck struct {
	fileName string
	ext      string
	format   fileFormat
	known    bool
	head     []byte
	decided  bool
	size     int64
	pending  []byte // the start of a UTF-8 sequence cut by the end of a write
	refused  *Violation
}

// NewContentCheck starts the check of the content of a file named fileName.
func NewContentCheck(fileName string) *ContentCheck {
	ext := extensionOf(fileName)
	format, known := fileFormats[ext]
	return &ContentCheck{fileName: fileName, ext: ext, format: format, known: known}
}

// Write checks the next bytes of the content.
func (c *ContentCheck) Write(p []byte) (int, error) {
	if c.refused != nil {
		return 0, c.refused
	}
	c.size += int64(len(p))
	if !c.decided {
		c.head = append(c.head, p[:min(len(p), SniffLen-len(c.head))]...)
		if len(c.head) == SniffLen {
			c.decide()
		}
	}
	if c.refused == nil && c.format.text {
		c.checkText(p)
	}
	if c.refused != nil {
		return 0, c.refused
	}
	return len(p), nil
}

// Close ends the check of a complete content and returns what refuses it, if anything.
func (c *ContentCheck) Close() error {
	if v := c.finish(c.size); v != nil {
		return v
	}
	return nil
}

// CheckedReader passes the bytes of a file on while its ContentCheck accepts them: a refusal ends the read
// with the *Violation, so a store reading from it keeps nothing of a file refused on its first bytes.
type CheckedReader struct {
	r     io.Reader
	check *ContentCheck
}

// NewCheckedReader checks the bytes of the file fileName read from r.
func NewCheckedReader(r io.Reader, fileName string) *CheckedReader {
	return &CheckedReader{r: r, check: NewContentCheck(fileName)}
}

func (c *CheckedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		if _, refused := c.check.Write(p[:n]); refused != nil {
			return 0, refused
		}
	}
	if err == io.EOF {
		if refused := c.check.Close(); refused != nil {
			return 0, refused
		}
	}
	return n, err
}

// finish ends the check of content of size bytes, of which the check saw the first c.size.
func (c *ContentCheck) finish(size int64) *Violation {
	if c.refused == nil && size == 0 {
		c.refused = violation(BadFileContent, c.fileName, "file %q is empty (0 bytes); an attachment needs content", c.fileName)
	}
	if c.refused == nil && !c.decided {
		c.decide()
	}
	if c.refused == nil && c.format.text && size == c.size && len(c.pending) > 0 {
		c.refused = c.notText("ends inside a UTF-8 sequence")
	}
	return c.refused
}

// decide judges the head: no executable under another name, and the magic of the extension's format.
func (c *ContentCheck) decide() {
	c.decided = true
	head := string(c.head)
	if !executableExtensions[c.ext] {
		for _, e := range executableMagics {
			if strings.HasPrefix(head, e.magic) {
				c.refused = violation(BadFileContent, c.fileName, "file %q is %s; executables are not accepted as attachments", c.fileName, e.name)
				return
			}
		}
	}
	if !c.known {
		return
	}
	for _, m := range c.format.magics {
		if strings.HasPrefix(head, m) {
			return
		}
	}
	if len(c.format.magics) > 0 {
		c.refused = violation(BadFileContent, c.fileName, "file %q does not start as a %s file does (%q); its content does not match its name",
			c.fileName, c.format.name, c.format.magics[0])
		return
	}
	if c.format.xml {
		rest := strings.TrimLeft(strings.TrimPrefix(head, "\ufeff"), " \t\r\n")
		if rest != "" && rest[0] != '<' {
			c.refused = violation(BadFileContent, c.fileName, "file %q is not XML: it must start with '<' (after an optional byte-order mark and blanks)", c.fileName)
		}
	}
}

// checkText checks that p, continuing what came before, is UTF-8 without NUL.
func (c *ContentCheck) checkText(p []byte) {
	if len(c.pending) > 0 {
		p = append(c.pending, p...)
		c.pending = nil
	}
	for i := 0; i < len(p); {
		b := p[i]
		if b == 0 {
			c.refused = c.notText("holds a NUL byte")
			return
		}
		if b < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			if !utf8.FullRune(p[i:]) {
				c.pending = append([]byte(nil), p[i:]...)
				return
			}
			c.refused = c.notText("is not valid UTF-8")
			return
		}
		i += n
	}
}

func (c *ContentCheck) notText(what string) *Violation {
	return violation(BadFileContent, c.fileName, "file %q %s; a %s file must be UTF-8 text", c.fileName, what, c.format.name)
}

// CheckFileContent checks the content of an attachment of size bytes whose first bytes are data: all of
// it, or at least the first SniffLen bytes (the text of a larger file is then checked as far as data goes).
func CheckFileContent(fileName string, data []byte, size int64) *Violation {
	c := NewContentCheck(fileName)
	if _, err := c.Write(data); err != nil {
		return c.refused
	}
	return c.finish(size)
}
