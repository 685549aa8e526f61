package api

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
)

// One receiver of {who}'s delegations, as the reportee's access managers see it (Altinn 2's delegation
// routes): what was delegated to it, its effective roles and rights, whether it may read an attachment,
// and the removal of a role or a right from it. A receiver is a party, named by receiverId as
// access.FindReceiver reads it. Only access managers (ADMAI) and main administrators (HADM) of {who} are
// answered; anyone else gets the same 403 before anything is looked up. A receiver that holds nothing for
// {who} is answered like one that does not exist (404).

// receiverResource is a receiver with the roles it holds for {who} and the rights they give.
type receiverResource struct {
	RightHolderID      string `json:"RightHolderId"`
	Name               string
	Type               string          // Person or Organization
	OrganizationNumber string          `json:",omitempty"`
	Roles              []roleResource  `xmlitem:"Role"`
	Rights             []rightResource `xmlitem:"Right"`
	Links              render.Links    `json:"_links"`
}

// receiverHolding resolves receiverId for an access manager of {who}: the receiver and what it holds
// for {who} through its roles and, with self, as the person {who} itself (the automatic base role).
func (h *authorizationHandlers) receiverHolding(c *gin.Context, self bool) (identity.Party, access.Holding, bool) {
	if _, ok := managedReportee(c); !ok {
		return identity.Party{}, access.Holding{}, false
	}
	receiver, holding, err := h.access.ReceiverHolding(c.Request.Context(), accessCaller(c), c.Param("receiverId"), self)
	if err != nil {
		abort(c, err)
		return receiver, holding, false
	}
	return receiver, holding, true
}

// showReceiver answers with the receiver of the path, its roles and rights: the delegated ones, or with
// effective the base role too.
func (h *authorizationHandlers) showReceiver(c *gin.Context, effective bool) {
	if _, ok := managedReportee(c); !ok {
		return
	}
	v, err := h.access.Receiver(c.Request.Context(), accessCaller(c), c.Param("receiverId"), effective)
	if err != nil {
		abort(c, err)
		return
	}
	r := receiverResource{RightHolderID: identity.ReporteeID(v.Party.ID), Name: v.Party.Name, Type: v.Party.Kind,
		OrganizationNumber: v.Party.OrganizationNumber, Roles: make([]roleResource, len(v.Roles)), Rights: rightResources(v.Rights)}
	definitions := h.authorizationURL(c) + "/roledefinitions/"
	for i, role := range v.Roles {
		r.Roles[i] = roleResourceOf(role, definitions, false)
	}
	delegations := h.authorizationURL(c) + "/delegations/" + url.PathEscape(c.Param("receiverId"))
	r.Links.Add("self", render.Link{Href: pageURL(c, -1)})
	r.Links.Add("roles", render.Link{Href: delegations + "/roles"})
	r.Links.Add("rights", render.Link{Href: delegations + "/rights"})
	respond(c, http.StatusOK, r)
}

// getReceiverDelegations shows what was delegated to the receiver: its roles for {who} and their rights.
func (h *authorizationHandlers) getReceiverDelegations(c *gin.Context) { h.showReceiver(c, false) }

// getReceiverReportee shows the receiver's effective roles and rights for {who}: its delegated roles and,
// for the person {who} itself, the automatic base role.
func (h *authorizationHandlers) getReceiverReportee(c *gin.Context) { h.showReceiver(c, true) }

func (h *authorizationHandlers) listReceiverRoles(c *gin.Context) {
	if _, holding, ok := h.receiverHolding(c, false); ok {
		h.listHeldRoles(c, holding)
	}
}

func (h *authorizationHandlers) listReceiverRights(c *gin.Context) {
	if _, holding, ok := h.receiverHolding(c, false); ok {
		h.listHeldRights(c, holding)
	}
}

// attachmentAccessResource tells whether a receiver may read an attachment: with Action (Read, or
// ArchiveRead for an archived message) on the message's service.
type attachmentAccessResource struct {
	RightHolderID      string `json:"RightHolderId"`
	MessageID          string `json:"MessageId"`
	AttachmentID       int64  `json:"AttachmentId"`
	ServiceCode        string
	ServiceEditionCode int
	Action             string
	IsAuthorized       bool
	Links              render.Links `json:"_links"`
}

var messageIDPattern = regexp.MustCompile(`^a[0-9]{1,18}$`)

// getAttachmentAccess tells whether the receiver may read an attachment of a message of {who}: by the
// same rule as the mailbox, its rights on the message's service (ArchiveRead when archived). Only a
// message the caller sees itself is answered for; any other is not there (404).
func (h *authorizationHandlers) getAttachmentAccess(c *gin.Context) {
	if _, ok := managedReportee(c); !ok {
		return
	}
	q := access.AttachmentQuery{Receiver: c.Param("receiverId"), MessageID: c.Query("messageId")}
	rawAttachment := c.Query("attachmentId")
	attachmentID, err := strconv.ParseInt(rawAttachment, 10, 64)
	switch {
	case q.MessageID == "":
		abort(c, problem.BadRequest("messageId is required"))
		return
	case !messageIDPattern.MatchString(q.MessageID):
		abort(c, problem.BadRequest("messageId must be a message id (a followed by digits)"))
		return
	case rawAttachment == "":
		abort(c, problem.BadRequest("attachmentId is required"))
		return
	case err != nil || attachmentID <= 0:
		abort(c, problem.BadRequest("attachmentId must be a positive integer"))
		return
	}
	q.AttachmentID = attachmentID
	a, err := h.access.AttachmentAccess(c.Request.Context(), accessCaller(c), q)
	if err != nil {
		abort(c, err)
		return
	}
	m := a.Message
	r := attachmentAccessResource{RightHolderID: identity.ReporteeID(a.Receiver.ID), MessageID: m.MessageID, AttachmentID: attachmentID,
		ServiceCode: m.ServiceCode, ServiceEditionCode: m.ServiceEdition, Action: string(a.Action), IsAuthorized: a.Authorized}
	r.Links.Add("self", render.Link{Href: pageURL(c, -1)})
	r.Links.Add("attachment", render.Link{Href: fmt.Sprintf("%s/%s/attachments/%d", messagesURL(c), m.MessageID, attachmentID)})
	r.Links.Add("rightholder", render.Link{Href: h.authorizationURL(c) + "/reportee/" + url.PathEscape(q.Receiver)})
	respond(c, http.StatusOK, r)
}

// Removals. A role is taken from a receiver on the same terms as it is delegated (mayDelegate); roles from
// the business register are not taken here. Each removal is one transaction with its audit entries.

func (h *authorizationHandlers) deleteReceiverRole(c *gin.Context) {
	h.removeRole(c, c.Param("receiverId"), c.Param("roleId"))
}

func (h *authorizationHandlers) deleteReceiverRight(c *gin.Context) {
	h.removeRight(c, c.Param("receiverId"), c.Param("ruleId"))
}

// deleteRightOfReceiver is DELETE rights/{receiverId}/rights/{ruleId}. The router gives the segment after
// /rights one name on every route, the rightId of DELETE rights/{rightId}: here it names the receiver.
func (h *authorizationHandlers) deleteRightOfReceiver(c *gin.Context) {
	h.removeRight(c, c.Param("rightId"), c.Param("ruleId"))
}

// deleteDelegation is the query form of the removals: ?receiverId=&roleId= or ?receiverId=&authzRuleId=.
func (h *authorizationHandlers) deleteDelegation(c *gin.Context) {
	receiver, roleID, ruleID := c.Query("receiverId"), c.Query("roleId"), c.Query("authzRuleId")
	switch {
	case receiver == "":
		abort(c, problem.BadRequest("receiverId is required"))
	case (roleID == "") == (ruleID == ""):
		abort(c, problem.BadRequest("name one thing to remove: roleId (a RoleId) or authzRuleId (a RightID)"))
	case roleID != "":
		h.removeRole(c, receiver, roleID)
	default:
		h.removeRight(c, receiver, ruleID)
	}
}

// removeRole takes the role RoleId rawRole from the receiver rawReceiver, by an access manager of {who}.
func (h *authorizationHandlers) removeRole(c *gin.Context, rawReceiver, rawRole string) {
	if _, ok := managedReportee(c); ok {
		noContent(c, h.access.RemoveRole(c.Request.Context(), accessCaller(c), rawReceiver, rawRole))
	}
}

// removeRight takes the right RightID rawRule from the receiver rawReceiver, by an access manager of {who}.
func (h *authorizationHandlers) removeRight(c *gin.Context, rawReceiver, rawRule string) {
	if _, ok := managedReportee(c); ok {
		noContent(c, h.access.RemoveRight(c.Request.Context(), accessCaller(c), rawReceiver, rawRule))
	}
}
