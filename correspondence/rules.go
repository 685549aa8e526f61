package correspondence

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
)

// check returns s with its Body cleaned, or the refusal of its first field that breaks a rule. now is the
// wall-clock time in the service's zone; maxRecipients bounds Recipients.
func check(s Send, now time.Time, maxRecipients int) (Send, error) {
	switch {
	case strings.TrimSpace(s.ServiceCode) == "" || s.ServiceEdition < 1:
		return s, refuse(BadInput, "ServiceCode and ServiceEdition (a whole number from 1) name the correspondence service")
	case len(s.Recipients) == 0:
		return s, refuse(BadInput, "Recipients lists no one: give organization numbers or national identity numbers")
	case len(s.Recipients) > maxRecipients:
		return s, refuse(BadInput, "Recipients lists %d; one request sends to at most %d", len(s.Recipients), maxRecipients)
	case strings.TrimSpace(s.Subject) == "":
		return s, refuse(BadInput, "Subject is required")
	case utf8.RuneCountInString(s.Subject) > MaxSubject:
		return s, refuse(BadInput, "Subject is longer than %d characters", MaxSubject)
	case utf8.RuneCountInString(s.Summary) > MaxSummary:
		return s, refuse(BadInput, "Summary is longer than %d characters", MaxSummary)
	case utf8.RuneCountInString(s.SendersReference) > MaxReference:
		return s, refuse(BadInput, "SendersReference is longer than %d characters", MaxReference)
	case utf8.RuneCountInString(s.IdempotentKey) > MaxReference:
		return s, refuse(BadInput, "IdempotentKey is longer than %d characters", MaxReference)
	case s.Language != 0 && s.Language != 1044 && s.Language != 2068 && s.Language != 1033:
		return s, refuse(BadInput, "Language is 1044, 2068 or 1033")
	}
	if len(s.Body) > MaxBodyBytes {
		return s, refuse(BadInput, "Body is larger than %d bytes", MaxBodyBytes)
	}
	s.Body = mailbox.CleanBody(s.Body)
	if s.Language == 0 {
		s.Language = 1044
	}
	if err := checkReplyOptions(s.ReplyOptions); err != nil {
		return s, err
	}
	if err := checkCustomData(s); err != nil {
		return s, err
	}
	if err := checkAttachments(s.Attachments); err != nil {
		return s, err
	}
	return s, checkDates(s, now)
}

func checkReplyOptions(opts []store.ReplyOption) error {
	if len(opts) > MaxReplyOptions {
		return refuse(BadInput, "ReplyOptions has %d options; at most %d", len(opts), MaxReplyOptions)
	}
	for i, o := range opts {
		if utf8.RuneCountInString(o.Text) > MaxSubject {
			return refuse(BadInput, "ReplyOptions[%d].Text is longer than %d characters", i, MaxSubject)
		}
		switch o.Type {
		case "URL":
			u, err := url.Parse(o.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return refuse(BadInput, "ReplyOptions[%d].URL is not an absolute http or https URL", i)
			}
		case "Service":
			if o.ServiceCode == "" || o.ServiceEditionCode < 1 {
				return refuse(BadInput, "ReplyOptions[%d] of Type Service needs ServiceCode and ServiceEditionCode", i)
			}
		case "ArchiveReference":
		default:
			return refuse(BadInput, "ReplyOptions[%d].Type is Service, ArchiveReference or URL", i)
		}
	}
	return nil
}

func checkAttachments(list []Attachment) error {
	if len(list) > MaxAttachments {
		return refuse(BadInput, "Attachments has %d files; at most %d", len(list), MaxAttachments)
	}
	for i, a := range list {
		if a.UploadID != "" {
			if len(a.Data) > 0 {
				return refuse(BadInput, "Attachments[%d] has both Data and AttachmentId; send one", i)
			}
			if a.FileName == "" { // the upload's name, checked when it was uploaded
				continue
			}
		}
		if v := formtask.CheckFileName(a.FileName); v != nil {
			return refuse(BadInput, "Attachments[%d]: %s", i, v.Message)
		}
		switch {
		case len(a.Data) == 0 && a.UploadID == "":
			return refuse(BadInput, "Attachments[%d].Data is empty: send the file's bytes in base64, or upload it and send its AttachmentId", i)
		case utf8.RuneCountInString(a.Name) > MaxSubject:
			return refuse(BadInput, "Attachments[%d].Name is longer than %d characters", i, MaxSubject)
		}
	}
	return nil
}

func checkCustomData(s Send) error {
	if len(s.CustomMessageData) > MaxCustomData {
		return refuse(BadInput, "CustomMessageData has %d entries; at most %d", len(s.CustomMessageData), MaxCustomData)
	}
	seen := make(map[string]bool, len(s.CustomMessageData))
	for i, d := range s.CustomMessageData {
		switch {
		case strings.TrimSpace(d.Key) == "":
			return refuse(BadInput, "CustomMessageData[%d].Key is required", i)
		case utf8.RuneCountInString(d.Key) > MaxSubject || utf8.RuneCountInString(d.Value) > MaxCustomDataLen:
			return refuse(BadInput, "CustomMessageData[%d] is longer than %d characters (Key) or %d (Value)", i, MaxSubject, MaxCustomDataLen)
		case seen[d.Key]:
			return refuse(BadInput, "CustomMessageData[%d].Key %q is given twice", i, d.Key)
		}
		seen[d.Key] = true
	}
	return nil
}

// checkDates keeps the dates in their order: a message becomes visible (now, or at VisibleDateTime), is
// due after that and may be deleted by the system after both.
func checkDates(s Send, now time.Time) error {
	visible := now
	if s.VisibleAt != nil && s.VisibleAt.After(now) {
		visible = *s.VisibleAt
	}
	if s.DueAt != nil && !s.DueAt.After(visible) {
		return refuse(BadInput, "DueDateTime must come after VisibleDateTime (or now, when the message is visible at once)")
	}
	if s.AllowSystemDeleteAt != nil {
		if !s.AllowSystemDeleteAt.After(visible) {
			return refuse(BadInput, "AllowSystemDeleteDateTime must come after VisibleDateTime (or now)")
		}
		if s.DueAt != nil && !s.AllowSystemDeleteAt.After(*s.DueAt) {
			return refuse(BadInput, "AllowSystemDeleteDateTime must come after DueDateTime")
		}
	}
	return nil
}

// recipientKind is "org" for an organization number, "person" for a national identity number, or "" for
// a malformed one.
func recipientKind(r string) string {
	for _, c := range r {
		if c < '0' || c > '9' {
			return ""
		}
	}
	switch len(r) {
	case 9:
		return "org"
	case 11:
		return "person"
	}
	return ""
}

// screen refuses the malformed and repeated recipients; the others are left for the party lookup
// (Refused "").
func screen(recipients []string) []Outcome {
	out := make([]Outcome, len(recipients))
	seen := make(map[string]bool, len(recipients))
	for i, r := range recipients {
		out[i].Recipient = r
		switch {
		case recipientKind(r) == "":
			out[i].Refused = RefusedMalformed
		case seen[r]:
			out[i].Refused = RefusedDuplicate
		}
		seen[r] = true
	}
	return out
}
