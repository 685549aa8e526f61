package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/store"
)

// The events feeds: the outbox (store.AppendEvents) read in sequence order (events.Feed). A client continues after the
// last sequence it got (the next link), and never misses an event nor gets one twice: the outbox hands
// out sequences in commit order, without gaps.
//
// An end user sees the events of {who} that its rights show it in the mailbox (Read on the service,
// ArchiveRead once the message is archived); the events of {who}'s roles and local role definitions only
// when it is access manager for {who} (the one who may see and change them). A service owner sees the
// events of the messages of its own services.

// eventHandlers serve the events feeds.
type eventHandlers struct {
	feed events.Feed
}

// The size of a page of events, and the batch form of the CloudEvents JSON format the feeds also offer.
const (
	defaultEventPage = 50
	maxEventPage     = 200
	cloudEventsBatch = "application/cloudevents-batch+json"
)

// eventMediaTypes are the forms of a feed: the four of every resource, and a plain CloudEvents batch.
var eventMediaTypes = append(append([]string(nil), render.MediaTypes...), cloudEventsBatch)

func negotiateEvents(c *gin.Context) { negotiateOf(c, eventMediaTypes) }

// feedPage is what a feed request asks for, under the names of its feed's query parameters.
type feedPage struct {
	afterName, sizeName string
	after               int64
	size                int
}

// parseFeedPage reads the sequence to continue after (0: from the start) and the page size.
func parseFeedPage(c *gin.Context, afterName, sizeName string) (feedPage, error) {
	p := feedPage{afterName: afterName, sizeName: sizeName, size: defaultEventPage}
	if v, ok := c.GetQuery(afterName); ok {
		after, err := strconv.ParseInt(v, 10, 64)
		if err != nil || after < 0 {
			return p, problem.BadRequest("%s must be the sequence number of an event (0 or more), not %q", afterName, v)
		}
		p.after = after
	}
	if v, ok := c.GetQuery(sizeName); ok {
		size, err := strconv.Atoi(v)
		if err != nil || size < 1 || size > maxEventPage {
			return p, problem.BadRequest("%s must be a number of events from 1 to %d, not %q", sizeName, maxEventPage, v)
		}
		p.size = size
	}
	return p, nil
}

// eventResource is an event in the HAL forms: its data as an object, so the XML forms show its fields.
type eventResource struct {
	SpecVersion     string         `json:"specversion"`
	ID              string         `json:"id"`
	Source          string         `json:"source"`
	Type            string         `json:"type"`
	Subject         string         `json:"subject"`
	Time            string         `json:"time"`
	DataContentType string         `json:"datacontenttype"`
	Sequence        string         `json:"sequence"`
	Data            map[string]any `json:"data"`
}

func eventResourceOf(e events.CloudEvent) (eventResource, error) {
	r := eventResource{SpecVersion: e.SpecVersion, ID: e.ID, Source: e.Source, Type: e.Type, Subject: e.Subject,
		Time: e.Time.Format(time.RFC3339Nano), DataContentType: e.DataContentType, Sequence: e.Sequence}
	return r, json.Unmarshal(e.Data, &r.Data)
}

// respondFeed answers a page of a feed: the events, oldest first, and a next link that continues after the
// last of them (after the one asked for when there are none yet), also as a Link header.
func respondFeed(c *gin.Context, p feedPage, page []store.Event) {
	last := p.after
	if len(page) > 0 {
		last = page[len(page)-1].Seq
	}
	u := baseURL(c) + c.Request.URL.Path + "?"
	self := u + url.Values{p.afterName: {strconv.FormatInt(p.after, 10)}, p.sizeName: {strconv.Itoa(p.size)}}.Encode()
	next := u + url.Values{p.afterName: {strconv.FormatInt(last, 10)}, p.sizeName: {strconv.Itoa(p.size)}}.Encode()
	c.Header("Link", fmt.Sprintf(`<%s>; rel="next"`, next))
	batch := make([]events.CloudEvent, len(page))
	for i, e := range page {
		batch[i] = events.FromStored(e)
	}
	if render.Format(c) == cloudEventsBatch {
		respond(c, http.StatusOK, batch)
		return
	}
	items := make([]eventResource, len(batch))
	for i, e := range batch {
		var err error
		if items[i], err = eventResourceOf(e); err != nil {
			abort(c, err)
			return
		}
	}
	coll := render.Collection{Embedded: render.EmbedList("events", items)}
	coll.Links.Add("self", render.Link{Href: self}).Add("next", render.Link{Href: next})
	respond(c, http.StatusOK, coll)
}

// listReporteeEvents is GET /api/{who}/events?after=&size=.
func (h *eventHandlers) listReporteeEvents(c *gin.Context) {
	p, err := parseFeedPage(c, "after", "size")
	if err != nil {
		abort(c, err)
		return
	}
	party, rights := reporteeOf(c)
	page, _, err := h.feed.ReporteeEvents(c.Request.Context(), party.ID, rights.Visibility(), rights.AccessManager(), p.after, p.size)
	if err != nil {
		abort(c, err)
		return
	}
	respondFeed(c, p, page)
}

// listServiceOwnerEvents is GET /api/serviceowner/events/feed?eventOffset=&fetch=, the names of Altinn 2's feed.
func (h *eventHandlers) listServiceOwnerEvents(c *gin.Context) {
	p, err := parseFeedPage(c, "eventOffset", "fetch")
	if err != nil {
		abort(c, err)
		return
	}
	page, _, err := h.feed.ServiceOwnerEvents(c.Request.Context(), serviceOwnerOf(c).Code, p.after, p.size)
	if err != nil {
		abort(c, err)
		return
	}
	respondFeed(c, p, page)
}
