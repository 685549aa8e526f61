package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/store"
)

type reporteeResource struct {
	ReporteeID           string `json:"ReporteeId"`
	Name                 string
	Type                 string
	OrganizationNumber   string       `json:",omitempty"`
	Status               string       `json:",omitempty"`
	SocialSecurityNumber string       `json:",omitempty"`
	Links                render.Links `json:"_links"`
}

func reporteeResourceOf(c *gin.Context, p store.Party) reporteeResource {
	base := baseURL(c)
	id := reporteeID(p.ID)
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
func (s *Server) listReportees(c *gin.Context) {
	p := principalOf(c)
	service, err := serviceFilterOf(c)
	if err != nil {
		abort(c, err)
		return
	}
	coll, ok := listPage(c, "reportees", func(lq store.ListQuery) ([]store.Party, bool, error) {
		return s.q.ListReportees(c.Request.Context(), p.Subject(), p.Self(), service, lq)
	}, func(party store.Party) reporteeResource { return reporteeResourceOf(c, party) })
	if !ok {
		return
	}
	coll.Links.Add("find", render.Link{Href: baseURL(c) + "/api/reportees/{reporteeId}", IsTemplated: true})
	respond(c, http.StatusOK, coll)
}

func (s *Server) getReportee(c *gin.Context) {
	raw := c.Param("reporteeId")
	party, _, err := s.parties.represented(c, raw, raw)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, reporteeResourceOf(c, party))
}
