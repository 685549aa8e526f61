package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// The bodies of form-task changes: the JSON of a whole form task (its forms and base64 attachments) read
// into a revision, the query flags, and the streamed attachment checked while it is read.

// formTaskBody is the body of PUT and POST on a form task.
type formTaskBody struct {
	Type           jsonText
	ServiceCode    jsonText
	ServiceEdition *flexInt
	// The body may leave out _embedded and either list (omitempty: not required in the OpenAPI document).
	Embedded struct {
		Forms       []formBody       `json:"forms,omitempty"`
		Attachments []attachmentBody `json:"attachments,omitempty"`
	} `json:"_embedded,omitzero"`
}

type formBody struct {
	Type              jsonText
	DataFormatID      jsonText `json:"DataFormatId"`
	DataFormatVersion flexInt
	FormData          jsonText
}

type attachmentBody struct {
	FileName       jsonText
	AttachmentType jsonText
	Data           jsonText
	// CheckSum is the SHA-256 of the decoded Data, in hex, for attachment types with IsCheckSumAllowed.
	CheckSum jsonText `json:",omitempty"`
}

// bindFormTaskBody reads an optional JSON body: a PUT that only signs may come without one.
func bindFormTaskBody(c *gin.Context, v *formTaskBody) error {
	if c.Request.ContentLength == 0 {
		return nil
	}
	return bindJSON(c, v)
}

// formTaskParams reads complete and sign; both default to true, as the interface says.
func formTaskParams(c *gin.Context, defaults bool) (complete, sign bool, err error) {
	read := func(name string) (bool, error) {
		v, ok := c.GetQuery(name)
		if !ok || v == "" {
			return defaults, nil
		}
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return false, problem.BadRequest("%s must be true or false, not %q", name, v)
		}
		return b, nil
	}
	if complete, err = read("complete"); err != nil {
		return false, false, err
	}
	sign, err = read("sign")
	return complete, sign, err
}

// revisionContent checks a body against the service and turns it into what the store keeps.
func revisionContent(svc store.ServiceDetail, b formTaskBody) ([]store.RevisionForm, []store.RevisionAttachment, error) {
	if b.Type != "" && b.Type != "FormTask" {
		return nil, nil, problem.BadRequest("Type must be FormTask, not %q", b.Type)
	}
	if b.ServiceCode != "" && string(b.ServiceCode) != svc.ServiceCode {
		return nil, nil, problem.BadRequest("ServiceCode %q is not this form task's service %s", b.ServiceCode, svc.ServiceCode)
	}
	if b.ServiceEdition != nil && b.ServiceEdition.n != svc.ServiceEdition {
		return nil, nil, problem.BadRequest("ServiceEdition %d is not this form task's edition %d", b.ServiceEdition.n, svc.ServiceEdition)
	}
	forms := make([]store.RevisionForm, 0, len(b.Embedded.Forms))
	for i, f := range b.Embedded.Forms {
		form, err := revisionForm(svc, f, fmt.Sprintf("_embedded.forms[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		forms = append(forms, form)
	}
	attachments := make([]store.RevisionAttachment, 0, len(b.Embedded.Attachments))
	for i, a := range b.Embedded.Attachments {
		att, err := revisionAttachment(svc, a, fmt.Sprintf("_embedded.attachments[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		attachments = append(attachments, att)
	}
	return forms, attachments, nil
}

func revisionForm(svc store.ServiceDetail, f formBody, where string) (store.RevisionForm, error) {
	if v := formtask.CheckFormType(string(f.Type)); v != nil {
		return store.RevisionForm{}, v.Refusal(where)
	}
	if strings.TrimSpace(string(f.FormData)) == "" {
		return store.RevisionForm{}, problem.BadRequest("%s.FormData is empty", where)
	}
	meta, v := formtask.FormOf(svc, string(f.Type), string(f.DataFormatID), f.DataFormatVersion.n)
	if v != nil {
		return store.RevisionForm{}, v.Refusal(where)
	}
	return store.RevisionForm{Type: string(f.Type), DataFormatID: string(f.DataFormatID), DataFormatVersion: f.DataFormatVersion.n,
		Name: meta.FormName, FormData: string(f.FormData)}, nil
}

func revisionAttachment(svc store.ServiceDetail, a attachmentBody, where string) (store.RevisionAttachment, error) {
	name, typ := string(a.FileName), string(a.AttachmentType)
	if v := formtask.CheckFileName(name); v != nil {
		return store.RevisionAttachment{}, v.Refusal(where + ".FileName")
	}
	if strings.TrimSpace(typ) == "" {
		return store.RevisionAttachment{}, problem.BadRequest("%s.AttachmentType is required", where)
	}
	data, err := base64.StdEncoding.DecodeString(string(a.Data))
	if err != nil {
		return store.RevisionAttachment{}, problem.BadRequest("%s.Data is not valid base64", where)
	}
	if v := formtask.CheckFileContent(name, data, int64(len(data))); v != nil {
		return store.RevisionAttachment{}, v.Refusal(where + ".Data")
	}
	if a.CheckSum != "" {
		want, err := hex.DecodeString(string(a.CheckSum))
		if err != nil || len(want) != sha256.Size {
			return store.RevisionAttachment{}, problem.New(http.StatusBadRequest, "bad-checksum",
				"%s.CheckSum must be the SHA-256 of the data in hex (64 hexadecimal digits)", where)
		}
		if err := checkDigest(svc, typ, want, sha256.Sum256(data), where+".CheckSum"); err != nil {
			return store.RevisionAttachment{}, err
		}
	}
	return store.RevisionAttachment{Name: name, FileName: name, AttachmentType: typ, Data: data}, nil
}

// checkDigest verifies the SHA-256 a client sent with an attachment of a type: the type's rule must allow
// checksums (IsCheckSumAllowed), and the sum must be that of the bytes received.
func checkDigest(svc store.ServiceDetail, attachmentType string, want []byte, got [sha256.Size]byte, where string) error {
	rule, v := formtask.AttachmentRuleOf(svc, attachmentType)
	if v != nil {
		return v.Refusal(where)
	}
	if !rule.IsCheckSumAllowed {
		return problem.New(http.StatusBadRequest, "checksum-not-allowed",
			"%s: attachment type %s does not take a checksum (IsCheckSumAllowed is false); send the attachment without one", where, attachmentType)
	}
	if !bytes.Equal(want, got[:]) {
		return problem.New(http.StatusBadRequest, "checksum-mismatch",
			"%s: the SHA-256 of the %s received is %x, not the %x sent; nothing was kept", where, attachmentType, got, want)
	}
	return nil
}

// contentDigestHeader carries the SHA-256 of a streamed attachment, as RFC 9530 writes it:
// `Content-Digest: sha-256=:<base64>:`. Other algorithms in it are ignored.
const contentDigestHeader = "Content-Digest"

// contentDigest is the sha-256 of the request's Content-Digest, nil when it names none.
func contentDigest(c *gin.Context) ([]byte, error) {
	for _, member := range strings.Split(strings.Join(c.Request.Header.Values(contentDigestHeader), ","), ",") {
		algorithm, value, _ := strings.Cut(strings.TrimSpace(member), "=")
		if !strings.EqualFold(algorithm, "sha-256") {
			continue
		}
		sum, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(value, ":"), ":"))
		if err != nil || len(sum) != sha256.Size || !strings.HasPrefix(value, ":") || !strings.HasSuffix(value, ":") {
			return nil, problem.New(http.StatusBadRequest, "bad-checksum", "%s: sha-256 must be a base64 byte sequence of 32 bytes, as sha-256=:<base64>:", contentDigestHeader)
		}
		return sum, nil
	}
	return nil, nil
}

// checkedBody passes a streamed attachment on while the check of its content accepts it; a refusal ends
// the read, so the store keeps nothing of a file refused on its first bytes. With a digest (the client's
// Content-Digest) the bytes must also have that SHA-256: the object store, which hashes them as it stores
// them, asks CheckSum at their end (files.SumChecker).
type checkedBody struct {
	*formtask.CheckedReader
	digest *streamDigest
}

// streamDigest is the SHA-256 a streamed attachment's client sent.
type streamDigest struct {
	svc            store.ServiceDetail
	attachmentType string
	want           []byte
}

// CheckSum refuses bytes whose SHA-256 is not the client's Content-Digest (files.SumChecker).
func (b checkedBody) CheckSum(sum []byte) error {
	if d := b.digest; d != nil {
		return checkDigest(d.svc, d.attachmentType, d.want, [sha256.Size]byte(sum), contentDigestHeader)
	}
	return nil
}

// newCheckedBody checks the request body as an attachment named name of a type, and its SHA-256 against the
// Content-Digest, if the request has one.
func newCheckedBody(c *gin.Context, svc store.ServiceDetail, name, attachmentType string) (checkedBody, error) {
	b := checkedBody{CheckedReader: formtask.NewCheckedReader(c.Request.Body, name)}
	want, err := contentDigest(c)
	if err != nil || want == nil {
		return b, err
	}
	rule, v := formtask.AttachmentRuleOf(svc, attachmentType)
	switch {
	case v != nil:
		return b, v.Refusal("")
	case !rule.IsCheckSumAllowed: // refused before a byte is read
		return b, checkDigest(svc, attachmentType, want, [sha256.Size]byte{}, contentDigestHeader)
	}
	b.digest = &streamDigest{svc: svc, attachmentType: attachmentType, want: want}
	return b, nil
}
