package api

import (
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
)

// MaxPageSize is the most elements any list returns at once.
const MaxPageSize = 50

// parseListQuery reads the OData options every list accepts: $skip, $top (capped at 50), $filter, $orderby.
func parseListQuery(c *gin.Context) (store.ListQuery, error) {
	var lq store.ListQuery
	var err error
	if lq.Skip, lq.Limit, err = odata.ParsePaging(c.Query("$skip"), c.Query("$top"), MaxPageSize); err != nil {
		return lq, err
	}
	if f := c.Query("$filter"); f != "" {
		if lq.Filter, err = odata.ParseFilter(f); err != nil {
			return lq, err
		}
	}
	if o := c.Query("$orderby"); o != "" {
		if lq.OrderBy, err = odata.ParseOrderBy(o); err != nil {
			return lq, err
		}
	}
	return lq, nil
}

// collection wraps a page of items with self, and next/prev links that keep the rest of the query.
func (s *Server) collection(c *gin.Context, name string, items any, lq store.ListQuery, more bool) render.Collection {
	var links render.Links
	links.Add("self", render.Link{Href: s.pageURL(c, -1)})
	if more {
		links.Add("next", render.Link{Href: s.pageURL(c, lq.Skip+lq.Limit)})
	}
	if lq.Skip > 0 {
		links.Add("prev", render.Link{Href: s.pageURL(c, max(0, lq.Skip-lq.Limit))})
	}
	return render.Collection{Links: links, Embedded: render.EmbedList(name, items)}
}

// pageURL is the request's URL with $skip set to skip, or unchanged for a negative skip.
func (s *Server) pageURL(c *gin.Context, skip int) string {
	u := *c.Request.URL
	if skip >= 0 {
		q := u.Query()
		if skip == 0 {
			q.Del("$skip")
		} else {
			q.Set("$skip", strconv.Itoa(skip))
		}
		u.RawQuery = encodeQuery(q)
	}
	return s.baseURL(c) + u.RequestURI()
}

// encodeQuery encodes like url.Values.Encode but leaves the OData "$" readable.
func encodeQuery(q url.Values) string {
	enc := q.Encode()
	out := make([]byte, 0, len(enc))
	for i := 0; i < len(enc); i++ {
		if i+2 < len(enc) && enc[i] == '%' && enc[i+1] == '2' && enc[i+2] == '4' {
			out = append(out, '$')
			i += 2
			continue
		}
		out = append(out, enc[i])
	}
	return string(out)
}

// listPage answers the common shape of a list endpoint: the OData options of the request, one page from
// load, and each row as a resource. It returns false when it answered with an error.
func listPage[T, R any](s *Server, c *gin.Context, name string, load func(store.ListQuery) ([]T, bool, error), resource func(T) R) (render.Collection, bool) {
	lq, err := parseListQuery(c)
	if err != nil {
		abort(c, err)
		return render.Collection{}, false
	}
	rows, more, err := load(lq)
	if err != nil {
		abort(c, err)
		return render.Collection{}, false
	}
	items := make([]R, len(rows))
	for i, r := range rows {
		items[i] = resource(r)
	}
	return s.collection(c, name, items, lq, more), true
}
