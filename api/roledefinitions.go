package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/store"
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
	d, err := h.roles.GetRoleDefinition(c.Request.Context(), id, "", "")
	if err == nil && d.Local() && d.OwnerPartyID != party.ID {
		err = store.ErrNotFound
	}
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

// localRoleActions maps the actions of role creation (and, for a client that sends back what it read, the
// names rights are shown with) to the stored action.
var localRoleActions = map[string]string{
	"read": "Read", "write": "Write", "delete": "Delete", "sign": "Sign",
	"readarchive": "ArchiveRead", "deletearchive": "ArchiveDelete",
	"archiveread": "ArchiveRead", "archivedelete": "ArchiveDelete",
}

// maxLocalRoleRights bounds the rights of a local role; its texts are held to the field limits (inputs.go).
const maxLocalRoleRights = 200

// readLocalRole binds and checks a local role body, answering 400 with every problem found.
func (h *authorizationHandlers) readLocalRole(c *gin.Context) (access.LocalRole, error) {
	var b localRoleBody
	if err := bindJSON(c, &b); err != nil {
		return access.LocalRole{}, err
	}
	var (
		l    access.LocalRole
		errs []string
	)
	if b.RoleName == nil || strings.TrimSpace(string(*b.RoleName)) == "" {
		errs = append(errs, "RoleName is required")
	} else {
		l.Name = strings.TrimSpace(string(*b.RoleName))
	}
	if b.RoleDescription != nil {
		l.Description = strings.TrimSpace(string(*b.RoleDescription))
	}
	rights, field := b.Rights, "Rights"
	if b.Embedded != nil {
		rights, field = b.Embedded.Rights, "_embedded.Rights"
	}
	switch {
	case len(rights) == 0:
		errs = append(errs, "_embedded.Rights must hold at least one right {ServiceCode, ServiceEditionCode, Action}")
	case len(rights) > maxLocalRoleRights:
		errs = append(errs, fmt.Sprintf("_embedded.Rights holds more than %d rights", maxLocalRoleRights))
	}
	seen := map[access.RightSpec]bool{}
	var keys []store.ServiceKey
	var at []string
	for i, r := range rights {
		where := fmt.Sprintf("%s[%d]", field, i)
		code := strings.TrimSpace(string(r.ServiceCode))
		codeOK := code != "" && len(code) <= 64
		edition, err := strconv.Atoi(strings.TrimSpace(string(r.ServiceEditionCode)))
		editionOK := err == nil && edition > 0
		action, actionOK := localRoleActions[strings.ToLower(strings.TrimSpace(string(r.Action)))]
		if !codeOK {
			errs = append(errs, where+".ServiceCode is required")
		}
		if !editionOK {
			errs = append(errs, where+".ServiceEditionCode must be a positive integer")
		}
		if !actionOK {
			errs = append(errs, fmt.Sprintf("%s.Action %q is not one of Read, Write, Delete, Sign, ReadArchive, DeleteArchive", where, r.Action))
		}
		if !codeOK || !editionOK || !actionOK {
			continue
		}
		spec := access.RightSpec{ServiceCode: code, ServiceEdition: edition, Action: action}
		if seen[spec] {
			continue // the same right twice is the same right
		}
		seen[spec] = true
		l.Rights = append(l.Rights, spec)
		keys = append(keys, store.ServiceKey{Code: code, Edition: edition})
		at = append(at, where)
	}
	if len(keys) > 0 {
		unknown, err := h.roles.UnknownServices(c.Request.Context(), keys)
		if err != nil {
			return l, err
		}
		for _, u := range unknown {
			for i, k := range keys {
				if k == u {
					errs = append(errs, fmt.Sprintf("%s: there is no service %s edition %d", at[i], u.Code, u.Edition))
					break
				}
			}
		}
	}
	if len(errs) > 0 {
		p := problem.BadRequest("the role definition is not valid: %s", strings.Join(errs, "; "))
		p.Errors = errs
		return l, p
	}
	return l, nil
}

func (h *authorizationHandlers) createLocalRole(c *gin.Context) {
	party, ok := managedReportee(c)
	if !ok {
		return
	}
	l, err := h.readLocalRole(c)
	if err != nil {
		abort(c, err)
		return
	}
	id, err := h.access.CreateLocalRole(c.Request.Context(), auditEntry(c, party.ID, "", clock.Now()), party.ID, l)
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", h.roleDefinitionURL(c, id))
	c.Status(http.StatusCreated)
}

// changeableRole loads the local role of the path for a change by an access manager of {who}: platform
// roles get 403.
func (h *authorizationHandlers) changeableRole(c *gin.Context) (access.RoleDefinition, bool) {
	if _, ok := managedReportee(c); !ok {
		return access.RoleDefinition{}, false
	}
	d, ok := h.loadRoleDefinition(c)
	if !ok {
		return d, false
	}
	if !d.Local() {
		abort(c, problem.New(http.StatusForbidden, "platform-role", "role definition %s is a platform role; only local roles can be changed or deleted",
			access.RoleLabel(d.ID, d.Code, d.Name)))
		return d, false
	}
	return d, true
}

func (h *authorizationHandlers) updateLocalRole(c *gin.Context) {
	d, ok := h.changeableRole(c)
	if !ok {
		return
	}
	l, err := h.readLocalRole(c)
	if err != nil {
		abort(c, err)
		return
	}
	party, _ := reporteeOf(c)
	if err := h.access.UpdateLocalRole(c.Request.Context(), auditEntry(c, party.ID, "", clock.Now()), party.ID, d.ID, l, h.unchanged(c)); err != nil {
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
