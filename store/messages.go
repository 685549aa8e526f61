package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store/odatasql"
)

// MessageSummary is a message as the list view shows it: without Summary, Body and ArchiveReference.
// Optional text fields are "" when the message has none.
type MessageSummary struct {
	MessageID           string
	Subject             string
	Status              string
	Type                string // FormTask or Correspondence
	ServiceOwner        string // the owner's Name
	ServiceCode         string
	ServiceEdition      int
	CreatedDate         time.Time
	LastChangedDateTime time.Time
	LastChangedBy       string
	MessageSender       string // Correspondence only
	ReplyOptions        []ReplyOption
	// IsConfirmationNeeded is set on a correspondence whose sender asks the reader to confirm it; DueAt is
	// the date a sent correspondence is due (nil when none).
	IsConfirmationNeeded bool
	DueAt                *time.Time
}

// Service is the service edition of the message.
func (m MessageSummary) Service() ServiceKey {
	return ServiceKey{Code: m.ServiceCode, Edition: m.ServiceEdition}
}

// ReplyOption is a way to answer a correspondence, as its service owner set it.
type ReplyOption struct {
	Type               string // Service, ArchiveReference or URL
	URL                string
	Text               string
	ServiceCode        string `json:",omitempty"` // Type Service only
	ServiceEditionCode int    `json:",omitempty"` // Type Service only
}

// Message is the single-message view, with its forms and attachments (metadata only).
type Message struct {
	MessageSummary
	Summary          string
	Body             string // HTML
	ArchiveReference string
	Forms            []Form
	Attachments      []Attachment
	// ConfirmedAt (nil until then) and ConfirmedBy record the confirmation of one that IsConfirmationNeeded.
	ConfirmedAt *time.Time
	ConfirmedBy string
	// DeletedAt is set (and DeletedBy) while the message is in the trashbin.
	DeletedAt         *time.Time
	DeletedBy         string
	CustomMessageData []CustomData
	// ReceivedByOwnerAt is when the owner of a form task's service confirmed it has received its archive
	// (package submission); nil until then.
	ReceivedByOwnerAt *time.Time
	// The dates a service owner sent a correspondence with (package correspondence); nil when not set.
	VisibleAt           *time.Time
	AllowSystemDeleteAt *time.Time
}

// CustomData is one key/value pair of the extra data a service owner sent with a message.
type CustomData struct {
	Key   string
	Value string
}

// Form is a form of a form task, without its data.
type Form struct {
	ID                int64
	Type              string // MainForm or SubForm
	DataFormatID      string
	DataFormatVersion int
	Name              string
	ValidationStatus  string
}

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

const (
	// Most messages have no reply options: NULLIF sends those as NULL, which scans to a nil slice without
	// a JSON decode per row.
	messageSummaryColumns = `m.id, m.subject, m.status, m.type, o.name, m.service_code, m.service_edition,
	m.created_date, m.last_changed, m.last_changed_by, COALESCE(m.message_sender, ''), NULLIF(m.reply_options, '[]'),
	m.is_confirmation_needed, m.due_at`
	messageFrom = `
	FROM messages m` + messageJoins
	// messageJoins join a message m's service and its owner.
	messageJoins = `
	JOIN services s ON s.service_code = m.service_code AND s.service_edition = m.service_edition
	JOIN service_owners o ON o.code = s.service_owner_code`
	// The tie-breaker follows the default order's direction, so "$orderby=CreatedDate desc" still walks
	// messages_mailbox as it is.
	messageDefaultOrder = "m.created_date DESC, m.id DESC"
	messageTieBreaker   = "m.id DESC"
)

func summaryTargets(m *MessageSummary) []any {
	return []any{&m.MessageID, &m.Subject, &m.Status, &m.Type, &m.ServiceOwner, &m.ServiceCode, &m.ServiceEdition,
		&m.CreatedDate, &m.LastChangedDateTime, &m.LastChangedBy, &m.MessageSender, &m.ReplyOptions, &m.IsConfirmationNeeded, &m.DueAt}
}

// ListMessagesSQL is the statement ListMessages runs, with its arguments, for a resolved search; exported so
// benchmarks can time it bare.
func ListMessagesSQL(reporteeID int64, vis Visibility, lq ListQuery, search Search) (string, []any, error) {
	visible, args := visibilitySQL(vis, 2)
	args = append([]any{reporteeID}, args...)
	matches, searchArgs, err := search.sql(len(args) + 1)
	if err != nil {
		return "", nil, err
	}
	args = append(args, searchArgs...)
	where, tail, listArgs, err := ListClauses(lq, MessageFields, ListOrder{ByDefault: messageDefaultOrder, TieBreaker: messageTieBreaker}, len(args)+1)
	if err != nil {
		return "", nil, err
	}
	return `SELECT ` + messageSummaryColumns + messageFrom + `
	WHERE m.reportee_id = $1 AND m.deleted_at IS NULL AND ` + visible + ` AND ` + matches + ` AND ` + where + tail, append(args, listArgs...), nil
}

// ListMessages lists the messages of a reportee that vis lets the caller see and search finds, newest first
// unless lq orders otherwise; more is true when messages follow the page.
func (q *Queries) ListMessages(ctx context.Context, reporteeID int64, vis Visibility, lq ListQuery, search Search) (messages []MessageSummary, more bool, err error) {
	if search, err = q.ResolveSearch(ctx, search); err != nil {
		return nil, false, err
	}
	// Each row is scanned into the one m through the one list of targets, and copied into the page: not
	// two allocations per row. m starts empty for every row (a JSON column decodes into what it holds).
	var m MessageSummary
	targets := summaryTargets(&m)
	return BuiltPage(ctx, q, lq.Limit, func(row pgx.CollectableRow) (MessageSummary, error) {
		m = MessageSummary{}
		err := row.Scan(targets...)
		return m, err
	})(ListMessagesSQL(reporteeID, vis, lq, search))
}

// GetMessage returns one message in the reportee's mailbox (not in its trashbin) with its forms and
// attachments, or ErrNotFound. It does not apply a Visibility: the caller checks Allows(m.Service(), m.Status).
func (q *Queries) GetMessage(ctx context.Context, reporteeID int64, messageID string) (Message, error) {
	return q.getMessage(ctx, reporteeID, messageID, false)
}

// GetTrashedMessage is GetMessage for a message in the reportee's trashbin.
func (q *Queries) GetTrashedMessage(ctx context.Context, reporteeID int64, messageID string) (Message, error) {
	return q.getMessage(ctx, reporteeID, messageID, true)
}

func (q *Queries) getMessage(ctx context.Context, reporteeID int64, messageID string, trashbin bool) (Message, error) {
	var m Message
	err := q.db.QueryRow(ctx, `SELECT `+messageColumns+messageFrom+`
		WHERE m.id = $1 AND m.reportee_id = $2 AND (m.deleted_at IS NULL) <> $3`, messageID, reporteeID, trashbin).
		Scan(messageTargets(&m)...)
	return m, NotFound(err)
}

// messageColumns are the single-message view of messages m (with messageJoins), as messageTargets scans it:
// GetMessage's and MessageReader's statement.
const messageColumns = messageSummaryColumns + `,
	COALESCE(m.summary, ''), COALESCE(m.body, ''), COALESCE(m.archive_reference, ''),
	COALESCE((SELECT json_agg(json_build_object('ID', f.id, 'Type', f.type, 'DataFormatID', f.data_format_id,
			'DataFormatVersion', f.data_format_version, 'Name', f.name, 'ValidationStatus', f.validation_status)
			ORDER BY f.ordinal)
		FROM forms f WHERE f.message_id = m.id), '[]'),
	COALESCE((SELECT json_agg(json_build_object(` + attachmentJSONFields + `) ORDER BY a.ordinal)
		FROM attachments a WHERE a.message_id = m.id), '[]'),
	m.confirmed_at, COALESCE(m.confirmed_by, ''), m.deleted_at, COALESCE(m.deleted_by, ''),
	COALESCE(m.custom_message_data, '[]'), m.received_by_owner_at, m.visible_at, m.allow_system_delete_at`

func messageTargets(m *Message) []any {
	return append(summaryTargets(&m.MessageSummary), &m.Summary, &m.Body, &m.ArchiveReference, &m.Forms, &m.Attachments,
		&m.ConfirmedAt, &m.ConfirmedBy, &m.DeletedAt, &m.DeletedBy, &m.CustomMessageData,
		&m.ReceivedByOwnerAt, &m.VisibleAt, &m.AllowSystemDeleteAt)
}

// GetForm returns a form of a message of the reportee, or ErrNotFound.
func (q *Queries) GetForm(ctx context.Context, reporteeID int64, messageID string, formID int64) (Form, error) {
	var f Form
	err := q.db.QueryRow(ctx, `SELECT f.id, f.type, f.data_format_id, f.data_format_version, f.name, f.validation_status
		FROM forms f JOIN messages m ON m.id = f.message_id
		WHERE f.id = $1 AND f.message_id = $2 AND m.reportee_id = $3`, formID, messageID, reporteeID).
		Scan(&f.ID, &f.Type, &f.DataFormatID, &f.DataFormatVersion, &f.Name, &f.ValidationStatus)
	return f, NotFound(err)
}

// GetFormData returns the XML of a form byte for byte as stored, or ErrNotFound.
func (q *Queries) GetFormData(ctx context.Context, reporteeID int64, messageID string, formID int64) ([]byte, error) {
	var data []byte
	err := q.db.QueryRow(ctx, `SELECT f.form_data
		FROM forms f JOIN messages m ON m.id = f.message_id
		WHERE f.id = $1 AND f.message_id = $2 AND m.reportee_id = $3`, formID, messageID, reporteeID).Scan(&data)
	return data, NotFound(err)
}

// MarkCorrespondenceRead moves an unread correspondence of the reportee to "Lest", recording who read it
// and when, with the event read in the same transaction. Only the first read changes it (changed is true
// for exactly one of concurrent callers, and only that one writes the event): the condition is part of the
// UPDATE, which re-checks it on the locked row. A message that is read, archived or a form task is left
// alone; ErrNotFound when the reportee has no such message.
func (q *Queries) MarkCorrespondenceRead(ctx context.Context, reporteeID int64, messageID, by string, at time.Time, read Event) (changed bool, err error) {
	err = q.inTx(ctx, func(q *Queries) error {
		var exists bool
		err := q.db.QueryRow(ctx, `WITH marked AS (
				UPDATE messages SET status = 'Lest', read_at = $4, last_changed = $4, last_changed_by = $3
				WHERE id = $1 AND reportee_id = $2 AND type = 'Correspondence' AND status = 'Ulest' AND deleted_at IS NULL
				RETURNING 1)
			SELECT EXISTS (SELECT FROM marked), EXISTS (SELECT FROM messages WHERE id = $1 AND reportee_id = $2 AND deleted_at IS NULL)`,
			messageID, reporteeID, by, at).Scan(&changed, &exists)
		switch {
		case err != nil:
			return err
		case !exists:
			return ErrNotFound
		case changed:
			return q.AppendEvents(ctx, read)
		}
		return nil
	})
	return changed, err
}

// MessageCount is how many messages of one type and status a reportee has that the caller may see.
type MessageCount struct {
	ReporteeID int64
	Type       string
	Status     string
	Count      int
}

// countMessagesSQL counts by reportee, type and status. Reportees seen whole travel in $2; the grants of
// the others travel flattened over all reportees as parallel arrays, so any number of reportees is one
// statement and one hashed subplan.
const countMessagesSQL = `SELECT m.reportee_id, m.type, m.status, count(*)
	FROM messages m
	WHERE m.reportee_id = ANY ($1::bigint[]) AND m.deleted_at IS NULL
		AND (m.reportee_id = ANY ($2::bigint[])
			OR (m.reportee_id, m.service_code, m.service_edition, ` + archivedSQL + `)
				IN (SELECT * FROM unnest($3::bigint[], $4::text[], $5::int[], $6::bool[])))
	GROUP BY 1, 2, 3
	ORDER BY 1, 2, 3`

func countMessagesArgs(vis map[int64]Visibility) []any {
	var (
		reportees, all, grantReportees []int64
		codes                          []string
		editions                       []int32
		archived                       []bool
	)
	grant := func(id int64, keys []ServiceKey, arch bool) {
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

// CountMessages counts, per reportee of vis, the messages the caller may see by type and status (the
// messagebox overview), in one statement. Combinations without messages are left out.
func (q *Queries) CountMessages(ctx context.Context, vis map[int64]Visibility) ([]MessageCount, error) {
	rows, err := q.db.Query(ctx, countMessagesSQL, countMessagesArgs(vis)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[MessageCount])
}
