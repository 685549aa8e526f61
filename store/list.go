package store

import (
	"fmt"

	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store/odatasql"
)

// ListQuery is a client's view of a list: an OData filter and order over the list's fields, and a page.
type ListQuery struct {
	Filter  odata.Expr // nil for all
	OrderBy []odata.OrderItem
	Page
}

// listClauses compiles q over fields into a WHERE condition (placeholders from $firstArg), an ORDER BY
// list that ends in tieBreaker or follows defaultOrder, and OFFSET/LIMIT placeholders after the filter's.
func listClauses(q ListQuery, fields odatasql.Fields, defaultOrder, tieBreaker string, firstArg int) (where, tail string, args []any, err error) {
	where = "TRUE"
	if q.Filter != nil {
		if where, args, err = odatasql.Where(q.Filter, fields, firstArg); err != nil {
			return "", "", nil, err
		}
	}
	order := defaultOrder
	if len(q.OrderBy) > 0 {
		if order, err = odatasql.OrderBy(q.OrderBy, fields, tieBreaker); err != nil {
			return "", "", nil, err
		}
	}
	n := firstArg + len(args)
	tail = fmt.Sprintf(" ORDER BY %s OFFSET $%d LIMIT $%d", order, n, n+1)
	return where, tail, append(args, q.Skip, q.Limit+1), nil
}
