package mailbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// The list of every party's messages (/api/all/messages): one statement over every party the caller may
// represent, with the rights applied per message in SQL, and a search's month windows.

// PartyMessage is a message in the list of every party's messages, with the party it is for.
type PartyMessage struct {
	store.MessageSummary
	ReporteeID   int64
	ReporteeName string
}

// AllMessageFields are the fields of the list of every party's messages: the message's, and ReporteeId
// ("r" and the party id) to narrow it to some parties.
var AllMessageFields = func() odatasql.Fields {
	fields := odatasql.Fields{"ReporteeId": {Column: "m.reportee_id", Kind: odatasql.Int, Prefix: "r"}}
	for name, f := range MessageFields {
		fields[name] = f
	}
	return fields
}()

// grantedSQL is the condition that the holder in $1 (column holder of roles) holds, for the message's
// reportee, a role granting Read on the message's service, or ArchiveRead when it is archived: the rule of
// store.Visibility written over roles, so that one statement applies it to every party at once. Per message it
// is two unique-index probes (roles_party_holder or roles_login_holder, then role_definition_rights).
// OFFSET 0 keeps it that: without it PostgreSQL may hash every grant of the holder first (every party
// times every service it may read), which costs more than the first page of a newest-first walk.
func grantedSQL(holder string) string {
	return `EXISTS (SELECT 1 FROM roles ro
		JOIN role_definition_rights r ON r.role_definition_id = ro.role_definition_id
		WHERE ro.` + holder + ` = $1 AND ro.reportee_id = m.reportee_id
			AND r.service_code = m.service_code AND r.service_edition = m.service_edition
			AND r.action = CASE WHEN ` + store.ArchivedSQL + ` THEN 'ArchiveRead' ELSE 'Read' END
		OFFSET 0)`
}

// ListAllMessagesSQL is the statement AllMessages runs, with its arguments, for a resolved search;
// exported so benchmarks can time it bare.
func ListAllMessagesSQL(s store.Subject, selfID int64, lq store.ListQuery, search Search) (string, []any, error) {
	holder, id := "holder_party_id", s.PartyID
	if s.LoginID != 0 {
		holder, id = "holder_login_id", s.LoginID
	}
	args := []any{id, selfID}
	matches, searchArgs, err := search.sql(len(args) + 1)
	if err != nil {
		return "", nil, err
	}
	args = append(args, searchArgs...)
	if search.byMonth() && newestFirst(lq.OrderBy) {
		return listAllByMonthSQL(holder, args, lq, search)
	}
	where, tail, listArgs, err := store.ListClauses(lq, AllMessageFields, store.ListOrder{ByDefault: store.MessageDefaultOrder, TieBreaker: store.MessageTieBreaker}, len(args)+1)
	if err != nil {
		return "", nil, err
	}
	return `SELECT ` + allMessageColumns + store.MessageFrom + `
	JOIN parties p ON p.id = m.reportee_id
	WHERE m.deleted_at IS NULL AND (m.reportee_id = $2 OR ` + grantedSQL(holder) + `) AND ` + matches + ` AND ` + where + tail, append(args, listArgs...), nil
}

const allMessageColumns = store.MessageSummaryColumns + `, m.reportee_id, p.name`

// newestFirst tells whether a client's $orderby is the default order of messages, newest first.
func newestFirst(order []odata.OrderItem) bool {
	switch {
	case len(order) == 0:
		return true
	case order[0].Field != "CreatedDate" || !order[0].Desc:
		return false
	}
	return len(order) == 1 || len(order) == 2 && order[1].Field == "MessageId" && order[1].Desc
}

// listAllByMonthSQL is ListAllMessagesSQL for a search newest first (args holds the holder, the self id
// and the search's tsquery): the matches of the newest month of messages, then of the two months before
// it, the four before those, ..., sixteen (searchWindows), then of all older months, each window sorted
// newest first and cut at the page's end, in one statement that stops at the window that fills the page.
// Each window is one lookup of messages_search_months, whose entries are a month's share of a word's (see
// migration 020), so a search whose words are frequent but rarely together reads the matches of a few
// months from the table instead of every match; the older months are one lookup of messages_search_words
// with their month checked on each match. In a window the rights are checked on the matches in order,
// until the page is full, and the message's owner and party are joined to the page alone.
//
// The windows run in order, nested loops over generate_series, each a sorted subquery; the statement
// sorts the page only after its LIMIT: an ORDER BY over the windows would make PostgreSQL run every
// window before the first row.
func listAllByMonthSQL(holder string, args []any, lq store.ListQuery, search Search) (string, []any, error) {
	matches := fmt.Sprintf("m.search_words @@ $%d::tsquery", len(args))
	// Window k (from 0) holds the months newest - 2^(k+1) + 2 to newest - 2^k + 1; the rest, every month
	// before newest - 2^k + 2.
	months, monthArgs := search.monthSQL("w.newest - (2 << w.k) + 2", "w.newest - (1 << w.k) + 1", len(args)+1)
	args = append(args, monthArgs...)
	// The order is newest first (newestFirst); the statement pages with its own OFFSET and LIMIT.
	where, filterArgs, err := store.ListWhere(lq, AllMessageFields, store.ListOrder{}, len(args)+1)
	if err != nil {
		return "", nil, err
	}
	args = append(args, filterArgs...)
	skip, limit := len(args)+1, len(args)+2
	args = append(args, lq.Skip, lq.Limit+1)
	from := " FROM messages m"
	if strings.Contains(where, AllMessageFields["ServiceOwner"].Column) { // a $filter on the owner's name needs its join
		from = store.MessageFrom
	}
	// window is the page's share of the matches of cond: sorted, then the rights checked in order. A
	// window of months reads its matches unordered first (OFFSET 0 again), or PostgreSQL, guessing that
	// the months hold a hundredth of all messages, may walk messages_newest for them, computing each
	// message's month words, instead of looking them up in messages_search_months.
	window := func(cond string, lookup bool) string {
		matches := `SELECT ` + windowColumns + from + `
			WHERE ` + cond + ` AND m.deleted_at IS NULL AND ` + where
		if lookup {
			matches = `SELECT * FROM (` + matches + ` OFFSET 0) m`
		}
		return `(SELECT * FROM (` + matches + `
			ORDER BY ` + store.MessageDefaultOrder + ` OFFSET 0) m
		WHERE m.reportee_id = $2 OR ` + grantedSQL(holder) + fmt.Sprintf(`
		LIMIT $%d::bigint + $%d::bigint)`, skip, limit)
	}
	return fmt.Sprintf(`SELECT `+allMessageColumns+` FROM (SELECT x.*
		FROM (SELECT search_month(created_date) AS newest FROM messages ORDER BY created_date DESC LIMIT 1) n
		CROSS JOIN LATERAL (SELECT n.newest, k FROM generate_series(0, %d) k) w
		CROSS JOIN LATERAL (%s
			UNION ALL %s) x
		OFFSET $%d LIMIT $%d) m
	JOIN services s ON s.service_code = m.service_code AND s.service_edition = m.service_edition
	JOIN service_owners o ON o.code = s.service_owner_code
	JOIN parties p ON p.id = m.reportee_id
	ORDER BY `+store.MessageDefaultOrder, searchWindows,
		window(fmt.Sprintf("w.k < %d AND %s", searchWindows, months), true),
		window(fmt.Sprintf("w.k = %d AND %s AND m.created_date < search_month_start(w.newest - (1 << w.k) + 2)", searchWindows, matches), false),
		skip, limit), args, nil
}

// windowColumns are the columns of messages m that allMessageColumns read.
const windowColumns = `m.id, m.subject, m.status, m.type, m.service_code, m.service_edition, m.created_date, m.last_changed,
	m.last_changed_by, m.message_sender, m.reply_options, m.is_confirmation_needed, m.due_at, m.reportee_id`

// AllMessages lists the messages of every party the subject may represent — selfID (when not zero),
// whose messages it sees whole, and each party it holds a role for, whose messages it sees as its roles
// grant — that search finds, newest first unless lq orders otherwise, in one statement.
func (l *Lists) AllMessages(ctx context.Context, s store.Subject, selfID int64, lq store.ListQuery, search Search) (messages []PartyMessage, more bool, err error) {
	if search, err = ResolveSearch(ctx, l.q.DB(), search); err != nil {
		return nil, false, err
	}
	// As in Messages: one m and one list of targets for every row.
	var m PartyMessage
	targets := append(store.SummaryTargets(&m.MessageSummary), &m.ReporteeID, &m.ReporteeName)
	return store.BuiltPage(ctx, l.q, lq.Limit, func(row pgx.CollectableRow) (PartyMessage, error) {
		m = PartyMessage{}
		err := row.Scan(targets...)
		return m, err
	})(ListAllMessagesSQL(s, selfID, lq, search))
}
