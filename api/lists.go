package api

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
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

// serviceCodePattern is what a service code in a query may look like.
var serviceCodePattern = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)

// serviceFilterOf reads the query parameters serviceCode and serviceEdition that narrow a list to a
// service (any edition without serviceEdition); malformed values get 400, never an unfiltered list.
func serviceFilterOf(c *gin.Context) (store.ServiceFilter, error) {
	f := store.ServiceFilter{Code: c.Query("serviceCode")}
	if f.Code != "" && !serviceCodePattern.MatchString(f.Code) {
		return f, problem.BadRequest("serviceCode %q is not a service code (letters, digits, '-' or '_', at most 64)", f.Code)
	}
	if e := c.Query("serviceEdition"); e != "" {
		n, err := strconv.Atoi(e)
		if err != nil || n <= 0 || n > math.MaxInt32 {
			return f, problem.BadRequest("serviceEdition must be a positive integer")
		}
		if f.Code == "" {
			return f, problem.BadRequest("serviceEdition needs serviceCode")
		}
		f.Edition = n
	}
	return f, nil
}

// collection wraps a page of items with self, and next/prev links that keep the rest of the query.
func collection(c *gin.Context, name string, items any, lq store.ListQuery, more bool) render.Collection {
	var links render.Links
	links.Add("self", render.Link{Href: pageURL(c, -1)})
	if more {
		links.Add("next", render.Link{Href: pageURL(c, lq.Skip+lq.Limit)})
	}
	if lq.Skip > 0 {
		links.Add("prev", render.Link{Href: pageURL(c, max(0, lq.Skip-lq.Limit))})
	}
	return render.Collection{Links: links, Embedded: render.EmbedList(name, items)}
}

// pageURL is the request's URL with $skip set to skip, or unchanged for a negative skip.
func pageURL(c *gin.Context, skip int) string {
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
	return baseURL(c) + u.RequestURI()
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

// respondList answers the common shape of a list endpoint: the OData options of the request, one page from
// load, each row as a resource, and the page's own links with links (a find template, …) added.
func respondList[T, R any](c *gin.Context, name string, load func(store.ListQuery) ([]T, bool, error), resource func(T) R, links render.Links) {
	lq, err := parseListQuery(c)
	if err != nil {
		abort(c, err)
		return
	}
	rows, more, err := load(lq)
	var broad *store.TooBroadError
	if errors.As(err, &broad) {
		err = problem.TooBroad(broad, givenOptions(c))
	}
	if err != nil {
		abort(c, err)
		return
	}
	items := make([]R, len(rows))
	for i, r := range rows {
		items[i] = resource(r)
	}
	coll := collection(c, name, items, lq, more)
	maps.Copy(coll.Links, links)
	respond(c, http.StatusOK, coll)
}

// findLink is the link of a list to one of its items, from the template of the item's address.
func findLink(template string) render.Links {
	var l render.Links
	l.Add("find", render.Link{Href: template, IsTemplated: true})
	return l
}

// givenOptions names the options of a list request that decide how much the database must look at.
func givenOptions(c *gin.Context) []string {
	var given []string
	for _, option := range []string{"search", "$filter", "$orderby", "$skip"} {
		if v := c.Query(option); v != "" {
			given = append(given, fmt.Sprintf("%s %q", option, v))
		}
	}
	return given
}

// The service-owner lists page by keyset: a continuation token carries the key of the last row.

// soPage is the page a service-owner list asks for: the OData options, and the key after which a
// continuation token starts it (0 without one).
type soPage struct {
	store.ListQuery
	list     string
	after    int64
	hasToken bool
}

// continuationPrefix versions the token format.
const continuationPrefix = "so1."

// parseSOListQuery reads the OData options and the continuation token of a service-owner list. A token
// continues the list's default order after the last row of the previous page, so it cannot be combined
// with $skip or $orderby.
func parseSOListQuery(c *gin.Context, list string) (soPage, error) {
	lq, err := parseListQuery(c)
	if err != nil {
		return soPage{}, err
	}
	pg := soPage{ListQuery: lq, list: list}
	token, ok := c.GetQuery("continuation")
	if !ok {
		return pg, nil
	}
	if c.Query("$skip") != "" || len(lq.OrderBy) > 0 {
		return pg, problem.New(http.StatusBadRequest, "invalid-continuation",
			"continuation follows the list's default order from where the last page ended; it cannot be combined with $skip or $orderby")
	}
	pg.hasToken = true
	if pg.after, ok = decodeContinuation(token, list); !ok {
		return pg, problem.New(http.StatusBadRequest, "invalid-continuation", "the continuation token is not one this list issued")
	}
	return pg, nil
}

// encodeContinuation makes the opaque token that starts a page of list after the row with key.
func encodeContinuation(list string, key int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(continuationPrefix + list + "." + strconv.FormatInt(key, 10)))
}

func decodeContinuation(token, list string) (int64, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(string(raw), continuationPrefix+list+".")
	if !ok {
		return 0, false
	}
	key, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || key < 0 {
		return 0, false
	}
	return key, true
}

// renderSOPage answers a service-owner list with one page of rows as resources; key is a row's keyset key,
// the last of which the continuation token carries.
func renderSOPage[T, R any](c *gin.Context, name string, rows []T, pg soPage, more bool, resource func(T) R, key func(T) int64) {
	items := make([]R, len(rows))
	var last int64
	for i, row := range rows {
		items[i], last = resource(row), key(row)
	}
	respond(c, http.StatusOK, soCollection(c, name, items, pg, more, last))
}

// soCollection wraps a page of a service-owner list. In the default order its next link carries a
// continuation token made from lastKey, the key of the page's last row; under $orderby it pages by $skip.
func soCollection(c *gin.Context, name string, items any, pg soPage, more bool, lastKey int64) render.Collection {
	if len(pg.OrderBy) > 0 {
		return collection(c, name, items, pg.ListQuery, more)
	}
	var links render.Links
	links.Add("self", render.Link{Href: pageURL(c, -1)})
	if more {
		u := *c.Request.URL
		q := u.Query()
		q.Del("$skip")
		q.Set("continuation", encodeContinuation(pg.list, lastKey))
		u.RawQuery = encodeQuery(q)
		links.Add("next", render.Link{Href: baseURL(c) + u.RequestURI()})
	}
	if pg.Skip > 0 {
		links.Add("prev", render.Link{Href: pageURL(c, max(0, pg.Skip-pg.Limit))})
	}
	return render.Collection{Links: links, Embedded: render.EmbedList(name, items)}
}
