package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/store"
)

type reporteeResource struct {
	ReporteeID           string `json:"ReporteeId"`
	Name                 string
	Type                 string
	OrganizationNumber   string `json:",omitempty"`
	Status               string `json:",omitempty"`
	SocialSecurityNumber string `json:",omitempty"`
	Links                Links  `json:"_links"`
}

func (s *Server) reporteeResource(c *gin.Context, p store.Party) reporteeResource {
	base := s.baseURL(c)
	id := reporteeID(p.ID)
	r := reporteeResource{ReporteeID: id, Name: p.Name, Type: "Person", SocialSecurityNumber: p.SSN}
	if p.Kind == "Organization" {
		r.Type, r.OrganizationNumber, r.Status = "Foretak", p.OrganizationNumber, p.Status
	}
	r.Links.Add("self", Link{Href: base + "/api/reportees/" + id})
	r.Links.Add("messages", Link{Href: base + "/api/" + id + "/messages"})
	return r
}

func (s *Server) listReportees(c *gin.Context) {
	lq, err := parseListQuery(c)
	if err != nil {
		abort(c, err)
		return
	}
	p := principalOf(c)
	parties, more, err := s.q.ListReportees(c.Request.Context(), p.Subject(), p.Self(), lq)
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]reporteeResource, len(parties))
	for i, party := range parties {
		items[i] = s.reporteeResource(c, party)
	}
	coll := s.collection(c, "reportees", items, lq, more)
	coll.Links.Add("find", Link{Href: s.baseURL(c) + "/api/reportees/{reporteeId}", IsTemplated: true})
	s.render(c, http.StatusOK, coll)
}

func (s *Server) getReportee(c *gin.Context) {
	raw := c.Param("reporteeId")
	party, _, err := s.represented(c, raw, raw)
	if err != nil {
		abort(c, err)
		return
	}
	s.render(c, http.StatusOK, s.reporteeResource(c, party))
}
