package api

import (
	"encoding/base64"
	"fmt"
	"io"
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
	Embedded       struct {
		Forms       []formBody       `json:"forms"`
		Attachments []attachmentBody `json:"attachments"`
	} `json:"_embedded"`
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
func (h *formTaskHandlers) revisionContent(c *gin.Context, svc store.ServiceDetail, b formTaskBody) ([]store.RevisionForm, []store.RevisionAttachment, error) {
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
		att, err := revisionAttachment(a, fmt.Sprintf("_embedded.attachments[%d]", i))
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

func revisionAttachment(a attachmentBody, where string) (store.RevisionAttachment, error) {
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
	return store.RevisionAttachment{Name: name, FileName: name, AttachmentType: typ, Data: data}, nil
}

// checkedBody passes a streamed attachment on while the check of its content accepts it; a refusal ends
// the read, so the store keeps nothing of a file refused on its first bytes.
type checkedBody struct {
	body  io.Reader
	check *formtask.ContentCheck
}

func (b checkedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		if _, refused := b.check.Write(p[:n]); refused != nil {
			return 0, refusal(refused)
		}
	}
	if err == io.EOF {
		if refused := b.check.Close(); refused != nil {
			return 0, refusal(refused)
		}
	}
	return n, err
}
