package api

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// The Role and Right resources, as the user-facing and the service-owner areas both render them; the
// roles and rights the logged-in user holds for {who}, their deletion, and the audit log of changes.

// roleResource is a Role held for a reportee. The automatic base role of a party acting for itself has
// no RoleId and no Delegator, and a null DelegatedTime. RoleDefinitionCode is shown by the service-owner
// area only (set, even when empty, by roleResourceOf with code), in the place its interface lists it.
type roleResource struct {
	RoleID             int64 `json:"RoleId,omitempty"`
	RoleType           string
	RoleDefinitionID   int `json:"RoleDefinitionId"`
	RoleName           string
	RoleDescription    string
	Delegator          string `json:",omitempty"`
	DelegatedTime      *render.Timestamp
	RoleDefinitionCode *string      `json:",omitempty"`
	Links              render.Links `json:"_links"`
}

// roleResourceOf renders a held role whose definition is at definitions + its id; code shows its
// RoleDefinitionCode.
func roleResourceOf(r access.HeldRole, definitions string, code bool) roleResource {
	res := roleResource{RoleID: r.RoleID, RoleType: r.RoleType, RoleDefinitionID: r.RoleDefinitionID, RoleName: r.RoleName,
		RoleDescription: r.RoleDescription, Delegator: r.Delegator, DelegatedTime: render.TimestampOrNull(r.DelegatedTime)}
	if code {
		res.RoleDefinitionCode = &r.RoleDefinitionCode
	}
	res.Links.Add("roledefinition", render.Link{Href: definitions + strconv.Itoa(r.RoleDefinitionID)})
	return res
}

// rightResource is a Right. Every right comes from a role definition (RightSourceType RoleTypeRights).
type rightResource struct {
	RightID            int64
	RightType          string
	ServiceCode        string
	ServiceEditionCode int
	Action             string
	RightSourceType    string
	IsDelegatable      bool
}

func rightResourceOf(r access.Right) rightResource {
	return rightResource{RightID: r.RightID, RightType: "Service", ServiceCode: r.ServiceCode, ServiceEditionCode: r.ServiceEdition,
		Action: r.Action, RightSourceType: "RoleTypeRights", IsDelegatable: r.IsDelegatable}
}

func rightResources(rights []access.Right) []rightResource {
	out := make([]rightResource, len(rights))
	for i, r := range rights {
		out[i] = rightResourceOf(r)
	}
	return out
}

const ctxWhoLogin = "postbox.whoLogin"

// authorizationURL is the address of the authorization area for {who} as the client wrote it.
func (h *authorizationHandlers) authorizationURL(c *gin.Context) string {
	return baseURL(c) + "/api/" + url.PathEscape(c.Param("who")) + "/authorization"
}

func (h *authorizationHandlers) roleDefinitionURL(c *gin.Context, id int) string {
	return h.authorizationURL(c) + "/roledefinitions/" + strconv.Itoa(id)
}

// userHolding is what the logged-in user holds for {who}.
func userHolding(c *gin.Context) access.Holding {
	party, rights := reporteeOf(c)
	return access.Holding{Holder: principalOf(c).Subject(), ReporteeID: party.ID, Self: rights.All}
}

// listUserRoles lists the roles the logged-in user holds for {who}, the automatic base role first.
func (h *authorizationHandlers) listUserRoles(c *gin.Context) { h.listHeldRoles(c, userHolding(c)) }

// listUserRights lists the rights the logged-in user has for {who} through its roles.
func (h *authorizationHandlers) listUserRights(c *gin.Context) { h.listHeldRights(c, userHolding(c)) }

// listHeldRoles answers with a page of the roles of holding, the automatic base role first.
func (h *authorizationHandlers) listHeldRoles(c *gin.Context, holding access.Holding) {
	definitions := h.authorizationURL(c) + "/roledefinitions/"
	respondList(c, "roles", func(lq store.ListQuery) ([]access.HeldRole, bool, error) {
		return h.roles.ListHeldRoles(c.Request.Context(), holding, lq, -1)
	}, func(r access.HeldRole) roleResource { return roleResourceOf(r, definitions, false) }, nil)
}

// listHeldRights answers with a page of the rights of holding.
func (h *authorizationHandlers) listHeldRights(c *gin.Context, holding access.Holding) {
	respondList(c, "rights", func(lq store.ListQuery) ([]access.Right, bool, error) {
		return h.roles.ListHeldRights(c.Request.Context(), holding, lq)
	}, rightResourceOf, nil)
}

// managedReportee is the party {who} when the caller is its access manager; to anyone else it answers 403.
func managedReportee(c *gin.Context) (identity.Party, bool) {
	party, rights := reporteeOf(c)
	if !rights.AccessManager() {
		abort(c, notAccessManager(c))
		return party, false
	}
	return party, true
}

func notAccessManager(c *gin.Context) *problem.Problem {
	return problem.New(http.StatusForbidden, "not-access-manager",
		"you are neither access manager (ADMAI) nor main administrator (HADM) for %q", c.Param("who"))
}

// auditEntry starts an audit entry for a change the caller makes for the reportee.
func auditEntry(c *gin.Context, reporteeID int64, action string, at time.Time) audit.Entry {
	p := principalOf(c)
	subject := p.Subject()
	key, _ := apiKeyOf(c)
	return audit.Entry{At: at, ReporteeID: reporteeID, ActorName: p.Name, ActorPartyID: subject.PartyID,
		ActorLoginID: subject.LoginID, ActorMethod: string(p.Method), APIKeyName: key.Name, RequestID: requestID(c), Action: action}
}

// accessCaller is the caller as the access room knows it, acting for the party {who}.
func accessCaller(c *gin.Context) access.Caller {
	party, rights := reporteeOf(c)
	return access.Caller{Actor: auditEntry(c, party.ID, "", time.Time{}), Principal: principalOf(c), Rights: rights, Who: c.Param("who")}
}

// deleteUserRole deletes a role. {who} is the reportee the role is held for or its holder (a party, or a
// login's user name); access.DeleteRole says who may.
func (h *authorizationHandlers) deleteUserRole(c *gin.Context) {
	var (
		caller access.Caller
		who    access.Who
	)
	if v, isLogin := c.Get(ctxWhoLogin); isLogin {
		login := v.(identity.Login)
		caller = access.Caller{Actor: auditEntry(c, 0, "", time.Time{}), Principal: principalOf(c), Who: c.Param("who")}
		who.Login = &login
	} else {
		caller = accessCaller(c)
		who.Party, _ = reporteeOf(c)
	}
	noContent(c, h.access.DeleteRole(c.Request.Context(), caller, who, c.Param("roleId")))
}

// deleteUserRight deletes a right of one of the reportee's local roles, for its access managers.
func (h *authorizationHandlers) deleteUserRight(c *gin.Context) {
	if _, ok := managedReportee(c); ok {
		noContent(c, h.access.DeleteLocalRight(c.Request.Context(), accessCaller(c), c.Param("rightId")))
	}
}

// noContent answers 204 to a change that completed, else the problem of err.
func noContent(c *gin.Context, err error) {
	if err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// auditEntryResource is one line of the authorization audit log.
type auditEntryResource struct {
	AuditEntryID     int64 `json:"AuditEntryId"`
	Time             render.Timestamp
	Action           string
	Actor            string
	Authentication   string
	ApiKey           string //nolint:revive // the interface's spelling
	RoleID           int64  `json:"RoleId,omitempty"`
	RoleDefinitionID int    `json:"RoleDefinitionId,omitempty"`
	RightID          int64  `json:"RightID,omitempty"`
	RightHolder      string `json:",omitempty"`
	Summary          string
	RequestID        string `json:"RequestId"`
}

// listAuditLog lists the authorization changes made for {who}, newest first, for its access managers.
func (h *authorizationHandlers) listAuditLog(c *gin.Context) {
	party, ok := managedReportee(c)
	if !ok {
		return
	}
	respondList(c, "auditlog", func(lq store.ListQuery) ([]audit.Entry, bool, error) {
		return h.roles.ListAudit(c.Request.Context(), party.ID, lq)
	}, func(e audit.Entry) auditEntryResource {
		return auditEntryResource{AuditEntryID: e.ID, Time: render.TimestampOf(e.At), Action: e.Action, Actor: e.ActorName,
			Authentication: e.ActorMethod, ApiKey: e.APIKeyName, RoleID: e.RoleID, RoleDefinitionID: e.RoleDefinitionID,
			RightID: e.RightID, RightHolder: e.RightHolder, Summary: e.Summary, RequestID: e.RequestID}
	}, nil)
}
