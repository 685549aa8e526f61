package api

import (
	"crypto/sha256"
	"encoding/base64"
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

// content is the body as the form-task room checks it.
func (b formTaskBody) content() formtask.Content {
	c := formtask.Content{Type: string(b.Type), ServiceCode: string(b.ServiceCode),
		Forms: make([]formtask.FormBody, len(b.Embedded.Forms)), Attachments: make([]formtask.AttachmentBody, len(b.Embedded.Attachments))}
	if b.ServiceEdition != nil {
		c.ServiceEdition = &b.ServiceEdition.n
	}
	for i, f := range b.Embedded.Forms {
		c.Forms[i] = f.input()
	}
	for i, a := range b.Embedded.Attachments {
		c.Attachments[i] = a.input()
	}
	return c
}

func (f formBody) input() formtask.FormBody {
	return formtask.FormBody{Type: string(f.Type), DataFormatID: string(f.DataFormatID), DataFormatVersion: f.DataFormatVersion.n, FormData: string(f.FormData)}
}

func (a attachmentBody) input() formtask.AttachmentBody {
	return formtask.AttachmentBody{FileName: string(a.FileName), AttachmentType: string(a.AttachmentType), Data: string(a.Data), CheckSum: string(a.CheckSum)}
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
		return formtask.CheckDigest(d.svc, d.attachmentType, d.want, [sha256.Size]byte(sum), contentDigestHeader)
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
		return b, formtask.CheckDigest(svc, attachmentType, want, [sha256.Size]byte{}, contentDigestHeader)
	}
	b.digest = &streamDigest{svc: svc, attachmentType: attachmentType, want: want}
	return b, nil
}
