package events

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// Feed reads the outbox as the events feeds and the webhook deliveries show it: in sequence order, only
// what the reader may see. A reader that continues after the last seq it got misses none: the outbox hands
// out seqs in commit order, without gaps.
type Feed struct {
	*store.Queries
}

// NewFeed returns the feed over q (whose list timeout bounds its pages).
func NewFeed(q *store.Queries) Feed { return Feed{q} }

// ReporteeEvents returns a page of up to limit events of the reportee with a seq above after, oldest
// first, and whether more follow: the events of messages that vis lets the caller see (Read, or
// ArchiveRead once archived), and those of its roles and role definitions when roles is true.
func (f Feed) ReporteeEvents(ctx context.Context, reporteeID int64, vis store.Visibility, roles bool, after int64, limit int) ([]store.Event, bool, error) {
	visible, args := store.GrantsSQL(vis, "e.service_code, e.service_edition, e.archived", 5)
	sql := `SELECT ` + store.EventColumns + ` FROM events e
		WHERE e.reportee_id = $1 AND e.seq > $2 AND CASE WHEN e.service_code IS NULL THEN $3::bool ELSE ` + visible + ` END
		ORDER BY e.seq LIMIT $4`
	return store.QueryPage(ctx, f.Queries, sql, append([]any{reporteeID, after, roles, limit + 1}, args...), limit, store.ScanEvent)
}

// ServiceOwnerEvents returns a page of up to limit events of the owner's services with a seq above after,
// oldest first, and whether more follow.
func (f Feed) ServiceOwnerEvents(ctx context.Context, owner string, after int64, limit int) ([]store.Event, bool, error) {
	sql := `SELECT ` + store.EventColumns + ` FROM events e
		WHERE e.seq > $2 AND (e.service_code, e.service_edition) IN
			(SELECT s.service_code, s.service_edition FROM services s WHERE s.service_owner_code = $1)
		ORDER BY e.seq LIMIT $3`
	return store.QueryPage(ctx, f.Queries, sql, []any{owner, after, limit + 1}, limit, store.ScanEvent)
}

// EventsBySeq returns the events of seqs by their seq.
func (f Feed) EventsBySeq(ctx context.Context, seqs []int64) (map[int64]store.Event, error) {
	rows, err := f.DB().Query(ctx, `SELECT `+store.EventColumns+` FROM events e WHERE e.seq = ANY($1)`, seqs)
	if err != nil {
		return nil, err
	}
	list, err := pgx.CollectRows(rows, store.ScanEvent)
	out := make(map[int64]store.Event, len(list))
	for _, e := range list {
		out[e.Seq] = e
	}
	return out, err
}
