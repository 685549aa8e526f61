package api

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
)

// Signing by several (formtask/signing.go): a task's signees and signatures under the task's mailbox, and
// the signee's own list of tasks to sign under theirs (/api/{who}/signing), where a named signee reads
// and signs a task of a party they hold no rights for.

type signeeEntry struct {
	Type               string
	Name               string
	ReporteeID         string `json:"ReporteeId"`
	OrganizationNumber string `json:",omitempty"`
}

type signeesResource struct {
	Signees []signeeEntry `xmlitem:"Signee"`
	// SigningDeadline is the deadline set with the signees (null: the service's SigningDeadlineDays).
	SigningDeadline *render.Timestamp
	Links           render.Links `json:"_links"`
}

func signeeEntries(list []formtask.TaskSignee) []signeeEntry {
	out := make([]signeeEntry, len(list))
	for i, s := range list {
		out[i] = signeeEntry{Type: s.Kind, Name: s.Name, ReporteeID: identity.ReporteeID(s.PartyID), OrganizationNumber: s.OrganizationNumber}
	}
	return out
}

// signeesBody is PUT …/signees: the whole list, a person as SocialSecurityNumber and LastName, an
// organization as OrganizationNumber (and Name).
type signeesBody struct {
	SigningDeadline *dateTimeField `json:",omitempty"`
	Signees         []struct {
		SocialSecurityNumber jsonText `json:",omitempty"`
		LastName             jsonText `json:",omitempty"`
		OrganizationNumber   jsonText `json:",omitempty"`
		Name                 jsonText `json:",omitempty"`
	}
}

func (h *formTaskHandlers) getSignees(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	h.renderSignees(c, ft)
}

// renderSignees answers the task's signees and signing deadline.
func (h *formTaskHandlers) renderSignees(c *gin.Context, ft formTaskCall) {
	ctx := c.Request.Context()
	list, err := ft.tasks.Signees(ctx, ft.Task)
	if err != nil {
		abort(c, err)
		return
	}
	deadline, err := ft.tasks.SigningDeadline(ctx, ft.Task)
	if err != nil {
		abort(c, err)
		return
	}
	r := signeesResource{Signees: signeeEntries(list), SigningDeadline: render.TimestampOrNull(deadline)}
	r.Links.Add("self", render.Link{Href: fmt.Sprintf("%s/%s/signees", messagesURL(c), c.Param("messageId"))})
	respond(c, http.StatusOK, r)
}

// putSignees names the task's signees while it is in Utfylling: 200 with the list.
func (h *formTaskHandlers) putSignees(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	var body signeesBody
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	if body.Signees == nil {
		abort(c, problem.BadRequest("Signees is required (an empty list names none)"))
		return
	}
	names := make([]formtask.SigneeName, len(body.Signees))
	for i, s := range body.Signees {
		names[i] = formtask.SigneeName{SocialSecurityNumber: string(s.SocialSecurityNumber), LastName: string(s.LastName),
			OrganizationNumber: string(s.OrganizationNumber), Name: string(s.Name)}
	}
	if _, err := ft.tasks.PutSignees(c.Request.Context(), ft.Task, ft.Caller, names, body.SigningDeadline.time()); err != nil {
		abort(c, err)
		return
	}
	h.renderSignees(c, ft)
}

type signatureEntry struct {
	SignatureID          int64 `json:"SignatureId"`
	Step                 int
	SignerName           string
	SignerReporteeID     string `json:"SignerReporteeId"`
	OnBehalfOf           string
	OnBehalfOfReporteeID string `json:"OnBehalfOfReporteeId"`
	SignedDateTime       render.Timestamp
	ContentDigest        string
	VoidedDateTime       *render.Timestamp
}

type signingStepEntry struct {
	Step               int
	Signees            string
	RoleDefinitionCode string `json:",omitempty"`
	Needed, Signed     int
}

// signaturesResource is a task's signing: its steps with what each needs and has, the step now signed
// (0: none), the digest of the content a signature signs, and the signatures, the voided ones too.
type signaturesResource struct {
	MessageID     string `json:"MessageId"`
	Status        string
	CurrentStep   int
	ContentDigest string
	Steps         []signingStepEntry `xmlitem:"Step"`
	Signatures    []signatureEntry   `xmlitem:"Signature"`
	Signees       []signeeEntry      `xmlitem:"Signee"`
	Links         render.Links       `json:"_links"`
}

func signaturesOf(task formtask.Task, st formtask.SigningState) signaturesResource {
	r := signaturesResource{MessageID: task.MessageID, Status: task.Status, CurrentStep: st.CurrentStep, ContentDigest: st.ContentDigest,
		Steps: make([]signingStepEntry, len(st.Steps)), Signatures: make([]signatureEntry, len(st.Signatures)), Signees: signeeEntries(st.Signees)}
	for i, s := range st.Steps {
		r.Steps[i] = signingStepEntry{Step: i + 1, Signees: s.Signees, RoleDefinitionCode: s.RoleDefinitionCode, Needed: s.Needed, Signed: s.Signed}
	}
	for i, s := range st.Signatures {
		r.Signatures[i] = signatureEntry{SignatureID: s.ID, Step: s.Step, SignerName: s.SignerName, SignerReporteeID: identity.ReporteeID(s.SignerPartyID),
			OnBehalfOf: s.OnBehalfOfName, OnBehalfOfReporteeID: identity.ReporteeID(s.OnBehalfOfPartyID), SignedDateTime: render.TimestampOf(s.SignedAt),
			ContentDigest: s.ContentDigest, VoidedDateTime: render.TimestampOrNull(s.VoidedAt)}
	}
	return r
}

func (h *formTaskHandlers) getSignatures(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	st, err := ft.tasks.Signing(c.Request.Context(), ft.Task)
	if err != nil {
		abort(c, err)
		return
	}
	r := signaturesOf(ft.Task, st)
	r.Links.Add("self", render.Link{Href: fmt.Sprintf("%s/%s/signatures", messagesURL(c), ft.Message.MessageID)})
	r.Links.Add("message", render.Link{Href: fmt.Sprintf("%s/%s", messagesURL(c), ft.Message.MessageID)})
	respond(c, http.StatusOK, r)
}

// deleteSignatures sends a task in Signering back to Utfylling, voiding its signatures: 200 with the task.
func (h *formTaskHandlers) deleteSignatures(c *gin.Context) {
	ft, ok := h.beginFormTask(c)
	if !ok {
		return
	}
	res, err := ft.tasks.ReturnToFilling(c.Request.Context(), ft.Task, ft.Caller)
	if err != nil {
		abort(c, err)
		return
	}
	h.renderChanged(c, http.StatusOK, ft.Message, res)
}

// signingEntry is a task a signee is asked to sign.
type signingEntry struct {
	MessageID      string `json:"MessageId"`
	Subject        string
	ReporteeID     string `json:"ReporteeId"`
	ReporteeName   string
	ServiceCode    string
	ServiceEdition int
	LastChanged    render.Timestamp
	Links          render.Links `json:"_links"`
}

// signingURL is the list of tasks {who} is asked to sign.
func signingURL(c *gin.Context) string { return baseURL(c) + "/api/" + c.Param("who") + "/signing" }

// beginSigning is what every signee route starts from: the form-task service and the caller as the
// signee {who}, or the request answered.
func (h *formTaskHandlers) beginSigning(c *gin.Context) (*formtask.Service, formtask.Signee, bool) {
	tasks, ok := h.formTasksOrUnavailable(c)
	if !ok {
		return nil, formtask.Signee{}, false
	}
	party, rights := reporteeOf(c)
	signee, err := formtask.SigneeOf(principalOf(c), party.ID, rights, c.Param("who"))
	if err != nil {
		abort(c, err)
		return nil, signee, false
	}
	return tasks, signee, true
}

// listSigning lists the tasks in Signering that {who} is asked to sign.
func (h *formTaskHandlers) listSigning(c *gin.Context) {
	tasks, signee, ok := h.beginSigning(c)
	if !ok {
		return
	}
	list, err := tasks.TasksToSign(c.Request.Context(), signee)
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]signingEntry, len(list))
	for i, t := range list {
		items[i] = signingEntry{MessageID: t.MessageID, Subject: t.Subject, ReporteeID: identity.ReporteeID(t.ReporteeID), ReporteeName: t.ReporteeName,
			ServiceCode: t.ServiceCode, ServiceEdition: t.ServiceEdition, LastChanged: render.TimestampOf(t.LastChanged)}
		items[i].Links.Add("self", render.Link{Href: signingURL(c) + "/" + t.MessageID})
	}
	r := render.Collection{Embedded: render.EmbedList("signing", items)}
	r.Links.Add("self", render.Link{Href: signingURL(c)})
	respond(c, http.StatusOK, r)
}

// signingTaskResource is a task as its signee reads it: its signing, and its forms' data, what they sign.
type signingTaskResource struct {
	signaturesResource
	Subject      string
	ReporteeName string
	Forms        []signingForm `xmlitem:"Form"`
}

type signingForm struct {
	Type, DataFormatID, Name string
	DataFormatVersion        int
	FormData                 string
}

func (h *formTaskHandlers) getSigningTask(c *gin.Context) {
	tasks, signee, ok := h.beginSigning(c)
	if !ok {
		return
	}
	v, err := tasks.ReadToSign(c.Request.Context(), signee, c.Param("messageId"))
	if err != nil {
		abort(c, err)
		return
	}
	r := signingTaskResource{signaturesResource: signaturesOf(v.Task, v.Signing), Subject: v.Task.Subject, ReporteeName: v.ReporteeName,
		Forms: make([]signingForm, len(v.Forms))}
	for i, f := range v.Forms {
		r.Forms[i] = signingForm{Type: f.Type, DataFormatID: f.DataFormatID, DataFormatVersion: f.DataFormatVersion, Name: f.Name, FormData: f.FormData}
	}
	r.Links.Add("self", render.Link{Href: signingURL(c) + "/" + v.Task.MessageID})
	respond(c, http.StatusOK, r)
}

// signBody is POST …/signing/{messageId}: optionally the ContentDigest the signee read (from GET), so a
// signature of content that changed since is refused (412).
type signBody struct {
	ContentDigest jsonText `json:",omitempty"`
}

// signTask records the caller's signature as the signee {who}: 200 with the task's outcome.
func (h *formTaskHandlers) signTask(c *gin.Context) {
	tasks, signee, ok := h.beginSigning(c)
	if !ok {
		return
	}
	var body signBody
	if c.Request.ContentLength != 0 {
		if err := bindJSON(c, &body); err != nil {
			abort(c, err)
			return
		}
	}
	ctx := c.Request.Context()
	task, err := tasks.TaskToSign(ctx, signee, c.Param("messageId"), false)
	if err != nil {
		abort(c, err)
		return
	}
	res, err := tasks.Sign(ctx, task, signee.Signer, string(body.ContentDigest))
	if err != nil {
		abort(c, err)
		return
	}
	out := signedResource{MessageID: task.MessageID, Outcome: string(res.Outcome), Status: res.Status, ArchiveReference: res.ArchiveReference}
	out.Links.Add("self", render.Link{Href: signingURL(c) + "/" + task.MessageID})
	respond(c, http.StatusOK, out)
}

type signedResource struct {
	MessageID        string `json:"MessageId"`
	Outcome          string
	Status           string
	ArchiveReference string       `json:",omitempty"`
	Links            render.Links `json:"_links"`
}
