package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
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
func roleResourceOf(r store.HeldRole, definitions string, code bool) roleResource {
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

func rightResourceOf(r store.Right) rightResource {
	return rightResource{RightID: r.RightID, RightType: "Service", ServiceCode: r.ServiceCode, ServiceEditionCode: r.ServiceEdition,
		Action: r.Action, RightSourceType: "RoleTypeRights", IsDelegatable: r.IsDelegatable}
}

func rightResources(rights []store.Right) []rightResource {
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
func userHolding(c *gin.Context) store.Holding {
	party, rights := reporteeOf(c)
	return store.Holding{Holder: principalOf(c).Subject(), ReporteeID: party.ID, Self: rights.All}
}

// listUserRoles lists the roles the logged-in user holds for {who}, the automatic base role first.
func (h *authorizationHandlers) listUserRoles(c *gin.Context) { h.listHeldRoles(c, userHolding(c)) }

// listUserRights lists the rights the logged-in user has for {who} through its roles.
func (h *authorizationHandlers) listUserRights(c *gin.Context) { h.listHeldRights(c, userHolding(c)) }

// listHeldRoles answers with a page of the roles of holding, the automatic base role first.
func (h *authorizationHandlers) listHeldRoles(c *gin.Context, holding store.Holding) {
	definitions := h.authorizationURL(c) + "/roledefinitions/"
	coll, ok := listPage(c, "roles", func(lq store.ListQuery) ([]store.HeldRole, bool, error) {
		return h.q.ListHeldRoles(c.Request.Context(), holding, lq, -1)
	}, func(r store.HeldRole) roleResource { return roleResourceOf(r, definitions, false) })
	if ok {
		respond(c, http.StatusOK, coll)
	}
}

// listHeldRights answers with a page of the rights of holding.
func (h *authorizationHandlers) listHeldRights(c *gin.Context, holding store.Holding) {
	coll, ok := listPage(c, "rights", func(lq store.ListQuery) ([]store.Right, bool, error) {
		return h.q.ListHeldRights(c.Request.Context(), holding, lq)
	}, rightResourceOf)
	if ok {
		respond(c, http.StatusOK, coll)
	}
}

// managedReportee is the party {who} when the caller is its access manager; to anyone else it answers 403.
func managedReportee(c *gin.Context) (store.Party, bool) {
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

// roleRefused is the one answer to a role delete the caller may not make, whatever exists.
func roleRefused(c *gin.Context) *problem.Problem {
	return problem.New(http.StatusForbidden, "not-access-manager",
		"role %s of %q is not one you may delete: only its holder or an access manager (ADMAI) or main administrator (HADM) for its reportee may",
		c.Param("roleId"), c.Param("who"))
}

// managesRolesOf tells whether the caller may learn which roles {who} has: an access manager of the
// party {who}, or the login {who} itself.
func (h *authorizationHandlers) managesRolesOf(c *gin.Context) bool {
	if v, isLogin := c.Get(ctxWhoLogin); isLogin {
		return principalOf(c).Subject().LoginID == v.(store.Login).ID
	}
	_, rights := reporteeOf(c)
	return rights.AccessManager()
}

// deleteUserRole deletes a role. {who} is the reportee the role is held for or its holder (a party, or a
// login's user name). The holder of a role may delete it; anyone else must be access manager for the
// reportee. Roles from the business register (RoleType External) are not deleted here. A caller who is
// neither gets the same 403 whether or not {who} or the role exists (roleRefused); only an access
// manager of the party {who} learns that a role is not there (404).
func (h *authorizationHandlers) deleteUserRole(c *gin.Context) {
	ctx := c.Request.Context()
	id, err := strconv.ParseInt(c.Param("roleId"), 10, 64)
	notThere := func() {
		if h.managesRolesOf(c) {
			abort(c, problem.NotFound("there is no role %s for %q", c.Param("roleId"), c.Param("who")))
			return
		}
		abort(c, roleRefused(c))
	}
	if err != nil || id <= 0 {
		notThere()
		return
	}
	role, err := h.q.GetDelegatedRole(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		notThere()
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	var (
		belongs bool
		rights  identity.RightSet
		known   bool
	)
	if v, ok := c.Get(ctxWhoLogin); ok {
		l := v.(store.Login)
		belongs = role.HolderLoginID == l.ID || (l.PersonID != 0 && (role.HolderPartyID == l.PersonID || role.ReporteeID == l.PersonID))
	} else {
		party, r := reporteeOf(c)
		belongs = role.ReporteeID == party.ID || role.HolderPartyID == party.ID
		rights, known = r, role.ReporteeID == party.ID
	}
	if !belongs {
		notThere()
		return
	}
	p := principalOf(c)
	subject := p.Subject()
	holder := (subject.PartyID != 0 && subject.PartyID == role.HolderPartyID) || (subject.LoginID != 0 && subject.LoginID == role.HolderLoginID)
	if !holder {
		if !known {
			if rights, err = h.rights.For(ctx, p, role.ReporteeID); err != nil {
				abort(c, err)
				return
			}
		}
		if !rights.AccessManager() {
			abort(c, roleRefused(c))
			return
		}
	}
	h.deleteRole(c, role, nil)
}

// deleteRole deletes a role in one transaction with its audit entry, when allowed (if not nil) lets the
// caller. Roles from the business register (RoleType External) are not deleted here.
func (h *authorizationHandlers) deleteRole(c *gin.Context, role store.DelegatedRole, allowed func(label string) error) {
	label := access.RoleLabel(role.RoleDefinitionID, role.RoleDefinitionCode, role.RoleName)
	if role.RoleType == "External" {
		abort(c, roleFromRegister(role.RoleID, label))
		return
	}
	if allowed != nil {
		if err := allowed(label); err != nil {
			abort(c, err)
			return
		}
	}
	e := auditEntry(c, role.ReporteeID, store.AuditDeleteRole, clock.Now())
	e.RoleID, e.RoleDefinitionID, e.RightHolder = role.RoleID, role.RoleDefinitionID, role.HolderName
	e.Summary = fmt.Sprintf("deleted role %s held by %s", label, role.HolderName)
	h.deleteAudited(c, e, access.RoleDeleted(h.events, role), func(q *store.Queries) error { return q.DeleteDelegatedRole(c.Request.Context(), role.RoleID) })
}

func roleFromRegister(id int64, label string) *problem.Problem {
	return problem.New(http.StatusForbidden, "role-from-register", "role %d (%s) comes from the business register and cannot be deleted here", id, label)
}

// deleteUserRight deletes a right. Every right comes from a role definition (RightSourceType
// RoleTypeRights); only the rights of the reportee's own local roles can be deleted, by its access managers.
// A right of a platform role is removed by deleting the role that gives it.
func (h *authorizationHandlers) deleteUserRight(c *gin.Context) {
	ctx := c.Request.Context()
	party, ok := managedReportee(c)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(c.Param("rightId"), 10, 64)
	notThere := func() { abort(c, problem.NotFound("there is no right %s for %q", c.Param("rightId"), c.Param("who"))) }
	if err != nil || id <= 0 {
		notThere()
		return
	}
	r, err := h.q.GetDefinedRight(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.OwnerPartyID != 0 && r.OwnerPartyID != party.ID) {
		notThere()
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	if r.OwnerPartyID == 0 {
		abort(c, problem.New(http.StatusForbidden, "platform-role",
			"right %d belongs to platform role %d (%s), which cannot be changed; delete the role instead", id, r.RoleDefinitionID, r.RoleName))
		return
	}
	e := auditEntry(c, party.ID, store.AuditDeleteRight, clock.Now())
	e.RightID, e.RoleDefinitionID = id, r.RoleDefinitionID
	e.Summary = fmt.Sprintf("deleted right %s from local role %s", access.RightLabel(r.Right), access.RoleLabel(r.RoleDefinitionID, "", r.RoleName))
	changed := h.events.RoleDefinitionEvent(events.RoleDefinitionChanged, events.RoleDefinition{RoleDefinitionID: r.RoleDefinitionID,
		ReporteeID: party.ID, Name: r.RoleName})
	h.deleteAudited(c, e, changed, func(q *store.Queries) error { return q.DeleteLocalRight(ctx, id) })
}

// deleteAudited runs a delete, its audit entry and its event in one transaction and answers 204.
func (h *authorizationHandlers) deleteAudited(c *gin.Context, e audit.Entry, event store.Event, del func(q *store.Queries) error) {
	ctx := c.Request.Context()
	err := h.access.Change(ctx, func(q *store.Queries) error {
		if err := del(q); err != nil {
			return err
		}
		if err := q.AppendAudit(ctx, e); err != nil {
			return err
		}
		return q.AppendEvents(ctx, event)
	})
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
	coll, ok := listPage(c, "auditlog", func(lq store.ListQuery) ([]audit.Entry, bool, error) {
		return h.q.ListAudit(c.Request.Context(), party.ID, lq)
	}, func(e audit.Entry) auditEntryResource {
		return auditEntryResource{AuditEntryID: e.ID, Time: render.TimestampOf(e.At), Action: e.Action, Actor: e.ActorName,
			Authentication: e.ActorMethod, ApiKey: e.APIKeyName, RoleID: e.RoleID, RoleDefinitionID: e.RoleDefinitionID,
			RightID: e.RightID, RightHolder: e.RightHolder, Summary: e.Summary, RequestID: e.RequestID}
	})
	if ok {
		respond(c, http.StatusOK, coll)
	}
}
