package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
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
	coll, ok := listPage(c, "organizations", func(lq store.ListQuery) ([]store.Organization, bool, error) {
		return h.who.ListRepresentedOrganizations(c.Request.Context(), p.Subject(), p.Self(), lq)
	}, func(o store.Organization) soOrganizationResource { return organizationResourceOf(c, o) })
	if !ok {
		return
	}
	coll.Links.Add("find", render.Link{Href: baseURL(c) + "/api/organizations/{organizationNumber}", IsTemplated: true})
	respond(c, http.StatusOK, coll)
}

// getOrganization shows one organization of the caller's list. An organization the caller may not
// represent is not in that list: it gets the same 404 as one that does not exist, so the answer never
// tells which organization numbers exist (a 403 would).
func (h *identityHandlers) getOrganization(c *gin.Context) {
	number := c.Param("organizationNumber")
	notThere := problem.NotFound("there is no organization %q you may represent", number)
	if !identity.OrganizationNumberPattern.MatchString(number) {
		abort(c, notThere)
		return
	}
	ctx := c.Request.Context()
	party, err := h.parties.Find(ctx, number)
	if errors.Is(err, store.ErrNotFound) || (err == nil && party.Kind != "Organization") {
		abort(c, notThere)
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	rights, err := h.rights.For(ctx, principalOf(c), party.ID)
	if err != nil {
		abort(c, err)
		return
	}
	if !rights.Represents() {
		abort(c, notThere)
		return
	}
	org, err := h.q.GetOrganization(ctx, party.ID)
	if found(c, err, func() *problem.Problem { return notThere }) {
		respond(c, http.StatusOK, organizationResourceOf(c, org))
	}
}
