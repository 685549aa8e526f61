package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
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

func (h *authorizationHandlers) roleDefinitionResource(c *gin.Context, d store.RoleDefinition) userRoleDefinition {
	r := userRoleDefinition{RoleType: d.RoleType, RoleDefinitionID: d.ID, RoleName: d.Name, RoleDescription: d.Description}
	r.Links.Add("self", render.Link{Href: h.roleDefinitionURL(c, d.ID)})
	return r
}

// listUserRoleDefinitions answers with a plain array of role definitions, as the interface says (in XML a
// list of resources).
func (h *authorizationHandlers) listUserRoleDefinitions(c *gin.Context) {
	party, _ := reporteeOf(c)
	defs, err := h.q.ListReporteeRoleDefinitions(c.Request.Context(), party.ID)
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
func (h *authorizationHandlers) loadRoleDefinition(c *gin.Context) (store.RoleDefinition, bool) {
	raw := c.Param("roleDefinitionId")
	notThere := func() *problem.Problem {
		return problem.NotFound("there is no role definition %s for %q", raw, c.Param("who"))
	}
	id, err := strconv.Atoi(raw)
	if err != nil || id <= 0 {
		abort(c, notThere())
		return store.RoleDefinition{}, false
	}
	party, _ := reporteeOf(c)
	d, err := h.q.GetRoleDefinition(c.Request.Context(), id, "", "")
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
func (h *authorizationHandlers) roleDefinitionView(c *gin.Context, d store.RoleDefinition) userRoleDefinition {
	r := h.roleDefinitionResource(c, d)
	rights := rightResources(d.Rights)
	r.Rights = &rights
	return r
}

// checkRoleUnchanged holds a change of a role definition to its If-Match, if it has one: in the change's
// transaction, the definition is locked and its ETag compared as it is now, so nothing changes it between
// the check and the change.
func (h *authorizationHandlers) checkRoleUnchanged(c *gin.Context, q *store.Queries, id int) error {
	if _, ok := c.Request.Header["If-Match"]; !ok {
		return nil
	}
	d, err := q.LockRoleDefinition(c.Request.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return problem.NotFound("role definition %d has been deleted", id)
	}
	if err != nil {
		return err
	}
	tag, err := resourceETag(c, h.roleDefinitionView(c, d))
	if err != nil {
		return err
	}
	return checkIfMatch(c, tag)
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

// localRole is a validated local role body.
type localRole struct {
	name, description string
	rights            []store.RightSpec
}

func (l localRole) summary() string {
	parts := make([]string, len(l.rights))
	for i, r := range l.rights {
		parts[i] = fmt.Sprintf("%s on %s/%d", r.Action, r.ServiceCode, r.ServiceEdition)
	}
	return fmt.Sprintf("%q with rights %s", l.name, strings.Join(parts, ", "))
}

// readLocalRole binds and checks a local role body, answering 400 with every problem found.
func (h *authorizationHandlers) readLocalRole(c *gin.Context) (localRole, error) {
	var b localRoleBody
	if err := bindJSON(c, &b); err != nil {
		return localRole{}, err
	}
	var (
		l    localRole
		errs []string
	)
	if b.RoleName == nil || strings.TrimSpace(string(*b.RoleName)) == "" {
		errs = append(errs, "RoleName is required")
	} else {
		l.name = strings.TrimSpace(string(*b.RoleName))
	}
	if b.RoleDescription != nil {
		l.description = strings.TrimSpace(string(*b.RoleDescription))
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
	seen := map[store.RightSpec]bool{}
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
		spec := store.RightSpec{ServiceCode: code, ServiceEdition: edition, Action: action}
		if seen[spec] {
			continue // the same right twice is the same right
		}
		seen[spec] = true
		l.rights = append(l.rights, spec)
		keys = append(keys, store.ServiceKey{Code: code, Edition: edition})
		at = append(at, where)
	}
	if len(keys) > 0 {
		unknown, err := h.q.UnknownServices(c.Request.Context(), keys)
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

func roleNameTaken(name string) *problem.Problem {
	return problem.New(http.StatusConflict, "role-name-taken", "this reportee already has a local role named %q", name)
}

func (h *authorizationHandlers) createLocalRole(c *gin.Context) {
	party, ok := managedReportee(c)
	if !ok {
		return
	}
	h.saveLocalRole(c, store.AuditCreateRoleDefinition, events.RoleDefinitionCreated, http.StatusCreated, func(q *store.Queries, l localRole) (int, string, error) {
		id, err := q.CreateLocalRole(c.Request.Context(), party.ID, l.name, l.description, l.rights)
		return id, "created local role " + l.summary(), err
	})
}

// saveLocalRole reads the local role of the body and runs save, which writes it for {who} and returns its
// id and what it did, in one transaction with its audit entry and its event (eventType), and answers status
// with the role's Location.
func (h *authorizationHandlers) saveLocalRole(c *gin.Context, action, eventType string, status int, save func(q *store.Queries, l localRole) (int, string, error)) {
	l, err := h.readLocalRole(c)
	if err != nil {
		abort(c, err)
		return
	}
	ctx := c.Request.Context()
	party, _ := reporteeOf(c)
	now := clock.Now()
	var id int
	err = h.changeAuthorization(ctx, func(q *store.Queries) error {
		var summary string
		var err error
		if id, summary, err = save(q, l); err != nil {
			return err
		}
		e := auditEntry(c, party.ID, action, now)
		e.RoleDefinitionID, e.Summary = id, summary
		if err := q.AppendAudit(ctx, e); err != nil {
			return err
		}
		return q.AppendEvents(ctx, h.events.RoleDefinitionEvent(eventType, events.RoleDefinition{RoleDefinitionID: id, ReporteeID: party.ID, Name: l.name}))
	})
	if errors.Is(err, store.ErrRoleNameTaken) {
		err = roleNameTaken(l.name)
	}
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Location", h.roleDefinitionURL(c, id))
	c.Status(status)
}

// changeableRole loads the local role of the path for a change by an access manager of {who}: platform
// roles get 403.
func (h *authorizationHandlers) changeableRole(c *gin.Context) (store.RoleDefinition, bool) {
	if _, ok := managedReportee(c); !ok {
		return store.RoleDefinition{}, false
	}
	d, ok := h.loadRoleDefinition(c)
	if !ok {
		return d, false
	}
	if !d.Local() {
		abort(c, problem.New(http.StatusForbidden, "platform-role", "role definition %s is a platform role; only local roles can be changed or deleted",
			roleLabel(d.ID, d.Code, d.Name)))
		return d, false
	}
	return d, true
}

func (h *authorizationHandlers) updateLocalRole(c *gin.Context) {
	d, ok := h.changeableRole(c)
	if !ok {
		return
	}
	h.saveLocalRole(c, store.AuditUpdateRoleDefinition, events.RoleDefinitionChanged, http.StatusNoContent, func(q *store.Queries, l localRole) (int, string, error) {
		if err := h.checkRoleUnchanged(c, q, d.ID); err != nil {
			return d.ID, "", err
		}
		err := q.UpdateLocalRole(c.Request.Context(), d.ID, l.name, l.description, l.rights)
		return d.ID, fmt.Sprintf("changed local role %d to %s", d.ID, l.summary()), err
	})
}

// deleteLocalRole deletes a local role and, with it, every delegation of it (each recorded in the audit log).
func (h *authorizationHandlers) deleteLocalRole(c *gin.Context) {
	ctx := c.Request.Context()
	d, ok := h.changeableRole(c)
	if !ok {
		return
	}
	party, _ := reporteeOf(c)
	now := clock.Now()
	err := h.changeAuthorization(ctx, func(q *store.Queries) error {
		if err := h.checkRoleUnchanged(c, q, d.ID); err != nil {
			return err
		}
		held, err := q.DeleteLocalRole(ctx, d.ID)
		if err != nil {
			return err
		}
		evs := make([]store.Event, 0, len(held)+1)
		for _, r := range held {
			evs = append(evs, h.roleDeleted(r))
			e := auditEntry(c, r.ReporteeID, store.AuditDeleteRole, now)
			e.RoleID, e.RoleDefinitionID, e.RightHolder = r.RoleID, d.ID, r.HolderName
			e.Summary = fmt.Sprintf("deleted role %s held by %s, with its local role definition", roleLabel(d.ID, "", d.Name), r.HolderName)
			if err := q.AppendAudit(ctx, e); err != nil {
				return err
			}
		}
		e := auditEntry(c, party.ID, store.AuditDeleteRoleDefinition, now)
		e.RoleDefinitionID = d.ID
		e.Summary = fmt.Sprintf("deleted local role %s", roleLabel(d.ID, "", d.Name))
		if err := q.AppendAudit(ctx, e); err != nil {
			return err
		}
		evs = append(evs, h.events.RoleDefinitionEvent(events.RoleDefinitionDeleted, events.RoleDefinition{RoleDefinitionID: d.ID,
			ReporteeID: party.ID, Name: d.Name}))
		return q.AppendEvents(ctx, evs...)
	})
	if err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
