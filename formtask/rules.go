package formtask

import (
	"fmt"
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
func CheckAttachments(svc store.ServiceDetail, atts []AttachmentInfo, final bool) []*Violation {
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

// ServiceOpen refuses a new task of a service that takes none through this interface at the time now (a
// local date-time): not REST-enabled, or outside its ValidFrom–ValidTo.
func ServiceOpen(svc store.ServiceDetail, now time.Time) error {
	if !svc.RestEnabled || now.Before(svc.ValidFrom) || now.After(svc.ValidTo) {
		return refuse(ServiceClosed, "service %s edition %d cannot be submitted through this interface now", svc.ServiceCode, svc.ServiceEdition)
	}
	return nil
}
