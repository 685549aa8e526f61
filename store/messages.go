package store

import (
	"context"
	"time"
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

const (
	// Most messages have no reply options: NULLIF sends those as NULL, which scans to a nil slice without
	// a JSON decode per row.
	MessageSummaryColumns = `m.id, m.subject, m.status, m.type, o.name, m.service_code, m.service_edition,
	m.created_date, m.last_changed, m.last_changed_by, COALESCE(m.message_sender, ''), NULLIF(m.reply_options, '[]'),
	m.is_confirmation_needed, m.due_at`
	MessageFrom = `
	FROM messages m` + messageJoins
	// messageJoins join a message m's service and its owner.
	messageJoins = `
	JOIN services s ON s.service_code = m.service_code AND s.service_edition = m.service_edition
	JOIN service_owners o ON o.code = s.service_owner_code`
	// The tie-breaker follows the default order's direction, so "$orderby=CreatedDate desc" still walks
	// messages_mailbox as it is.
	MessageDefaultOrder = "m.created_date DESC, m.id DESC"
	MessageTieBreaker   = "m.id DESC"
)

// SummaryTargets are the scan targets of MessageSummaryColumns in m.
func SummaryTargets(m *MessageSummary) []any {
	return []any{&m.MessageID, &m.Subject, &m.Status, &m.Type, &m.ServiceOwner, &m.ServiceCode, &m.ServiceEdition,
		&m.CreatedDate, &m.LastChangedDateTime, &m.LastChangedBy, &m.MessageSender, &m.ReplyOptions, &m.IsConfirmationNeeded, &m.DueAt}
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
	err := q.db.QueryRow(ctx, `SELECT `+messageColumns+MessageFrom+`
		WHERE m.id = $1 AND m.reportee_id = $2 AND (m.deleted_at IS NULL) <> $3`, messageID, reporteeID, trashbin).
		Scan(messageTargets(&m)...)
	return m, NotFound(err)
}

// messageColumns are the single-message view of messages m (with messageJoins), as messageTargets scans it:
// GetMessage's and MessageReader's statement.
const messageColumns = MessageSummaryColumns + `,
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
	return append(SummaryTargets(&m.MessageSummary), &m.Summary, &m.Body, &m.ArchiveReference, &m.Forms, &m.Attachments,
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
	err = q.InTx(ctx, func(q *Queries) error {
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
