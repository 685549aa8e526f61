package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
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
	boxes, more, err := h.lists.Messagebox(c.Request.Context(), principalOf(c), h.rights, lq)
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]mailboxSummary, len(boxes))
	for i, box := range boxes {
		rep := reporteeResourceOf(c, box.Party)
		sum := mailboxSummary{ReporteeID: rep.ReporteeID, Name: rep.Name, Type: rep.Type, UnreadCorrespondence: box.UnreadCorrespondence,
			Counts: make([]mailboxCount, len(box.Counts))}
		for j, n := range box.Counts {
			sum.Counts[j] = mailboxCount{Type: n.Type, Status: n.Status, Count: n.Count}
		}
		sum.Links.Add("self", render.Link{Href: rep.Links.Self()})
		sum.Links.Add("messages", render.Link{Href: baseURL(c) + "/api/" + rep.ReporteeID + "/messages"})
		items[i] = sum
	}
	respond(c, http.StatusOK, collection(c, "mailboxes", items, lq, more))
}
