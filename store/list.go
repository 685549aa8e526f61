package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

// ListOrder is the order of a list: ByDefault without $orderby, and TieBreaker after a client's $orderby, so
// that rows of equal values keep one order from page to page. A keyset list also starts its page after
// a key value (see Keyset).
type ListOrder struct {
	ByDefault, TieBreaker string
	key                   string // "" unless keyset
	after                 int64
}

// Keyset orders a list by key, a unique, never-null integer column, and starts the page after the key value
// after: the key of the last row the client has seen, so rows inserted or deleted elsewhere in the list
// while a client walks it never shift the rows it has yet to see.
func Keyset(key string, after int64) ListOrder {
	return ListOrder{ByDefault: key, TieBreaker: key, key: key, after: after}
}

// ListClauses compiles q over fields into a WHERE condition (placeholders from $firstArg) and a tail of
// ORDER BY in order, OFFSET and LIMIT (one row more than the page, so the caller learns whether more follow).
func ListClauses(q ListQuery, fields odatasql.Fields, order ListOrder, firstArg int) (where, tail string, args []any, err error) {
	if where, args, err = ListWhere(q, fields, order, firstArg); err != nil {
		return "", "", nil, err
	}
	orderBy := order.ByDefault
	if len(q.OrderBy) > 0 {
		if orderBy, err = odatasql.OrderBy(q.OrderBy, fields, order.TieBreaker); err != nil {
			return "", "", nil, err
		}
	}
	n := firstArg + len(args)
	tail = fmt.Sprintf(" ORDER BY %s OFFSET $%d LIMIT $%d", orderBy, n, n+1)
	return where, tail, append(args, q.Skip, q.Limit+1), nil
}

// ListWhere is the WHERE condition of ListClauses alone: q's $filter over fields and order's keyset
// condition, placeholders from $firstArg.
func ListWhere(q ListQuery, fields odatasql.Fields, order ListOrder, firstArg int) (where string, args []any, err error) {
	where = "TRUE"
	if q.Filter != nil {
		if where, args, err = odatasql.Where(q.Filter, fields, firstArg); err != nil {
			return "", nil, err
		}
	}
	if order.key != "" {
		args = append(args, order.after)
		where = fmt.Sprintf("%s AND %s > $%d", where, order.key, firstArg+len(args)-1)
	}
	return where, args, nil
}

// TooBroadError reports a list statement cut off by the list timeout: the client's query matched or
// walked too many rows. The problem mapper answers it with 400 query-too-broad.
type TooBroadError struct {
	Timeout time.Duration
}

func (e *TooBroadError) Error() string {
	return fmt.Sprintf("the list took longer than %s to find", e.Timeout)
}

// WithListTimeout returns queries over the same connection whose list statements are cancelled by
// PostgreSQL after d (statement_timeout), as *TooBroadError; zero leaves them unbounded.
func (q *Queries) WithListTimeout(d time.Duration) *Queries {
	return &Queries{db: q.db, listTimeout: d}
}

// CustomPlansSQL makes the statements after it in the transaction planned for their parameters. The list
// statements depend on them (search words, filters, the services a caller may read): the generic plan
// PostgreSQL may switch to after five runs of a cached statement guesses their selectivity (0.5 %) and,
// for a word in a tenth of one party's messages, ANDs the GIN bitmaps of the whole table with the party's
// rows: 125–215 ms instead of 5–30 ms on 1,000,000 messages.
const CustomPlansSQL = "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"

// ListBatch is the one round trip of a list statement: CustomPlansSQL and, under a list timeout (not
// zero), a transaction-local statement_timeout, then the statement; the settings end with it. Exported so
// benchmarks run exactly what the store runs.
func ListBatch(timeout time.Duration, sql string, args []any) *pgx.Batch {
	b := &pgx.Batch{}
	if timeout > 0 {
		b.Queue(CustomPlansSQL+", set_config('statement_timeout', $1, true)", strconv.FormatInt(timeout.Milliseconds(), 10))
	} else {
		b.Queue(CustomPlansSQL)
	}
	b.Queue(sql, args...)
	return b
}

// QueryPage runs a list statement whose LIMIT asks for one row more than limit, and returns one page of
// rows and whether more follow, in the one round trip of ListBatch.
func QueryPage[T any](ctx context.Context, q *Queries, sql string, args []any, limit int, scan pgx.RowToFunc[T]) ([]T, bool, error) {
	var (
		rows pgx.Rows
		err  error
	)
	batcher, canBatch := q.db.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if canBatch {
		results := batcher.SendBatch(ctx, ListBatch(q.listTimeout, sql, args))
		defer results.Close()
		if _, err = results.Exec(); err == nil {
			rows, err = results.Query()
		}
	} else {
		rows, err = q.db.Query(ctx, sql, args...)
	}
	if err != nil {
		return nil, false, q.tooBroad(ctx, err)
	}
	// Room for the page and the row that tells more follow: the slice is not grown row by row.
	items, err := pgx.AppendRows(make([]T, 0, min(max(limit, 0), maxPresized)+1), rows, scan)
	if err != nil {
		return nil, false, q.tooBroad(ctx, err)
	}
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, false, nil
}

// maxPresized bounds the rows QueryPage makes room for at once; pages are at most 50 rows.
const maxPresized = 100

// BuiltPage runs, as QueryPage does, a list statement with its arguments as a ...SQL function builds it
// (benchmarks time those bare), or returns the error that building it met.
func BuiltPage[T any](ctx context.Context, q *Queries, limit int, scan pgx.RowToFunc[T]) func(sql string, args []any, err error) ([]T, bool, error) {
	return func(sql string, args []any, err error) ([]T, bool, error) {
		if err != nil {
			return nil, false, err
		}
		return QueryPage(ctx, q, sql, args, limit, scan)
	}
}

// tooBroad turns the cancellation by statement_timeout into a *TooBroadError; a cancellation because the
// request ended (the same SQLSTATE) stays what it is.
func (q *Queries) tooBroad(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	if q.listTimeout > 0 && ctx.Err() == nil && errors.As(err, &pgErr) && pgErr.Code == "57014" { // query_canceled
		return &TooBroadError{Timeout: q.listTimeout}
	}
	return err
}
