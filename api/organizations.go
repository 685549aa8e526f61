package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// organizationResourceOf is an organization the caller may represent: the service-owner view of an
// organization, which holds nothing an end user may not see, with the links of the end-user area; its
// contact data stay in the service-owner area.
func organizationResourceOf(c *gin.Context, o store.Organization) soOrganizationResource {
	base, id := baseURL(c), identity.ReporteeID(o.ID)
	r := organizationView(o)
	r.Links.Add("self", render.Link{Href: base + "/api/organizations/" + o.OrganizationNumber})
	r.Links.Add("reportee", render.Link{Href: base + "/api/reportees/" + id})
	r.Links.Add("messages", render.Link{Href: base + "/api/" + id + "/messages"})
	return r
}

// listOrganizations lists the organizations the caller may represent, by name.
func (h *identityHandlers) listOrganizations(c *gin.Context) {
	p := principalOf(c)
	respondList(c, "organizations", func(lq store.ListQuery) ([]store.Organization, bool, error) {
		return h.who.ListRepresentedOrganizations(c.Request.Context(), p.Subject(), p.Self(), lq)
	}, func(o store.Organization) soOrganizationResource { return organizationResourceOf(c, o) }, findLink(baseURL(c)+"/api/organizations/{organizationNumber}"))
}

// getOrganization shows one organization of the caller's list. One the caller may not represent gets the
// same 404 as one that does not exist, so the answer never tells which organization numbers exist.
func (h *identityHandlers) getOrganization(c *gin.Context) {
	org, err := h.parties.RepresentedOrganization(c.Request.Context(), principalOf(c), c.Param("organizationNumber"))
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, organizationResourceOf(c, org))
}
