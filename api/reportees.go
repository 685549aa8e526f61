package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// identityHandlers answer who the caller is and whom it may act for: the password login and logout, and
// the reportees.
type identityHandlers struct {
	who     identity.Store // whom a caller may represent
	auth    *identity.Authenticator
	rights  *identity.Rights
	parties *identity.Parties
}

type reporteeResource struct {
	ReporteeID           string `json:"ReporteeId"`
	Name                 string
	Type                 string
	OrganizationNumber   string       `json:",omitempty"`
	Status               string       `json:",omitempty"`
	SocialSecurityNumber string       `json:",omitempty"`
	Links                render.Links `json:"_links"`
}

func reporteeResourceOf(c *gin.Context, p identity.Party) reporteeResource {
	base := baseURL(c)
	id := identity.ReporteeID(p.ID)
	r := reporteeResource{ReporteeID: id, Name: p.Name, Type: "Person", SocialSecurityNumber: p.SSN}
	if p.Kind == "Organization" {
		r.Type, r.OrganizationNumber, r.Status = "Foretak", p.OrganizationNumber, p.Status
	}
	r.Links.Add("self", render.Link{Href: base + "/api/reportees/" + id})
	r.Links.Add("messages", render.Link{Href: base + "/api/" + id + "/messages"})
	return r
}

// listReportees lists the parties the caller may represent; serviceCode and serviceEdition narrow it to
// those where the caller holds a right on that service.
func (h *identityHandlers) listReportees(c *gin.Context) {
	p := principalOf(c)
	service, err := serviceFilterOf(c)
	if err != nil {
		abort(c, err)
		return
	}
	respondList(c, "reportees", func(lq store.ListQuery) ([]identity.Party, bool, error) {
		return h.who.ListReportees(c.Request.Context(), p.Subject(), p.Self(), service, lq)
	}, func(party identity.Party) reporteeResource { return reporteeResourceOf(c, party) }, findLink(baseURL(c)+"/api/reportees/{reporteeId}"))
}

func (h *identityHandlers) getReportee(c *gin.Context) {
	raw := c.Param("reporteeId")
	party, _, err := h.parties.Represented(c.Request.Context(), principalOf(c), raw, raw)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, reporteeResourceOf(c, party))
}

type reporteeConversionBody struct {
	SocialSecurityNumber jsonText
	LastName             jsonText
}

// convertReportee turns a national identity number and last name into the reportee (with its ReporteeId)
// when the caller may represent that person. An unknown number, a last name that does not match and a
// person the caller may not represent get the same 400, so the answer reveals nothing about the number.
func (h *identityHandlers) convertReportee(c *gin.Context) {
	var b reporteeConversionBody
	if err := bindJSON(c, &b); err != nil {
		abort(c, err)
		return
	}
	ssn, lastName := strings.TrimSpace(string(b.SocialSecurityNumber)), strings.TrimSpace(string(b.LastName))
	if !identity.SSNPattern.MatchString(ssn) {
		abort(c, problem.BadRequest("SocialSecurityNumber must be 11 digits"))
		return
	}
	if lastName == "" {
		abort(c, problem.BadRequest("LastName is required"))
		return
	}
	party, err := h.parties.PersonNamed(c.Request.Context(), principalOf(c), ssn, lastName)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, reporteeResourceOf(c, party))
}
