package store

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store/odatasql"
)

// ListQuery is a client's view of a list: an OData filter and order over the list's fields, and a page.
type ListQuery struct {
	Filter  odata.Expr // nil for all
	OrderBy []odata.OrderItem
	Page
}

// Page asks for a slice of a list. Limit+1 rows are read so the caller learns whether more follow.
type Page struct {
	Skip  int
	Limit int
}

// Unpaged asks for every row of a list, in its default order.
var Unpaged = ListQuery{Page: Page{Limit: math.MaxInt32}}

// listOrder is the order of a list: byDefault without $orderby, and tieBreaker after a client's $orderby, so
// that rows of equal values keep one order from page to page. A keyset list also starts its page after
// a key value (see keyset).
type listOrder struct {
	byDefault, tieBreaker string
	key                   string // "" unless keyset
	after                 int64
}

// keyset orders a list by key, a unique, never-null integer column, and starts the page after the key value
// after: the key of the last row the client has seen, so rows inserted or deleted elsewhere in the list
// while a client walks it never shift the rows it has yet to see.
func keyset(key string, after int64) listOrder {
	return listOrder{byDefault: key, tieBreaker: key, key: key, after: after}
}

// listClauses compiles q over fields into a WHERE condition (placeholders from $firstArg) and a tail of
// ORDER BY in order, OFFSET and LIMIT (one row more than the page, so the caller learns whether more follow).
func listClauses(q ListQuery, fields odatasql.Fields, order listOrder, firstArg int) (where, tail string, args []any, err error) {
	where = "TRUE"
	if q.Filter != nil {
		if where, args, err = odatasql.Where(q.Filter, fields, firstArg); err != nil {
			return "", "", nil, err
		}
	}
	orderBy := order.byDefault
	if len(q.OrderBy) > 0 {
		if orderBy, err = odatasql.OrderBy(q.OrderBy, fields, order.tieBreaker); err != nil {
			return "", "", nil, err
		}
	}
	if order.key != "" {
		args = append(args, order.after)
		where = fmt.Sprintf("%s AND %s > $%d", where, order.key, firstArg+len(args)-1)
	}
	n := firstArg + len(args)
	tail = fmt.Sprintf(" ORDER BY %s OFFSET $%d LIMIT $%d", orderBy, n, n+1)
	return where, tail, append(args, q.Skip, q.Limit+1), nil
}

// queryPage runs a list statement whose LIMIT asks for one row more than limit, and returns one page of
// rows and whether more follow.
func queryPage[T any](ctx context.Context, db DBTX, sql string, args []any, limit int, scan pgx.RowToFunc[T]) ([]T, bool, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, false, err
	}
	items, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, false, err
	}
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, false, nil
}
