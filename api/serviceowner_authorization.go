package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/serviceowner"
	"github.com/postbox/postbox/store"
)

// The service-owner area's authorization lists: the roles and rights a subject holds for a reportee, the
// role definitions of the owner's services, and the reportees of a subject.

type soRoleDefinitionResource struct {
	RoleType           string
	RoleDefinitionID   int `json:"RoleDefinitionId"`
	RoleName           string
	RoleDescription    string
	RoleDefinitionCode string
	Links              render.Links `json:"_links"`
}

type soRoleDefinitionDetail struct {
	soRoleDefinitionResource
	Rights []rightResource `xmlitem:"Right"`
}

type soPartyView struct {
	Name                 string
	Type                 string
	SocialSecurityNumber string `json:",omitempty"`
	OrganizationNumber   string `json:",omitempty"`
	Status               string `json:",omitempty"`
}

type soRightsResource struct {
	Subject  soPartyView
	Reportee soPartyView
	Rights   []rightResource `xmlitem:"Right"`
	Links    render.Links    `json:"_links"`
}

type soReporteeResource struct {
	Name                     string
	Type                     string
	OrganizationNumber       string `json:",omitempty"`
	ParentOrganizationNumber string `json:",omitempty"`
	OrganizationForm         string `json:",omitempty"`
	Status                   string `json:",omitempty"`
	SocialSecurityNumber     string `json:",omitempty"`
}

func (h *serviceOwnerHandlers) soRoleDefinitionResource(c *gin.Context, d access.RoleDefinition) soRoleDefinitionResource {
	r := soRoleDefinitionResource{RoleType: d.RoleType, RoleDefinitionID: d.ID, RoleName: d.Name, RoleDescription: d.Description,
		RoleDefinitionCode: d.Code}
	r.Links.Add("self", render.Link{Href: h.soURL(c, "/roledefinitions/"+strconv.Itoa(d.ID))})
	return r
}

// soParty resolves the required query parameter param naming a person or organization.
func (h *serviceOwnerHandlers) soParty(c *gin.Context, param string) (identity.Party, bool) {
	party, err := h.owner.Party(c.Request.Context(), param, c.Query(param))
	if err != nil {
		abort(c, err)
		return party, false
	}
	return party, true
}

// soSubjectAndReportee resolves the required query parameters subject and reportee.
func (h *serviceOwnerHandlers) soSubjectAndReportee(c *gin.Context) (subject, reportee identity.Party, ok bool) {
	if subject, ok = h.soParty(c, "subject"); ok {
		reportee, ok = h.soParty(c, "reportee")
	}
	return subject, reportee, ok
}

// soAuthorizationRoles lists the roles subject holds for reportee that concern the caller's services.
func (h *serviceOwnerHandlers) soAuthorizationRoles(c *gin.Context) {
	subject, reportee, ok := h.soSubjectAndReportee(c)
	if !ok {
		return
	}
	h.soRoles(c, subject, reportee)
}

func (h *serviceOwnerHandlers) soRoles(c *gin.Context, holder, reportee identity.Party) {
	pg, err := parseSOListQuery(c, "roles")
	if err != nil {
		abort(c, err)
		return
	}
	after := int64(-1) // the base role's key is 0
	if pg.hasToken {
		after = pg.after
	}
	roles, more, err := h.roles.ListHeldRoles(c.Request.Context(), serviceowner.Holding(serviceOwnerOf(c).Code, holder, reportee), pg.ListQuery, after)
	if err != nil {
		abort(c, err)
		return
	}
	definitions := h.soURL(c, "/roledefinitions/")
	renderSOPage(c, "roles", roles, pg, more,
		func(r access.HeldRole) roleResource { return roleResourceOf(r, definitions, true) },
		func(r access.HeldRole) int64 { return r.RoleID })
}

// soAuthorizationRights shows the rights subject has for reportee on the caller's services. A person
// acting for themself has them through the automatic base role (main administrator).
func (h *serviceOwnerHandlers) soAuthorizationRights(c *gin.Context) {
	subject, reportee, ok := h.soSubjectAndReportee(c)
	if !ok {
		return
	}
	granted, _, err := h.roles.ListHeldRights(c.Request.Context(), serviceowner.Holding(serviceOwnerOf(c).Code, subject, reportee), store.Unpaged)
	if err != nil {
		abort(c, err)
		return
	}
	r := soRightsResource{
		Subject:  soPartyView{Name: subject.Name, Type: soType(subject), SocialSecurityNumber: subject.SSN, OrganizationNumber: subject.OrganizationNumber},
		Reportee: soPartyView{Name: reportee.Name, Type: soType(reportee), SocialSecurityNumber: reportee.SSN, OrganizationNumber: reportee.OrganizationNumber, Status: reportee.Status},
		Rights:   rightResources(granted),
	}
	r.Links.Add("self", render.Link{Href: pageURL(c, -1)})
	respond(c, http.StatusOK, r)
}

func (h *serviceOwnerHandlers) soListRoleDefinitions(c *gin.Context) {
	pg, err := parseSOListQuery(c, "roledefinitions")
	if err != nil {
		abort(c, err)
		return
	}
	defs, more, err := h.roles.ListRoleDefinitions(c.Request.Context(), pg.ListQuery, pg.after)
	if err != nil {
		abort(c, err)
		return
	}
	renderSOPage(c, "roledefinitions", defs, pg, more,
		func(d access.RoleDefinition) soRoleDefinitionResource { return h.soRoleDefinitionResource(c, d) },
		func(d access.RoleDefinition) int64 { return int64(d.ID) })
}

// soGetRoleDefinition shows a role definition with the rights it grants on the caller's services, with its
// ETag (If-None-Match answers 304).
func (h *serviceOwnerHandlers) soGetRoleDefinition(c *gin.Context) {
	d, err := h.owner.RoleDefinition(c.Request.Context(), serviceOwnerOf(c).Code, c.Param("roleDefinitionId"))
	if err != nil {
		abort(c, err)
		return
	}
	respondTagged(c, soRoleDefinitionDetail{soRoleDefinitionResource: h.soRoleDefinitionResource(c, d), Rights: rightResources(d.Rights)})
}

// soListReportees lists the parties subject can represent, optionally narrowed to a service of the
// caller or to a role definition that grants a right on one.
func (h *serviceOwnerHandlers) soListReportees(c *gin.Context) {
	subject, ok := h.soParty(c, "subject")
	if !ok {
		return
	}
	service, err := serviceFilterOf(c)
	if err != nil {
		abort(c, err)
		return
	}
	f := serviceowner.ReporteeFilter{Service: service}
	if raw := c.Query("roleDefinitionId"); raw != "" {
		if f.RoleDefinitionID, err = strconv.Atoi(raw); err != nil || f.RoleDefinitionID <= 0 {
			abort(c, problem.BadRequest("roleDefinitionId must be a positive integer"))
			return
		}
	}
	if raw := c.Query("showConsentReportees"); raw != "" {
		if _, err := strconv.ParseBool(raw); err != nil {
			abort(c, problem.BadRequest("showConsentReportees must be true or false"))
			return
		}
	}
	pg, err := parseSOListQuery(c, "reportees")
	if err != nil {
		abort(c, err)
		return
	}
	parties, more, err := h.owner.Reportees(c.Request.Context(), serviceOwnerOf(c).Code, subject, f, pg.ListQuery, pg.after)
	if err != nil {
		abort(c, err)
		return
	}
	renderSOPage(c, "reportees", parties, pg, more, func(p identity.Party) soReporteeResource {
		return soReporteeResource{Name: p.Name, Type: soType(p), OrganizationNumber: p.OrganizationNumber,
			ParentOrganizationNumber: p.ParentOrganizationNumber, OrganizationForm: p.OrganizationForm, Status: p.Status,
			SocialSecurityNumber: p.SSN}
	}, func(p identity.Party) int64 { return p.ID })
}
