package formtask

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/postbox/postbox/store"
)

// Content is a body of forms and attachments as a client sends it, before it is checked against its
// service: what PUT and POST on a form task and a pre-filled task carry. Type, ServiceCode and
// ServiceEdition may be left out; when given they must be the task's.
type Content struct {
	Type           string
	ServiceCode    string
	ServiceEdition *int
	Forms          []FormBody
	Attachments    []AttachmentBody
}

// FormBody is a form as a client sends it.
type FormBody struct {
	Type, DataFormatID string
	DataFormatVersion  int
	FormData           string
}

// AttachmentBody is an attachment as a client sends it: Data in base64 and, for attachment types with
// IsCheckSumAllowed, CheckSum the SHA-256 of the decoded data in hex.
type AttachmentBody struct {
	FileName, AttachmentType, Data, CheckSum string
}

// RevisionContent checks content against the service and turns it into what the store keeps.
func RevisionContent(svc store.ServiceDetail, c Content) ([]RevisionForm, []RevisionAttachment, error) {
	if c.Type != "" && c.Type != "FormTask" {
		return nil, nil, refuse(BadInput, "Type must be FormTask, not %q", c.Type)
	}
	if c.ServiceCode != "" && c.ServiceCode != svc.ServiceCode {
		return nil, nil, refuse(BadInput, "ServiceCode %q is not this form task's service %s", c.ServiceCode, svc.ServiceCode)
	}
	if c.ServiceEdition != nil && *c.ServiceEdition != svc.ServiceEdition {
		return nil, nil, refuse(BadInput, "ServiceEdition %d is not this form task's edition %d", *c.ServiceEdition, svc.ServiceEdition)
	}
	forms := make([]RevisionForm, 0, len(c.Forms))
	for i, f := range c.Forms {
		form, err := RevisionFormOf(svc, f, fmt.Sprintf("_embedded.forms[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		forms = append(forms, form)
	}
	attachments := make([]RevisionAttachment, 0, len(c.Attachments))
	for i, a := range c.Attachments {
		att, err := RevisionAttachmentOf(svc, a, fmt.Sprintf("_embedded.attachments[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		attachments = append(attachments, att)
	}
	return forms, attachments, nil
}

// RevisionFormOf checks form f, at where in the request, against the service.
func RevisionFormOf(svc store.ServiceDetail, f FormBody, where string) (RevisionForm, error) {
	if v := CheckFormType(f.Type); v != nil {
		return RevisionForm{}, v.Refusal(where)
	}
	if strings.TrimSpace(f.FormData) == "" {
		return RevisionForm{}, refuse(BadInput, "%s.FormData is empty", where)
	}
	meta, v := FormOf(svc, f.Type, f.DataFormatID, f.DataFormatVersion)
	if v != nil {
		return RevisionForm{}, v.Refusal(where)
	}
	return RevisionForm{Type: f.Type, DataFormatID: f.DataFormatID, DataFormatVersion: f.DataFormatVersion,
		Name: meta.FormName, FormData: f.FormData}, nil
}

// RevisionAttachmentOf checks attachment a, at where in the request, against the service: a plain file
// name, base64 data whose content is what the name says, and the checksum if one was sent.
func RevisionAttachmentOf(svc store.ServiceDetail, a AttachmentBody, where string) (RevisionAttachment, error) {
	if v := CheckFileName(a.FileName); v != nil {
		return RevisionAttachment{}, v.Refusal(where + ".FileName")
	}
	if strings.TrimSpace(a.AttachmentType) == "" {
		return RevisionAttachment{}, refuse(BadInput, "%s.AttachmentType is required", where)
	}
	data, err := base64.StdEncoding.DecodeString(a.Data)
	if err != nil {
		return RevisionAttachment{}, refuse(BadInput, "%s.Data is not valid base64", where)
	}
	if v := CheckFileContent(a.FileName, data, int64(len(data))); v != nil {
		return RevisionAttachment{}, v.Refusal(where + ".Data")
	}
	if a.CheckSum != "" {
		want, err := hex.DecodeString(a.CheckSum)
		if err != nil || len(want) != sha256.Size {
			return RevisionAttachment{}, refuse(BadChecksum, "%s.CheckSum must be the SHA-256 of the data in hex (64 hexadecimal digits)", where)
		}
		if err := CheckDigest(svc, a.AttachmentType, want, sha256.Sum256(data), where+".CheckSum"); err != nil {
			return RevisionAttachment{}, err
		}
	}
	return RevisionAttachment{Name: a.FileName, FileName: a.FileName, AttachmentType: a.AttachmentType, Data: data}, nil
}

// CheckDigest verifies the SHA-256 a client sent with an attachment of a type, named where in the
// request: the type's rule must allow checksums (IsCheckSumAllowed), and the sum must be that of the
// bytes received.
func CheckDigest(svc store.ServiceDetail, attachmentType string, want []byte, got [sha256.Size]byte, where string) error {
	rule, v := AttachmentRuleOf(svc, attachmentType)
	if v != nil {
		return v.Refusal(where)
	}
	if !rule.IsCheckSumAllowed {
		return refuse(ChecksumNotAllowed, "%s: attachment type %s does not take a checksum (IsCheckSumAllowed is false); send the attachment without one",
			where, attachmentType)
	}
	if !bytes.Equal(want, got[:]) {
		return refuse(ChecksumMismatch, "%s: the SHA-256 of the %s received is %x, not the %x sent; nothing was kept", where, attachmentType, got, want)
	}
	return nil
}

// StreamChecks are the checks of a streamed attachment made before a byte is read: a plain file name,
// a file type its type allows and a declared size within MaxFileSize.
func StreamChecks(rule store.AttachmentRule, name string, size int64) *Violation {
	v := CheckFileName(name)
	if v == nil {
		v = CheckFileType(rule, name)
	}
	if v == nil {
		v = CheckFileSize(rule, name, size)
	}
	return v
}
