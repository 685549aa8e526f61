package store

import (
	"context"
	"fmt"

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
	return trimPage(items, limit)
}
