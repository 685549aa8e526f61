package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/clock"
)

// Role definitions (user-facing): the platform roles of type Altinn and the local roles of {who}. Local
// roles belong to their reportee, are changed only by its access managers, and grant nothing until they
// are delegated. Platform roles cannot be changed.

// userRoleDefinition is a RoleDefinition; Rights is present in the single view only.
type userRoleDefinition struct {
	RoleType         string
	RoleDefinitionID int `json:"RoleDefinitionId"`
	RoleName         string
	RoleDescription  string
	Rights           *[]rightResource `json:",omitempty" xmlitem:"Right"`
	Links            render.Links     `json:"_links"`
}

func (h *authorizationHandlers) roleDefinitionResource(c *gin.Context, d access.RoleDefinition) userRoleDefinition {
	r := userRoleDefinition{RoleType: d.RoleType, RoleDefinitionID: d.ID, RoleName: d.Name, RoleDescription: d.Description}
	r.Links.Add("self", render.Link{Href: h.roleDefinitionURL(c, d.ID)})
	return r
}

// listUserRoleDefinitions answers with a plain array of role definitions, as the interface says (in XML a
// list of resources).
func (h *authorizationHandlers) listUserRoleDefinitions(c *gin.Context) {
	party, _ := reporteeOf(c)
	defs, err := h.roles.ListReporteeRoleDefinitions(c.Request.Context(), party.ID)
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]userRoleDefinition, len(defs))
	for i, d := range defs {
		items[i] = h.roleDefinitionResource(c, d)
	}
	respond(c, http.StatusOK, items)
}

// loadRoleDefinition reads the definition of the path: any platform role, or a local role of {who}. Local
// roles of other reportees are answered like ones that do not exist.
func (h *authorizationHandlers) loadRoleDefinition(c *gin.Context) (access.RoleDefinition, bool) {
	raw := c.Param("roleDefinitionId")
	notThere := func() *problem.Problem {
		return problem.NotFound("there is no role definition %s for %q", raw, c.Param("who"))
	}
	id, err := strconv.Atoi(raw)
	if err != nil || id <= 0 {
		abort(c, notThere())
		return access.RoleDefinition{}, false
	}
	party, _ := reporteeOf(c)
	d, err := h.roles.RoleDefinitionOf(c.Request.Context(), party.ID, id)
	return d, found(c, err, notThere)
}

func (h *authorizationHandlers) getUserRoleDefinition(c *gin.Context) {
	d, ok := h.loadRoleDefinition(c)
	if !ok {
		return
	}
	respondTagged(c, h.roleDefinitionView(c, d))
}

// roleDefinitionView is the single view of a role definition, with its rights.
func (h *authorizationHandlers) roleDefinitionView(c *gin.Context, d access.RoleDefinition) userRoleDefinition {
	r := h.roleDefinitionResource(c, d)
	rights := rightResources(d.Rights)
	r.Rights = &rights
	return r
}

// unchanged holds a change of a role definition to its If-Match, if it has one: in the change's
// transaction the role definition is locked and its current ETag compared, so a change made meanwhile is
// answered 412. Nil without If-Match.
func (h *authorizationHandlers) unchanged(c *gin.Context) access.Precondition {
	if _, ok := c.Request.Header["If-Match"]; !ok {
		return nil
	}
	return func(d access.RoleDefinition) error {
		tag, err := resourceETag(c, h.roleDefinitionView(c, d))
		if err != nil {
			return err
		}
		return checkIfMatch(c, tag)
	}
}

// localRoleBody is the body of POST and PUT role definitions. RoleType (PUT) is accepted and ignored, a
// local role stays Local.
type localRoleBody struct {
	RoleName        *jsonText
	RoleDescription *jsonText
	RoleType        *jsonText        `json:",omitempty"`
	Rights          []localRightBody `json:",omitempty"`
	Embedded        *struct {
		Rights []localRightBody `json:"Rights"`
	} `json:"_embedded"`
}

type localRightBody struct {
	ServiceCode        jsonText
	ServiceEditionCode jsonText
	Action             jsonText
}

// localRoleRequest binds a local role body; access checks it.
func localRoleRequest(c *gin.Context) (access.LocalRoleRequest, error) {
	var b localRoleBody
	if err := bindJSON(c, &b); err != nil {
		return access.LocalRoleRequest{}, err
	}
	r := access.LocalRoleRequest{Name: (*string)(b.RoleName), Description: (*string)(b.RoleDescription), RightsAt: "Rights"}
	rights := b.Rights
	if b.Embedded != nil {
		rights, r.RightsAt = b.Embedded.Rights, "_embedded.Rights"
	}
	r.Rights = make([]access.RightRequest, len(rights))
	for i, right := range rights {
		r.Rights[i] = access.RightRequest{ServiceCode: string(right.ServiceCode), ServiceEditionCode: string(right.ServiceEditionCode),
			Action: string(right.Action)}
	}
	return r, nil
}

func (h *authorizationHandlers) createLocalRole(c *gin.Context) {
	party, ok := managedReportee(c)
	if !ok {
		return
	}
	r, err := localRoleRequest(c)
	if err != nil {
		abort(c, err)
		return
	}
	id, err := h.access.CreateLocalRole(c.Request.Context(), auditEntry(c, party.ID, "", clock.Now()), party.ID, r)
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", h.roleDefinitionURL(c, id))
	c.Status(http.StatusCreated)
}

// changeableRole loads the role definition of the path for a change by an access manager of {who}.
func (h *authorizationHandlers) changeableRole(c *gin.Context) (access.RoleDefinition, bool) {
	if _, ok := managedReportee(c); !ok {
		return access.RoleDefinition{}, false
	}
	return h.loadRoleDefinition(c)
}

func (h *authorizationHandlers) updateLocalRole(c *gin.Context) {
	d, ok := h.changeableRole(c)
	if !ok {
		return
	}
	r, err := localRoleRequest(c)
	if err != nil {
		abort(c, err)
		return
	}
	party, _ := reporteeOf(c)
	if err := h.access.UpdateLocalRole(c.Request.Context(), auditEntry(c, party.ID, "", clock.Now()), party.ID, d, r, h.unchanged(c)); err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", h.roleDefinitionURL(c, d.ID))
	c.Status(http.StatusNoContent)
}

// deleteLocalRole deletes a local role and, with it, every delegation of it (each recorded in the audit log).
func (h *authorizationHandlers) deleteLocalRole(c *gin.Context) {
	d, ok := h.changeableRole(c)
	if !ok {
		return
	}
	party, _ := reporteeOf(c)
	if err := h.access.DeleteLocalRole(c.Request.Context(), auditEntry(c, party.ID, "", clock.Now()), party.ID, d, h.unchanged(c)); err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
