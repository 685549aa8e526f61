package mailbox

import (
	"context"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// Lists are the mailbox's lists: a reportee's messages and trashbin as the caller's rights show them,
// every party's messages at once, free-text search over them, and the messagebox's counts. Every list is
// one statement, its page and whether more follow read in one round trip.
type Lists struct {
	q *store.Queries
}

// NewLists returns the lists over q (whose list timeout bounds them).
func NewLists(q *store.Queries) *Lists { return &Lists{q: q} }

// MessageFields are the fields of a message that clients can filter and order on.
var MessageFields = odatasql.Fields{
	"MessageId":           {Column: "m.id", Kind: odatasql.String},
	"Subject":             {Column: "m.subject", Kind: odatasql.String},
	"Status":              {Column: "m.status", Kind: odatasql.String},
	"Type":                {Column: "m.type", Kind: odatasql.String},
	"ServiceOwner":        {Column: "o.name", Kind: odatasql.String},
	"ServiceCode":         {Column: "m.service_code", Kind: odatasql.String},
	"ServiceEdition":      {Column: "m.service_edition", Kind: odatasql.Int},
	"CreatedDate":         {Column: "m.created_date", Kind: odatasql.DateTime},
	"LastChangedDateTime": {Column: "m.last_changed", Kind: odatasql.DateTime},
	"LastChangedBy":       {Column: "m.last_changed_by", Kind: odatasql.String},
	"MessageSender":       {Column: "m.message_sender", Kind: odatasql.String},
	// ReceivedByServiceOwnerDateTime is null until the agency has confirmed a submitted form task.
	"ReceivedByServiceOwnerDateTime": {Column: "m.received_by_owner_at", Kind: odatasql.DateTime},
	// The dates of a sent correspondence; null on the others.
	"VisibleDateTime":           {Column: "m.visible_at", Kind: odatasql.DateTime},
	"DueDateTime":               {Column: "m.due_at", Kind: odatasql.DateTime},
	"AllowSystemDeleteDateTime": {Column: "m.allow_system_delete_at", Kind: odatasql.DateTime},
}

// ListMessagesSQL is the statement Messages runs, with its arguments, for a resolved search; exported so
// benchmarks can time it bare.
func ListMessagesSQL(reporteeID int64, vis store.Visibility, lq store.ListQuery, search Search) (string, []any, error) {
	visible, args := store.VisibilitySQL(vis, 2)
	args = append([]any{reporteeID}, args...)
	matches, searchArgs, err := search.sql(len(args) + 1)
	if err != nil {
		return "", nil, err
	}
	args = append(args, searchArgs...)
	where, tail, listArgs, err := store.ListClauses(lq, MessageFields, store.ListOrder{ByDefault: store.MessageDefaultOrder, TieBreaker: store.MessageTieBreaker}, len(args)+1)
	if err != nil {
		return "", nil, err
	}
	return `SELECT ` + store.MessageSummaryColumns + store.MessageFrom + `
	WHERE m.reportee_id = $1 AND m.deleted_at IS NULL AND ` + visible + ` AND ` + matches + ` AND ` + where + tail, append(args, listArgs...), nil
}

// Messages lists the messages of a reportee that vis lets the caller see and search finds, newest first
// unless lq orders otherwise; more is true when messages follow the page.
func (l *Lists) Messages(ctx context.Context, reporteeID int64, vis store.Visibility, lq store.ListQuery, search Search) (messages []store.MessageSummary, more bool, err error) {
	if search, err = ResolveSearch(ctx, l.q.DB(), search); err != nil {
		return nil, false, err
	}
	// Each row is scanned into the one m through the one list of targets, and copied into the page: not
	// two allocations per row. m starts empty for every row (a JSON column decodes into what it holds).
	var m store.MessageSummary
	targets := store.SummaryTargets(&m)
	return store.BuiltPage(ctx, l.q, lq.Limit, func(row pgx.CollectableRow) (store.MessageSummary, error) {
		m = store.MessageSummary{}
		err := row.Scan(targets...)
		return m, err
	})(ListMessagesSQL(reporteeID, vis, lq, search))
}

// TrashedMessage is a message of the trashbin as its list shows it.
type TrashedMessage struct {
	store.MessageSummary
	DeletedAt time.Time
	DeletedBy string
}

// TrashbinFields are the fields of the trashbin that clients can filter and order on: a message's, and
// when and by whom it was deleted.
var TrashbinFields = func() odatasql.Fields {
	f := maps.Clone(MessageFields)
	f["DeletedDateTime"] = odatasql.Field{Column: "m.deleted_at", Kind: odatasql.DateTime}
	f["DeletedBy"] = odatasql.Field{Column: "m.deleted_by", Kind: odatasql.String}
	return f
}()

// Trashbin lists the messages of the reportee's trashbin that vis lets the caller see, newest deletion
// first unless lq orders otherwise.
func (l *Lists) Trashbin(ctx context.Context, reporteeID int64, vis store.Visibility, lq store.ListQuery) ([]TrashedMessage, bool, error) {
	visible, args := store.VisibilitySQL(vis, 2)
	args = append([]any{reporteeID}, args...)
	where, tail, listArgs, err := store.ListClauses(lq, TrashbinFields, store.ListOrder{ByDefault: "m.deleted_at DESC, m.id DESC", TieBreaker: store.MessageTieBreaker}, len(args)+1)
	if err != nil {
		return nil, false, err
	}
	sql := `SELECT ` + store.MessageSummaryColumns + `, m.deleted_at, m.deleted_by` + store.MessageFrom + `
	WHERE m.reportee_id = $1 AND m.deleted_at IS NOT NULL AND ` + visible + ` AND ` + where + tail
	return store.QueryPage(ctx, l.q, sql, append(args, listArgs...), lq.Limit, func(row pgx.CollectableRow) (TrashedMessage, error) {
		var m TrashedMessage
		return m, row.Scan(append(store.SummaryTargets(&m.MessageSummary), &m.DeletedAt, &m.DeletedBy)...)
	})
}

// MessageCount is how many messages of one type and status a reportee has that the caller may see.
type MessageCount struct {
	ReporteeID int64
	Type       string
	Status     string
	Count      int
}

// CountMessagesSQL counts by reportee, type and status. Reportees seen whole travel in $2; the grants of
// the others travel flattened over all reportees as parallel arrays, so any number of reportees is one
// statement and one hashed subplan.
const CountMessagesSQL = `SELECT m.reportee_id, m.type, m.status, count(*)
	FROM messages m
	WHERE m.reportee_id = ANY ($1::bigint[]) AND m.deleted_at IS NULL
		AND (m.reportee_id = ANY ($2::bigint[])
			OR (m.reportee_id, m.service_code, m.service_edition, ` + store.ArchivedSQL + `)
				IN (SELECT * FROM unnest($3::bigint[], $4::text[], $5::int[], $6::bool[])))
	GROUP BY 1, 2, 3
	ORDER BY 1, 2, 3`

// CountMessagesArgs are the arguments of CountMessagesSQL for vis.
func CountMessagesArgs(vis map[int64]store.Visibility) []any {
	var (
		reportees, all, grantReportees []int64
		codes                          []string
		editions                       []int32
		archived                       []bool
	)
	grant := func(id int64, keys []store.ServiceKey, arch bool) {
		for _, k := range keys {
			grantReportees, codes = append(grantReportees, id), append(codes, k.Code)
			editions, archived = append(editions, int32(k.Edition)), append(archived, arch)
		}
	}
	for id, v := range vis {
		reportees = append(reportees, id)
		if v.All {
			all = append(all, id)
			continue
		}
		grant(id, v.Read, false)
		grant(id, v.ArchiveRead, true)
	}
	return []any{reportees, all, grantReportees, codes, editions, archived}
}

// Count counts, per reportee of vis, the messages the caller may see by type and status (the
// messagebox overview), in one statement. Combinations without messages are left out.
func (l *Lists) Count(ctx context.Context, vis map[int64]store.Visibility) ([]MessageCount, error) {
	rows, err := l.q.DB().Query(ctx, CountMessagesSQL, CountMessagesArgs(vis)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[MessageCount])
}
