package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// The user-facing authorization area: the roles and rights the logged-in user holds for {who},
// delegations, deletions, the audit log, and reportee conversion.

const ctxWhoLogin = "postbox.whoLogin"

// authorizationURL is the address of the authorization area for {who} as the client wrote it.
func (s *Server) authorizationURL(c *gin.Context) string {
	return baseURL(c) + "/api/" + url.PathEscape(c.Param("who")) + "/authorization"
}

func (s *Server) roleDefinitionURL(c *gin.Context, id int) string {
	return s.authorizationURL(c) + "/roledefinitions/" + strconv.Itoa(id)
}

// listUserRoles lists the roles the logged-in user holds for {who}, the automatic base role first.
func (s *Server) listUserRoles(c *gin.Context) {
	party, rights := reporteeOf(c)
	holding := store.Holding{Holder: principalOf(c).Subject(), ReporteeID: party.ID, Self: rights.All}
	definitions := s.authorizationURL(c) + "/roledefinitions/"
	coll, ok := listPage(c, "roles", func(lq store.ListQuery) ([]store.HeldRole, bool, error) {
		return s.q.ListHeldRoles(c.Request.Context(), holding, lq, -1)
	}, func(r store.HeldRole) roleResource { return roleResourceOf(r, definitions, false) })
	if ok {
		respond(c, http.StatusOK, coll)
	}
}

// listUserRights lists the rights the logged-in user has for {who} through its roles.
func (s *Server) listUserRights(c *gin.Context) {
	party, rights := reporteeOf(c)
	holding := store.Holding{Holder: principalOf(c).Subject(), ReporteeID: party.ID, Self: rights.All}
	coll, ok := listPage(c, "rights", func(lq store.ListQuery) ([]store.Right, bool, error) {
		return s.q.ListHeldRights(c.Request.Context(), holding, lq)
	}, rightResourceOf)
	if ok {
		respond(c, http.StatusOK, coll)
	}
}

func notAccessManager(c *gin.Context) *problem.Problem {
	return problem.New(http.StatusForbidden, "not-access-manager",
		"you are neither access manager (ADMAI) nor main administrator (HADM) for %q", c.Param("who"))
}

// changeAuthorization runs a change and its audit entries in one transaction and, once it has committed,
// empties this replica's rights cache so the next request sees it (other replicas hear of it through
// the database's change notification).
func (s *Server) changeAuthorization(ctx context.Context, fn func(q *store.Queries) error) error {
	err := store.InTx(ctx, s.opts.Pool, func(tx pgx.Tx) error { return fn(store.New(tx)) })
	if err == nil {
		s.rights.Invalidate()
	}
	return err
}

// auditEntry starts an audit entry for a change the caller makes for the reportee.
func auditEntry(c *gin.Context, reporteeID int64, action string, at time.Time) store.AuditEntry {
	p := principalOf(c)
	subject := p.Subject()
	key, _ := apiKeyOf(c)
	return store.AuditEntry{At: at, ReporteeID: reporteeID, ActorName: p.Name, ActorPartyID: subject.PartyID,
		ActorLoginID: subject.LoginID, ActorMethod: string(p.Method), APIKeyName: key.Name, RequestID: requestID(c), Action: action}
}

// roleLabel names a role definition for messages and the audit log.
func roleLabel(id int, code, name string) string {
	if code != "" {
		return fmt.Sprintf("%d %s (%s)", id, code, name)
	}
	return fmt.Sprintf("%d (%s)", id, name)
}

func rightLabel(r store.Right) string {
	return fmt.Sprintf("%s on %s/%d", r.Action, r.ServiceCode, r.ServiceEdition)
}

// ---- delegations ----

// delegationRequest is the body of POST delegations: one right holder and the role definitions to give it.
type delegationRequest struct {
	SocialSecurityNumber string
	LastName             string
	OrganizationNumber   string
	Name                 string
	UserName             string
	RoleDefinitionIDs    []int
}

// maxRolesPerDelegation bounds one delegation request.
const maxRolesPerDelegation = 50

// parseDelegation reads the spec's HAL-XML delegation body, or its JSON HAL form (readDocument):
//
//	<resource rel="RightHolder">
//	  <Type>…</Type> <SocialSecurityNumber>…</SocialSecurityNumber> <LastName>…</LastName>
//	  <resource rel="Roles"> <resource rel="Role"> <RoleDefinitionId>88</RoleDefinitionId> </resource> … </resource>
//	</resource>
//
// An organization is named by OrganizationNumber and Name, an enterprise user by UserName and
// OrganizationNumber. Type is a placeholder and ignored, as are HAL <link> elements and an empty list of
// single rights. In JSON: {"SocialSecurityNumber": …, "LastName": …, "_embedded": {"Roles":
// [{"RoleDefinitionId": 88}], "Rights": []}}.
func parseDelegation(root *xmlNode) (delegationRequest, error) {
	var d delegationRequest
	if root.Name != "resource" || !strings.EqualFold(root.attr("rel"), "RightHolder") {
		return d, xmlNodeError(root, `the root element must be <resource rel="RightHolder">`)
	}
	seen := map[string]bool{}
	rolesSeen := false
	for _, n := range root.Children {
		name := strings.ToLower(n.Name)
		if name == "resource" {
			if strings.EqualFold(n.attr("rel"), "Rights") {
				if err := noRights(n); err != nil {
					return d, err
				}
				continue
			}
			if !strings.EqualFold(n.attr("rel"), "Roles") {
				return d, xmlNodeError(n, `only <resource rel="Roles"> may be nested in the right holder`)
			}
			if rolesSeen {
				return d, xmlNodeError(n, `<resource rel="Roles"> appears more than once`)
			}
			rolesSeen = true
			ids, err := parseRoles(n)
			if err != nil {
				return d, err
			}
			d.RoleDefinitionIDs = ids
			continue
		}
		if name == "link" {
			continue
		}
		var target *string
		switch name {
		case "type":
		case "socialsecuritynumber":
			target = &d.SocialSecurityNumber
		case "lastname":
			target = &d.LastName
		case "organizationnumber", "orgnumber":
			target = &d.OrganizationNumber
		case "name", "organizationname":
			target = &d.Name
		case "username":
			target = &d.UserName
		default:
			return d, xmlNodeError(n, "<%s> is not part of a delegation (expected SocialSecurityNumber and LastName, OrganizationNumber and Name, or UserName and OrganizationNumber, and the Roles)", n.Name)
		}
		if seen[name] {
			return d, xmlNodeError(n, "<%s> appears more than once", n.Name)
		}
		seen[name] = true
		text, err := xmlText(n)
		if err != nil {
			return d, err
		}
		if target != nil {
			*target = text
		}
	}
	if !rolesSeen || len(d.RoleDefinitionIDs) == 0 {
		return d, xmlNodeError(root, `name at least one role: <resource rel="Roles"><resource rel="Role"><RoleDefinitionId>…</RoleDefinitionId></resource></resource>`)
	}
	return d, nil
}

// noRights accepts the empty list of single rights a client may send beside the roles (the JSON HAL form
// has _embedded.Rights): rights are delegated here only through roles.
func noRights(rights *xmlNode) error {
	for _, r := range rights.Children {
		if !strings.EqualFold(r.Name, "link") {
			return xmlNodeError(r, "single rights cannot be delegated: delegate a role that grants them (a local role can be made for that)")
		}
	}
	return nil
}

func parseRoles(roles *xmlNode) ([]int, error) {
	var ids []int
	for _, r := range roles.Children {
		if strings.EqualFold(r.Name, "link") {
			continue
		}
		if r.Name != "resource" || !strings.EqualFold(r.attr("rel"), "Role") {
			return nil, xmlNodeError(r, `the roles must be <resource rel="Role"> elements`)
		}
		var idNode *xmlNode
		for _, f := range r.Children {
			switch {
			case strings.EqualFold(f.Name, "RoleDefinitionId"):
				if idNode != nil {
					return nil, xmlNodeError(f, "<RoleDefinitionId> appears more than once")
				}
				idNode = f
			case strings.EqualFold(f.Name, "link"), strings.EqualFold(f.Name, "RoleName"), strings.EqualFold(f.Name, "RoleType"):
			default:
				return nil, xmlNodeError(f, "<%s> is not part of a role (expected RoleDefinitionId)", f.Name)
			}
		}
		if idNode == nil {
			return nil, xmlNodeError(r, "<RoleDefinitionId> is missing")
		}
		text, err := xmlText(idNode)
		if err != nil {
			return nil, err
		}
		id, err := strconv.Atoi(text)
		if err != nil || id <= 0 {
			return nil, xmlNodeError(idNode, "%q is not a role definition id (a positive integer)", text)
		}
		for _, seen := range ids {
			if seen == id {
				return nil, xmlNodeError(idNode, "role definition %d is named more than once", id)
			}
		}
		ids = append(ids, id)
		if len(ids) > maxRolesPerDelegation {
			return nil, xmlNodeError(roles, "at most %d roles can be delegated at once", maxRolesPerDelegation)
		}
	}
	return ids, nil
}

var (
	ssnPattern = regexp.MustCompile(`^[0-9]{11}$`)
)

// rightHolder is who receives a delegation: a person or organization, or an enterprise user.
type rightHolder struct {
	partyID int64
	loginID int64
	name    string
}

// sameName compares names as people type them: in any case, with any run of blanks as one.
func sameName(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// findRightHolder identifies the right holder of a delegation. An identifier and a name that do not
// belong together get the same answer whether the identifier exists or not, so the answer never reveals
// who a national identity number belongs to.
func (s *Server) findRightHolder(ctx context.Context, d delegationRequest) (rightHolder, error) {
	mismatch := func(what string) error {
		return problem.New(http.StatusBadRequest, "right-holder-mismatch", "the %s do not identify a right holder together", what)
	}
	switch {
	case d.SocialSecurityNumber != "":
		if d.OrganizationNumber != "" || d.UserName != "" {
			return rightHolder{}, problem.BadRequest("name one right holder: a person (SocialSecurityNumber, LastName), an organization (OrganizationNumber, Name) or an enterprise user (UserName, OrganizationNumber)")
		}
		if !ssnPattern.MatchString(d.SocialSecurityNumber) {
			return rightHolder{}, problem.BadRequest("SocialSecurityNumber must be 11 digits")
		}
		if d.LastName == "" {
			return rightHolder{}, problem.BadRequest("LastName is required with SocialSecurityNumber")
		}
		p, err := s.parties.find(ctx, d.SocialSecurityNumber)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (p.Kind != "Person" || !sameName(p.LastName, d.LastName))) {
			return rightHolder{}, mismatch("national identity number and last name")
		}
		return rightHolder{partyID: p.ID, name: p.Name}, err
	case d.UserName != "":
		if !store.OrganizationNumberPattern.MatchString(d.OrganizationNumber) {
			return rightHolder{}, problem.BadRequest("an enterprise user is named by UserName and OrganizationNumber (9 digits)")
		}
		l, err := s.q.FindLogin(ctx, d.UserName)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (l.Kind != "EnterpriseUser" || l.OrganizationNumber != d.OrganizationNumber)) {
			return rightHolder{}, mismatch("user name and organization number")
		}
		return rightHolder{loginID: l.ID, name: l.UserName}, err
	case d.OrganizationNumber != "":
		if !store.OrganizationNumberPattern.MatchString(d.OrganizationNumber) {
			return rightHolder{}, problem.BadRequest("OrganizationNumber must be 9 digits")
		}
		if d.Name == "" {
			return rightHolder{}, problem.BadRequest("Name is required with OrganizationNumber")
		}
		p, err := s.parties.find(ctx, d.OrganizationNumber)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (p.Kind != "Organization" || !sameName(p.Name, d.Name))) {
			return rightHolder{}, mismatch("organization number and name")
		}
		if err == nil && p.Status != "" && p.Status != "Active" {
			return rightHolder{}, problem.BadRequest("organization %s is not active and cannot receive roles", p.OrganizationNumber)
		}
		return rightHolder{partyID: p.ID, name: p.Name}, err
	}
	return rightHolder{}, problem.BadRequest("name the right holder: SocialSecurityNumber and LastName for a person, OrganizationNumber and Name for an organization, or UserName and OrganizationNumber for an enterprise user")
}

// delegateRoles gives roles to a right holder for {who}. The caller must be access manager (ADMAI) or
// main administrator (HADM) for the reportee; anyone but a main administrator may only delegate roles they
// hold themselves and whose rights they hold as delegatable rights. Roles from the business register
// (RoleType External) are not delegated.
func (s *Server) delegateRoles(c *gin.Context) {
	ctx := c.Request.Context()
	party, rights := reporteeOf(c)
	if !rights.AccessManager() {
		abort(c, notAccessManager(c))
		return
	}
	root, err := readDocument(c, "RightHolder")
	if err != nil {
		abort(c, err)
		return
	}
	req, err := parseDelegation(root)
	if err != nil {
		abort(c, err)
		return
	}
	holder, err := s.findRightHolder(ctx, req)
	if err != nil {
		abort(c, err)
		return
	}
	if holder.partyID == party.ID {
		abort(c, problem.BadRequest("a party cannot hold roles for itself"))
		return
	}
	defs, err := s.delegatableRoles(c, party, rights, req.RoleDefinitionIDs)
	if err != nil {
		abort(c, err)
		return
	}
	p := principalOf(c)
	now := time.Now()
	err = s.changeAuthorization(ctx, func(q *store.Queries) error {
		for _, d := range defs {
			id, err := q.InsertRole(ctx, store.NewRole{HolderPartyID: holder.partyID, HolderLoginID: holder.loginID, ReporteeID: party.ID,
				RoleDefinitionID: d.ID, Delegator: p.Name, DelegatedTime: now})
			if errors.Is(err, store.ErrRoleHeld) {
				return problem.New(http.StatusConflict, "role-already-held", "the right holder already holds role %s for this reportee", roleLabel(d.ID, d.Code, d.Name))
			}
			if err != nil {
				return err
			}
			e := auditEntry(c, party.ID, store.AuditDelegateRole, now)
			e.RoleID, e.RoleDefinitionID, e.RightHolder = id, d.ID, holder.name
			e.Summary = fmt.Sprintf("delegated role %s to %s", roleLabel(d.ID, d.Code, d.Name), holder.name)
			if err := q.AppendAudit(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusCreated)
}

// delegatableRoles loads the named role definitions and checks the caller may delegate each for the reportee.
func (s *Server) delegatableRoles(c *gin.Context, party store.Party, rights identity.RightSet, ids []int) ([]store.RoleDefinition, error) {
	ctx := c.Request.Context()
	subject := principalOf(c).Subject()
	defs := make([]store.RoleDefinition, 0, len(ids))
	for _, id := range ids {
		d, err := s.q.GetRoleDefinition(ctx, id, "", "")
		if errors.Is(err, store.ErrNotFound) || (err == nil && d.Local() && d.OwnerPartyID != party.ID) {
			return nil, problem.BadRequest("there is no role definition %d that can be delegated for this reportee", id)
		}
		if err != nil {
			return nil, err
		}
		label := roleLabel(d.ID, d.Code, d.Name)
		if d.RoleType == "External" {
			return nil, problem.New(http.StatusForbidden, "role-not-delegatable", "role %s comes from the business register and cannot be delegated", label)
		}
		if !rights.MainAdministrator() {
			held, err := s.q.HoldsRoleDefinition(ctx, subject, party.ID, d.ID)
			if err != nil {
				return nil, err
			}
			if !held {
				return nil, problem.New(http.StatusForbidden, "role-not-held", "only a main administrator may delegate a role they do not hold: you do not hold role %s", label)
			}
			missing, err := s.q.MissingDelegatableRights(ctx, subject, party.ID, d.ID)
			if err != nil {
				return nil, err
			}
			if len(missing) > 0 {
				labels := make([]string, len(missing))
				for i, r := range missing {
					labels[i] = rightLabel(r)
				}
				pr := problem.New(http.StatusForbidden, "rights-not-held", "you may delegate role %s only if you hold all its rights as delegatable rights; you lack %s",
					label, strings.Join(labels, ", "))
				pr.Errors = labels
				return nil, pr
			}
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// delegationResource is a role someone holds for the reportee, as the reportee's access managers see it.
type delegationResource struct {
	RoleID                        int64 `json:"RoleId"`
	RoleType                      string
	RoleDefinitionID              int `json:"RoleDefinitionId"`
	RoleName                      string
	RoleDescription               string
	Delegator                     string
	DelegatedTime                 render.Timestamp
	RightHolderType               string
	RightHolderName               string
	RightHolderOrganizationNumber string       `json:",omitempty"`
	RightHolderUserName           string       `json:",omitempty"`
	Links                         render.Links `json:"_links"`
}

// listDelegations lists every role held for {who}, for its access managers. Persons are shown by name,
// never by national identity number. serviceCode and serviceEdition narrow the list to roles that grant
// a right on that service, receiverId to the roles of one right holder.
func (s *Server) listDelegations(c *gin.Context) {
	party, rights := reporteeOf(c)
	if !rights.AccessManager() {
		abort(c, notAccessManager(c))
		return
	}
	f, err := s.delegationFilter(c)
	if err != nil {
		abort(c, err)
		return
	}
	coll, ok := listPage(c, "delegations", func(lq store.ListQuery) ([]store.DelegatedRole, bool, error) {
		return s.q.ListDelegations(c.Request.Context(), party.ID, f, lq)
	}, func(r store.DelegatedRole) delegationResource {
		d := delegationResource{RoleID: r.RoleID, RoleType: r.RoleType, RoleDefinitionID: r.RoleDefinitionID, RoleName: r.RoleName,
			RoleDescription: r.RoleDescription, Delegator: r.Delegator, DelegatedTime: render.TimestampOf(*r.DelegatedTime),
			RightHolderType: r.HolderType, RightHolderName: r.HolderName, RightHolderOrganizationNumber: r.HolderOrganizationNumber,
			RightHolderUserName: r.HolderUserName}
		d.Links.Add("roledefinition", render.Link{Href: s.roleDefinitionURL(c, r.RoleDefinitionID)})
		return d
	})
	if ok {
		respond(c, http.StatusOK, coll)
	}
}

// delegationFilter reads the filters of the delegations list. receiverId is a reportee id (r…) or an
// organization number; a national identity number is refused, since the list shows persons by name and
// would tell whose number it is. A receiver that does not exist narrows the list to nothing.
func (s *Server) delegationFilter(c *gin.Context) (store.DelegationFilter, error) {
	var (
		f   store.DelegationFilter
		err error
	)
	if f.Service, err = serviceFilterOf(c); err != nil {
		return f, err
	}
	receiver, ok := c.GetQuery("receiverId")
	switch {
	case !ok:
	case reporteeIDPattern.MatchString(receiver):
		f.ReceiverPartyID, err = strconv.ParseInt(receiver[1:], 10, 64)
		if err != nil {
			return f, problem.BadRequest("receiverId %q is not a reportee id", receiver)
		}
	case store.OrganizationNumberPattern.MatchString(receiver):
		p, err := s.parties.find(c.Request.Context(), receiver)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return f, err
		}
		f.ReceiverPartyID = -1 // no such organization: no delegations
		if err == nil {
			f.ReceiverPartyID = p.ID
		}
	default:
		return f, problem.BadRequest("receiverId must be a reportee id (r followed by digits) or an organization number (9 digits)")
	}
	return f, nil
}

// ---- deletions ----

var partyKeyPattern = regexp.MustCompile(`^(?:[0-9]+|r[0-9]{1,18})$`)

// resolveWhoOrUser resolves {who} like resolveWho, but also accepts the user name of a login (a person's
// or an enterprise user's), which names the holder of the role to delete. An unknown user name is
// answered like a role the caller may not delete (roleRefused), so the answer never tells which user
// names exist.
func (s *Server) resolveWhoOrUser(c *gin.Context) {
	who := c.Param("who")
	if strings.EqualFold(who, "my") || partyKeyPattern.MatchString(who) {
		s.resolveWho(c)
		return
	}
	login, err := s.q.FindLogin(c.Request.Context(), who)
	if errors.Is(err, store.ErrNotFound) {
		abort(c, roleRefused(c))
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	c.Set(ctxWhoLogin, login)
	c.Next()
}

// roleRefused is the one answer to a role delete the caller may not make, whatever exists.
func roleRefused(c *gin.Context) *problem.Problem {
	return problem.New(http.StatusForbidden, "not-access-manager",
		"role %s of %q is not one you may delete: only its holder or an access manager (ADMAI) or main administrator (HADM) for its reportee may",
		c.Param("roleId"), c.Param("who"))
}

// managesRolesOf tells whether the caller may learn which roles {who} has: an access manager of the
// party {who}, or the login {who} itself.
func (s *Server) managesRolesOf(c *gin.Context) bool {
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
func (s *Server) deleteUserRole(c *gin.Context) {
	ctx := c.Request.Context()
	id, err := strconv.ParseInt(c.Param("roleId"), 10, 64)
	notThere := func() {
		if s.managesRolesOf(c) {
			abort(c, problem.NotFound("there is no role %s for %q", c.Param("roleId"), c.Param("who")))
			return
		}
		abort(c, roleRefused(c))
	}
	if err != nil || id <= 0 {
		notThere()
		return
	}
	role, err := s.q.GetDelegatedRole(ctx, id)
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
			if rights, err = s.rights.For(ctx, p, role.ReporteeID); err != nil {
				abort(c, err)
				return
			}
		}
		if !rights.AccessManager() {
			abort(c, roleRefused(c))
			return
		}
	}
	label := roleLabel(role.RoleDefinitionID, role.RoleDefinitionCode, role.RoleName)
	if role.RoleType == "External" {
		abort(c, problem.New(http.StatusForbidden, "role-from-register", "role %d (%s) comes from the business register and cannot be deleted here", id, label))
		return
	}
	now := time.Now()
	err = s.changeAuthorization(ctx, func(q *store.Queries) error {
		if err := q.DeleteDelegatedRole(ctx, id); err != nil {
			return err
		}
		e := auditEntry(c, role.ReporteeID, store.AuditDeleteRole, now)
		e.RoleID, e.RoleDefinitionID, e.RightHolder = id, role.RoleDefinitionID, role.HolderName
		e.Summary = fmt.Sprintf("deleted role %s held by %s", label, role.HolderName)
		return q.AppendAudit(ctx, e)
	})
	if err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// deleteUserRight deletes a right. Every right comes from a role definition (RightSourceType
// RoleTypeRights); only the rights of the reportee's own local roles can be deleted, by its access managers.
// A right of a platform role is removed by deleting the role that gives it.
func (s *Server) deleteUserRight(c *gin.Context) {
	ctx := c.Request.Context()
	party, rights := reporteeOf(c)
	if !rights.AccessManager() {
		abort(c, notAccessManager(c))
		return
	}
	id, err := strconv.ParseInt(c.Param("rightId"), 10, 64)
	notThere := func() { abort(c, problem.NotFound("there is no right %s for %q", c.Param("rightId"), c.Param("who"))) }
	if err != nil || id <= 0 {
		notThere()
		return
	}
	r, err := s.q.GetDefinedRight(ctx, id)
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
	now := time.Now()
	err = s.changeAuthorization(ctx, func(q *store.Queries) error {
		if err := q.DeleteLocalRight(ctx, id); err != nil {
			return err
		}
		e := auditEntry(c, party.ID, store.AuditDeleteRight, now)
		e.RightID, e.RoleDefinitionID = id, r.RoleDefinitionID
		e.Summary = fmt.Sprintf("deleted right %s from local role %s", rightLabel(r.Right), roleLabel(r.RoleDefinitionID, "", r.RoleName))
		return q.AppendAudit(ctx, e)
	})
	if err != nil {
		abort(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// ---- audit log ----

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
func (s *Server) listAuditLog(c *gin.Context) {
	party, rights := reporteeOf(c)
	if !rights.AccessManager() {
		abort(c, notAccessManager(c))
		return
	}
	coll, ok := listPage(c, "auditlog", func(lq store.ListQuery) ([]store.AuditEntry, bool, error) {
		return s.q.ListAudit(c.Request.Context(), party.ID, lq)
	}, func(e store.AuditEntry) auditEntryResource {
		return auditEntryResource{AuditEntryID: e.ID, Time: render.TimestampOf(e.At), Action: e.Action, Actor: e.ActorName,
			Authentication: e.ActorMethod, ApiKey: e.APIKeyName, RoleID: e.RoleID, RoleDefinitionID: e.RoleDefinitionID,
			RightID: e.RightID, RightHolder: e.RightHolder, Summary: e.Summary, RequestID: e.RequestID}
	})
	if ok {
		respond(c, http.StatusOK, coll)
	}
}

// ---- reportee conversion ----

type reporteeConversionBody struct {
	SocialSecurityNumber jsonText
	LastName             jsonText
}

// convertReportee turns a national identity number and last name into the reportee (with its ReporteeId)
// when the caller may represent that person. An unknown number, a last name that does not match and a
// person the caller may not represent get the same 400, so the answer reveals nothing about the number.
func (s *Server) convertReportee(c *gin.Context) {
	var b reporteeConversionBody
	if err := bindJSON(c, &b); err != nil {
		abort(c, err)
		return
	}
	ssn, lastName := strings.TrimSpace(string(b.SocialSecurityNumber)), strings.TrimSpace(string(b.LastName))
	if !ssnPattern.MatchString(ssn) {
		abort(c, problem.BadRequest("SocialSecurityNumber must be 11 digits"))
		return
	}
	if lastName == "" {
		abort(c, problem.BadRequest("LastName is required"))
		return
	}
	ctx := c.Request.Context()
	refuse := func() {
		abort(c, problem.New(http.StatusBadRequest, "no-such-reportee", "no person you may represent has this national identity number and last name"))
	}
	party, err := s.parties.find(ctx, ssn)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (party.Kind != "Person" || !sameName(party.LastName, lastName))) {
		refuse()
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	rights, err := s.rights.For(ctx, principalOf(c), party.ID)
	if err != nil {
		abort(c, err)
		return
	}
	if !rights.Represents() {
		refuse()
		return
	}
	respond(c, http.StatusOK, reporteeResourceOf(c, party))
}
