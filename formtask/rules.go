package formtask

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/postbox/postbox/store"
)

// Form types of the interface.
const (
	MainForm = "MainForm"
	SubForm  = "SubForm"
)

// Violation is a broken rule of a service's metadata: the field it concerns and what is wrong. The API
// answers it before anything is stored (Kind says how); the activities report it as a validation error.
type Violation struct {
	Kind    Kind
	Field   string
	Message string
}

func (v *Violation) Error() string { return v.Message }

// Refusal is the violation as the refusal of a change; where, if set, names the part of the request.
func (v *Violation) Refusal(where string) *Error {
	if where != "" {
		return refuse(v.Kind, "%s: %s", where, v.Message)
	}
	return refuse(v.Kind, "%s", v.Message)
}

func violation(kind Kind, field, format string, args ...any) *Violation {
	return &Violation{Kind: kind, Field: field, Message: fmt.Sprintf(format, args...)}
}

// CheckFormType says whether typ is MainForm or SubForm.
func CheckFormType(typ string) *Violation {
	if typ != MainForm && typ != SubForm {
		return violation(BadInput, "Type", "Type must be MainForm or SubForm, not %q", typ)
	}
	return nil
}

// FormOf returns the form of the service with the data format, checking that it is a form of type typ.
func FormOf(svc store.ServiceDetail, typ, dataFormatID string, dataFormatVersion int) (store.FormMeta, *Violation) {
	for _, meta := range svc.Forms {
		if meta.DataFormatID == dataFormatID && meta.DataFormatVersion == dataFormatVersion {
			if meta.FormType != typ {
				return meta, violation(BadInput, "Type", "data format %s version %d is a %s of the service, not a %s",
					dataFormatID, dataFormatVersion, meta.FormType, typ)
			}
			return meta, nil
		}
	}
	return store.FormMeta{}, violation(BadInput, "DataFormatId", "data format %s version %d is not a form of service %s/%d",
		dataFormatID, dataFormatVersion, svc.ServiceCode, svc.ServiceEdition)
}

// CheckMainForms says whether a whole form set of these types has exactly one MainForm.
func CheckMainForms(types []string) *Violation {
	mains := 0
	for _, t := range types {
		if t == MainForm {
			mains++
		}
	}
	if mains != 1 {
		return violation(BadInput, "Type", "exactly one MainForm is required, not %d", mains)
	}
	return nil
}

// CheckSubFormType says whether a form added or changed on its own is a SubForm.
func CheckSubFormType(typ string) *Violation {
	if typ != SubForm {
		return violation(BadInput, "Type", "Type must be SubForm, not %q", typ)
	}
	return nil
}

// CheckSubFormTarget says whether the form a sub-form replaces, of type targetType, is a sub-form.
func CheckSubFormTarget(targetID int64, targetType string) *Violation {
	if targetType != SubForm {
		return violation(BadInput, "Type", "form %d is the %s; only a SubForm can be changed on its own", targetID, targetType)
	}
	return nil
}

// AttachmentRuleOf returns the rule of an attachment type of the service.
func AttachmentRuleOf(svc store.ServiceDetail, attachmentType string) (store.AttachmentRule, *Violation) {
	rule, ok := store.RuleFor(svc.AttachmentRules, attachmentType)
	if !ok {
		return rule, violation(BadInput, "AttachmentType", "attachment type %q is not allowed for service %s/%d",
			attachmentType, svc.ServiceCode, svc.ServiceEdition)
	}
	return rule, nil
}

// CheckFileType says whether a file of this name may be an attachment of the rule's type.
func CheckFileType(rule store.AttachmentRule, fileName string) *Violation {
	if !rule.AllowsFile(fileName) {
		return violation(UnsupportedFileType, fileName, "file type not allowed for %s; allowed: %s", rule.AttachmentTypeName, rule.AllowedFileTypes)
	}
	return nil
}

// CheckFileSize says whether size bytes are allowed for an attachment of the rule's type.
func CheckFileSize(rule store.AttachmentRule, fileName string, size int64) *Violation {
	if rule.MaxFileSize > 0 && size > rule.MaxFileSize {
		return violation(TooLarge, fileName, "%d bytes is larger than the %d bytes allowed for %s", size, rule.MaxFileSize, rule.AttachmentTypeName)
	}
	return nil
}

// CheckAttachmentCount says whether n attachments of the rule's type are allowed; final also applies
// MinAttachmentCount, which holds only when the task is completed.
func CheckAttachmentCount(rule store.AttachmentRule, n int, final bool) *Violation {
	if n > rule.MaxAttachmentCount {
		return violation(BadInput, rule.AttachmentTypeName, "%d attachments of type %s; at most %d are allowed", n, rule.AttachmentTypeName, rule.MaxAttachmentCount)
	}
	if final && n < rule.MinAttachmentCount {
		return violation(BadInput, rule.AttachmentTypeName, "%d attachments of type %s; at least %d are required", n, rule.AttachmentTypeName, rule.MinAttachmentCount)
	}
	return nil
}

// CheckAttachments applies the service's attachment rules to the attachments a task would have.
func CheckAttachments(svc store.ServiceDetail, atts []store.AttachmentInfo, final bool) []*Violation {
	var out []*Violation
	counts := map[string]int{}
	for _, att := range atts {
		rule, v := AttachmentRuleOf(svc, att.AttachmentType)
		if v != nil {
			v.Field = att.FileName
			out = append(out, v)
			continue
		}
		counts[rule.AttachmentTypeName]++
		if v := CheckFileName(att.FileName); v != nil {
			v.Field = att.FileName
			out = append(out, v)
			continue
		}
		if v := CheckFileType(rule, att.FileName); v != nil {
			out = append(out, v)
		}
		if v := CheckFileContent(att.FileName, att.Head, att.FileSize); v != nil {
			out = append(out, v)
		}
		if v := CheckFileSize(rule, att.FileName, att.FileSize); v != nil {
			out = append(out, v)
		}
	}
	for _, rule := range svc.AttachmentRules {
		if v := CheckAttachmentCount(rule, counts[rule.AttachmentTypeName], final); v != nil {
			out = append(out, v)
		}
	}
	return out
}

// ---- file names and file content of attachments ----

// maxFileNameBytes bounds a file name, as most file systems do.
const maxFileNameBytes = 255

// windowsDeviceNames are names Windows takes for a device, with any extension ("con.txt" too).
var windowsDeviceNames = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true, "conin$": true, "conout$": true, "clock$": true,
	"com0": true, "com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"com¹": true, "com²": true, "com³": true,
	"lpt0": true, "lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
	"lpt¹": true, "lpt²": true, "lpt³": true,
}

// pathLookalikes are characters that show as a slash or backslash.
const pathLookalikes = "\u2044\u2215\u29f8\u29f9\uff0f\uff3c"

// CheckFileName says whether name can be a plain file name on any system the attachment may be saved on:
// not empty, at most 255 bytes of UTF-8, no control or format characters (the bidirectional overrides
// U+202A–U+202E and isolates U+2066–U+2069, the marks U+200E/U+200F and U+061C, zero-width characters: they
// make "fdp.exe" show as "exe.pdf"), no path separators, encoded ones (%2F, %5C) or look-alikes, not only
// dots and blanks, and no Windows device name (CON, NUL, COM1, LPT1 …, with or without an extension).
func CheckFileName(name string) *Violation {
	bad := func(format string, args ...any) *Violation {
		return violation(BadFileName, "FileName", "file name %q "+format, append([]any{name}, args...)...)
	}
	switch {
	case strings.TrimSpace(name) == "":
		return violation(BadFileName, "FileName", "a file name is required")
	case len(name) > maxFileNameBytes:
		return bad("is longer than %d bytes", maxFileNameBytes)
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	}
	for _, r := range name {
		switch {
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			return bad("holds the control or format character U+%04X (such characters can disguise a file's type)", r)
		case r == '/' || r == '\\' || strings.ContainsRune(pathLookalikes, r):
			return bad("holds a path separator %q; send the file's name only", r)
		}
	}
	lower := strings.ToLower(name)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return bad("holds an encoded path separator (%%2F or %%5C)")
	}
	if strings.Trim(name, ". \t") == "" {
		return bad("is only dots and blanks")
	}
	base, _, _ := strings.Cut(lower, ".")
	if windowsDeviceNames[strings.TrimRight(base, " ")] {
		return bad("is a Windows device name")
	}
	return nil
}

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

// ServiceOpen refuses a new task of a service that takes none through this interface at the time now (a
// local date-time): not REST-enabled, or outside its ValidFrom–ValidTo.
func ServiceOpen(svc store.ServiceDetail, now time.Time) error {
	if !svc.RestEnabled || now.Before(svc.ValidFrom) || now.After(svc.ValidTo) {
		return refuse(ServiceClosed, "service %s edition %d cannot be submitted through this interface now", svc.ServiceCode, svc.ServiceEdition)
	}
	return nil
}
