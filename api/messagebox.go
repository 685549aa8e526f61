package api

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/store"
)

type mailboxCount struct {
	Type   string
	Status string
	Count  int
}

type mailboxSummary struct {
	ReporteeID           string `json:"ReporteeId"`
	Name                 string
	Type                 string
	UnreadCorrespondence int
	Counts               []mailboxCount `xmlitem:"Count"`
	Links                render.Links   `json:"_links"`
}

// getMessagebox summarises the mailboxes of everyone the caller represents: per reportee the counts of
// visible messages by type and status, unread correspondence first. Reportees page like any list.
func (h *mailboxHandlers) getMessagebox(c *gin.Context) {
	lq, err := parseListQuery(c)
	if err != nil {
		abort(c, err)
		return
	}
	p := principalOf(c)
	ctx := c.Request.Context()
	parties, more, err := h.who.ListReportees(ctx, p.Subject(), p.Self(), store.ServiceFilter{}, lq)
	if err != nil {
		abort(c, err)
		return
	}
	vis := make(map[int64]store.Visibility, len(parties))
	for _, party := range parties {
		rights, err := h.rights.For(ctx, p, party.ID)
		if err != nil {
			abort(c, err)
			return
		}
		vis[party.ID] = rights.Visibility()
	}
	counts, err := h.lists.Count(ctx, vis)
	if err != nil {
		abort(c, err)
		return
	}
	byReportee := map[int64][]mailboxCount{}
	for _, n := range counts {
		byReportee[n.ReporteeID] = append(byReportee[n.ReporteeID], mailboxCount{Type: n.Type, Status: n.Status, Count: n.Count})
	}
	items := make([]mailboxSummary, len(parties))
	for i, party := range parties {
		rep := reporteeResourceOf(c, party)
		sum := mailboxSummary{ReporteeID: rep.ReporteeID, Name: rep.Name, Type: rep.Type, Counts: byReportee[party.ID]}
		if sum.Counts == nil {
			sum.Counts = []mailboxCount{}
		}
		slices.SortStableFunc(sum.Counts, func(a, b mailboxCount) int {
			return cmp.Compare(unreadRank(b), unreadRank(a))
		})
		for _, n := range sum.Counts {
			sum.UnreadCorrespondence += n.Count * unreadRank(n)
		}
		sum.Links.Add("self", render.Link{Href: rep.Links.Self()})
		sum.Links.Add("messages", render.Link{Href: baseURL(c) + "/api/" + rep.ReporteeID + "/messages"})
		items[i] = sum
	}
	respond(c, http.StatusOK, collection(c, "mailboxes", items, lq, more))
}

func unreadRank(n mailboxCount) int {
	if n.Type == "Correspondence" && n.Status == "Ulest" {
		return 1
	}
	return 0
}
