package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/serviceowner"
	"github.com/postbox/postbox/store"
)

// serviceOwnerHandlers answer the service-owner area; who may call it, the audit of every call and the
// keyset paging are in serviceowner.go and lists.go.
type serviceOwnerHandlers struct {
	roles access.Store
	owner *serviceowner.Service
}

// Handlers of the service-owner area. Problem details never repeat a subject, reportee or path party the
// client sent: it may be a national identity number, and refusals are logged with their detail.

type soOrganizationResource struct {
	Name               string
	OrganizationNumber string
	Type               string
	LastChanged        *render.Timestamp
	LastConfirmed      *render.Timestamp
	Links              render.Links `json:"_links"`
}

type soOfficialContactResource struct {
	MobileNumber        string
	MobileNumberChanged *render.Timestamp
	EMailAddress        string
	EMailAddressChanged *render.Timestamp
}

type soPersonalContactResource struct {
	PersonalContactID    string `json:"PersonalContactId"`
	Name                 string
	SocialSecurityNumber string
	MobileNumber         string
	MobileNumberChanged  *render.Timestamp
	EMailAddress         string
	EMailAddressChanged  *render.Timestamp
	Links                render.Links `json:"_links"`
}

// soType is the service-owner Type of a party: Person, Business (a BEDR unit) or Enterprise.
func soType(p identity.Party) string {
	switch {
	case p.Kind == "Person":
		return "Person"
	case p.OrganizationForm == "BEDR":
		return "Business"
	}
	return "Enterprise"
}

func (h *serviceOwnerHandlers) soURL(c *gin.Context, path string) string {
	return baseURL(c) + "/api/serviceowner" + path
}

func (h *serviceOwnerHandlers) soOrganizationResource(c *gin.Context, o store.Organization) soOrganizationResource {
	self := h.soURL(c, "/organizations/"+o.OrganizationNumber)
	r := organizationView(o)
	r.Links.Add("self", render.Link{Href: self})
	r.Links.Add("personalcontacts", render.Link{Href: self + "/personalcontacts"})
	r.Links.Add("officialcontacts", render.Link{Href: self + "/officialcontacts"})
	return r
}

// organizationView is an organization without its links (which differ by area).
func organizationView(o store.Organization) soOrganizationResource {
	return soOrganizationResource{Name: o.Name, OrganizationNumber: o.OrganizationNumber, Type: o.OrganizationForm,
		LastChanged: render.TimestampOrNull(o.LastChanged), LastConfirmed: render.TimestampOrNull(o.LastConfirmed)}
}

// soOrganization resolves {who}: an organization number or the reportee id of an organization.
func (h *serviceOwnerHandlers) soOrganization(c *gin.Context) (store.Organization, bool) {
	org, err := h.owner.Organization(c.Request.Context(), c.Param("who"))
	if err != nil {
		abort(c, err)
		return org, false
	}
	return org, true
}

// soListOrganizations lists organizations, optionally found by e-mail address and/or phone number.
func (h *serviceOwnerHandlers) soListOrganizations(c *gin.Context) {
	pg, err := parseSOListQuery(c, "organizations")
	if err != nil {
		abort(c, err)
		return
	}
	search := serviceowner.ContactSearch{Email: strings.TrimSpace(c.Query("email")), Phone: strings.TrimSpace(c.Query("phoneNumber"))}
	orgs, more, err := h.owner.Organizations(c.Request.Context(), search, pg.ListQuery, pg.after)
	if err != nil {
		abort(c, err)
		return
	}
	renderSOPage(c, "organizations", orgs, pg, more,
		func(o store.Organization) soOrganizationResource { return h.soOrganizationResource(c, o) },
		func(o store.Organization) int64 { return o.ID })
}

func (h *serviceOwnerHandlers) soGetOrganization(c *gin.Context) {
	org, ok := h.soOrganization(c)
	if !ok {
		return
	}
	respond(c, http.StatusOK, h.soOrganizationResource(c, org))
}

// soOrganizationList resolves {who} and reads the page asked of one of the organization's lists.
func (h *serviceOwnerHandlers) soOrganizationList(c *gin.Context, list string) (store.Organization, soPage, bool) {
	org, ok := h.soOrganization(c)
	if !ok {
		return org, soPage{}, false
	}
	pg, err := parseSOListQuery(c, list)
	if err != nil {
		abort(c, err)
		return org, pg, false
	}
	return org, pg, true
}

func (h *serviceOwnerHandlers) soOfficialContacts(c *gin.Context) {
	org, pg, ok := h.soOrganizationList(c, "officialcontacts")
	if !ok {
		return
	}
	if pg.after != 0 { // the list holds at most one entry: whatever follows it is nothing
		respond(c, http.StatusOK, soCollection(c, "officialcontacts", nil, pg, false, 0))
		return
	}
	contacts, more, err := h.owner.OfficialContacts(c.Request.Context(), org.ID, pg.ListQuery)
	if err != nil {
		abort(c, err)
		return
	}
	renderSOPage(c, "officialcontacts", contacts, pg, more, func(ct serviceowner.ContactPoint) soOfficialContactResource {
		return soOfficialContactResource{MobileNumber: ct.MobileNumber, MobileNumberChanged: render.TimestampOrNull(ct.MobileNumberChanged),
			EMailAddress: ct.EMailAddress, EMailAddressChanged: render.TimestampOrNull(ct.EMailAddressChanged)}
	}, func(serviceowner.ContactPoint) int64 { return org.ID })
}

func (h *serviceOwnerHandlers) soPersonalContacts(c *gin.Context) {
	org, pg, ok := h.soOrganizationList(c, "personalcontacts")
	if !ok {
		return
	}
	service, err := serviceFilterOf(c)
	if err != nil {
		abort(c, err)
		return
	}
	f := serviceowner.ContactFilter{RoleDefinitionCode: c.Query("roleDefinitionCode"), Service: service}
	contacts, more, err := h.owner.PersonalContacts(c.Request.Context(), serviceOwnerOf(c).Code, org.ID, f, pg.ListQuery, pg.after)
	if err != nil {
		abort(c, err)
		return
	}
	base := h.soURL(c, "/organizations/"+org.OrganizationNumber+"/personalcontacts/")
	renderSOPage(c, "personalcontacts", contacts, pg, more, func(ct serviceowner.PersonalContact) soPersonalContactResource {
		id := identity.ReporteeID(ct.ID)
		r := soPersonalContactResource{PersonalContactID: id, Name: ct.Name, SocialSecurityNumber: ct.SSN,
			MobileNumber: ct.MobileNumber, MobileNumberChanged: render.TimestampOrNull(ct.MobileNumberChanged),
			EMailAddress: ct.EMailAddress, EMailAddressChanged: render.TimestampOrNull(ct.EMailAddressChanged)}
		r.Links.Add("roles", render.Link{Href: base + id + "/roles"})
		return r
	}, func(ct serviceowner.PersonalContact) int64 { return ct.ID })
}

// soPersonalContactRoles lists the roles a personal contact holds for the organization, limited to roles
// that grant a right on the caller's services.
func (h *serviceOwnerHandlers) soPersonalContactRoles(c *gin.Context) {
	org, ok := h.soOrganization(c)
	if !ok {
		return
	}
	person, err := h.owner.PersonalContact(c.Request.Context(), org, c.Param("person"))
	if err != nil {
		abort(c, err)
		return
	}
	h.soRoles(c, person, identity.Party{ID: org.ID})
}
