package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask/taskstatus"
)

// The life of a message after it arrives: archive, confirm, the trashbin (a soft delete), restore and
// the delete for good. Each change locks the message (LockMessage), so concurrent changes of one message
// run one after the other and each sees where the one before left it; the caller writes the change and
// its MessageAuditEntry in one transaction.

// Correspondence statuses and the message types of the interface.
const (
	StatusUnread              = "Ulest"
	StatusRead                = "Lest"
	StatusCorrespondenceFiled = "Arkivert"
	TypeCorrespondence        = "Correspondence"
	TypeFormTask              = "FormTask"
)

// MessageState is what a change of a message's place or state decides on.
type MessageState struct {
	ID                   string
	Type                 string
	Status               string
	Service              ServiceKey
	IsConfirmationNeeded bool
	Confirmed            bool
	InTrashbin           bool
	DeletedAt            time.Time // when it went to the trashbin; zero in the mailbox
}

// Archived reports whether the message is in an archived state (its rights are the archive rights).
func (m MessageState) Archived() bool { return ArchivedStatus(m.Status) }

// LockMessage reads a message of the reportee, in its mailbox or its trashbin, and locks it until the
// transaction ends; ErrNotFound when the reportee has no such message. Call it in a transaction.
func (q *Queries) LockMessage(ctx context.Context, reporteeID int64, messageID string) (MessageState, error) {
	var (
		m         MessageState
		deletedAt *time.Time
	)
	err := q.db.QueryRow(ctx, `SELECT id, type, status, service_code, service_edition, is_confirmation_needed,
			confirmed_at IS NOT NULL, deleted_at
		FROM messages WHERE id = $1 AND reportee_id = $2 FOR UPDATE`, messageID, reporteeID).
		Scan(&m.ID, &m.Type, &m.Status, &m.Service.Code, &m.Service.Edition, &m.IsConfirmationNeeded, &m.Confirmed, &deletedAt)
	if deletedAt != nil {
		m.InTrashbin, m.DeletedAt = true, *deletedAt
	}
	return m, NotFound(err)
}

// FileCorrespondence moves a correspondence to "Arkivert".
func (q *Queries) FileCorrespondence(ctx context.Context, messageID, by string, at time.Time) error {
	_, err := q.db.Exec(ctx, `UPDATE messages SET status = '`+StatusCorrespondenceFiled+`', last_changed = $3, last_changed_by = $2
		WHERE id = $1 AND type = '`+TypeCorrespondence+`'`, messageID, by, at)
	return err
}

// ConfirmCorrespondence records that by confirmed the correspondence at at; an unread one becomes read.
func (q *Queries) ConfirmCorrespondence(ctx context.Context, messageID, by string, at time.Time) error {
	_, err := q.db.Exec(ctx, `UPDATE messages SET confirmed_at = $3, confirmed_by = $2, last_changed = $3, last_changed_by = $2,
			status = CASE status WHEN '`+StatusUnread+`' THEN '`+StatusRead+`' ELSE status END
		WHERE id = $1 AND type = '`+TypeCorrespondence+`'`, messageID, by, at)
	return err
}

// MoveToTrashbin takes a message out of the mailbox into the trashbin; its status and data stay.
func (q *Queries) MoveToTrashbin(ctx context.Context, messageID, by string, at time.Time) error {
	_, err := q.db.Exec(ctx, `UPDATE messages SET deleted_at = $3, deleted_by = $2 WHERE id = $1`, messageID, by, at)
	return err
}

// RestoreFromTrashbin puts a message of the trashbin back into the mailbox, in the status it had.
func (q *Queries) RestoreFromTrashbin(ctx context.Context, messageID string) error {
	_, err := q.db.Exec(ctx, `UPDATE messages SET deleted_at = NULL, deleted_by = NULL WHERE id = $1`, messageID)
	return err
}

// PurgeMessage deletes a message for good with its forms, attachments and revisions, and remembers its id
// so that importing the dataset again does not bring it back. The archive of a form task (archives) is not
// the message's: it stays.
func (q *Queries) PurgeMessage(ctx context.Context, messageID string, at time.Time) error {
	if _, err := q.db.Exec(ctx, `INSERT INTO purged_messages (id, purged_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, messageID, at); err != nil {
		return err
	}
	_, err := q.db.Exec(ctx, `DELETE FROM messages WHERE id = $1`, messageID)
	return err
}

// The actions the message audit log records.
const (
	AuditArchive       = "Archive"
	AuditConfirm       = "Confirm"
	AuditDelete        = "Delete"
	AuditRestore       = "Restore"
	AuditDeleteForGood = "DeleteForGood"
	AuditPurge         = "Purge"
	AuditRetract       = "Retract" // by the sender of a correspondence, before it was read
)

// MessageAuditEntry is one line of the append-only message audit log: who did what to which message of
// the reportee, when and from which client, with the fields of an authorization audit entry (the role and
// right fields unused).
type MessageAuditEntry struct {
	audit.Entry
	MessageID string
}

// AppendMessageAudit writes an entry; call it in the transaction of the change it records.
func (q *Queries) AppendMessageAudit(ctx context.Context, e MessageAuditEntry) error {
	_, err := q.db.Exec(ctx, `INSERT INTO message_audit (occurred_at, reportee_id, message_id, actor_name, actor_party_id,
			actor_login_id, actor_method, api_key_name, request_id, action, summary)
		VALUES ($1, $2, $3, $4, NULLIF($5, 0::bigint), NULLIF($6, 0::bigint), $7, $8, $9, $10, $11)`,
		e.At, e.ReporteeID, e.MessageID, e.ActorName, e.ActorPartyID, e.ActorLoginID, e.ActorMethod, e.APIKeyName,
		e.RequestID, e.Action, e.Summary)
	return err
}

// DefaultSigningTexts are the texts a signer confirms on a service that sets none, by language id.
var DefaultSigningTexts = map[int]string{
	1044: "Jeg bekrefter at opplysningene er riktige og fullstendige, og signerer på vegne av den jeg representerer.",
	2068: "Eg stadfestar at opplysningane er rette og fullstendige, og signerer på vegner av den eg representerer.",
	1033: "I confirm that the information is correct and complete, and sign on behalf of the party I represent.",
}

// DefaultLanguage is the language of texts when a request names none: bokmål.
const DefaultLanguage = 1044

// SigningText is the text a signer of the service confirms in language (DefaultLanguage when 0): the
// service's own, or the default text of that language.
func (d ServiceDetail) SigningText(language int) string {
	if language == 0 {
		language = DefaultLanguage
	}
	if t, ok := d.SigningTexts[strconv.Itoa(language)]; ok {
		return t
	}
	return DefaultSigningTexts[language]
}

// PurgeSummary is the audit summary of a message the scheduled purge deleted for good.
func PurgeSummary(messageID, status string, deletedAt time.Time) string {
	return fmt.Sprintf("purged %s (%s) from the trashbin, where it was since %s", messageID, status, deletedAt.Format(clock.LocalTimeLayout))
}

// taskInProgress is true of a message row that is a form task in progress: its workflow owns its place.
const taskInProgress = `(type = '` + TypeFormTask + `' AND status <> '` + taskstatus.Archived + `')`

// PurgedMessage is a message the trashbin purge deleted for good, as it was.
type PurgedMessage struct {
	ID         string
	ReporteeID int64
	Type       string
	Service    ServiceKey
	Status     string
	DeletedAt  time.Time
}

// PurgeTrashbin deletes for good, in one transaction, up to limit messages that were moved to the trashbin
// before before (oldest first), each with its audit entry (actor with its Action and Summary filled in per
// message) and the event purged makes of it. Messages another transaction holds are left for the next
// round, and form tasks in progress to their workflows (DueTasksInTrashbin). It returns how many it purged.
func (q *Queries) PurgeTrashbin(ctx context.Context, before time.Time, limit int, actor audit.Entry, purged func(PurgedMessage) Event) (int, error) {
	n := 0
	err := q.InTx(ctx, func(q *Queries) error {
		rows, err := q.db.Query(ctx, `SELECT id, reportee_id, type, service_code, service_edition, status, deleted_at FROM messages
			WHERE deleted_at < $1 AND NOT `+taskInProgress+` ORDER BY deleted_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`, before, limit)
		if err != nil {
			return err
		}
		due, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PurgedMessage, error) {
			var m PurgedMessage
			return m, row.Scan(&m.ID, &m.ReporteeID, &m.Type, &m.Service.Code, &m.Service.Edition, &m.Status, &m.DeletedAt)
		})
		if err != nil {
			return err
		}
		events := make([]Event, 0, len(due))
		for _, m := range due {
			if err := q.PurgeMessage(ctx, m.ID, actor.At); err != nil {
				return err
			}
			e := MessageAuditEntry{Entry: actor, MessageID: m.ID}
			e.ReporteeID, e.Action = m.ReporteeID, AuditPurge
			e.Summary = PurgeSummary(m.ID, m.Status, m.DeletedAt)
			if err := q.AppendMessageAudit(ctx, e); err != nil {
				return err
			}
			events = append(events, purged(m))
		}
		n = len(due)
		return q.AppendEvents(ctx, events...)
	})
	return n, err
}

// TrashedTask is a form task in progress in a trashbin, as the scheduled purge finds it.
type TrashedTask struct {
	ID         string
	ReporteeID int64
	Status     string
	DeletedAt  time.Time
}

// DueTasksInTrashbin lists the form tasks in progress moved to a trashbin before before, at most limit of
// them after the id after (for paging), by id: the scheduled purge deletes them through their workflows.
func (q *Queries) DueTasksInTrashbin(ctx context.Context, before time.Time, after string, limit int) ([]TrashedTask, error) {
	rows, err := q.db.Query(ctx, `SELECT id, reportee_id, status, deleted_at FROM messages
		WHERE deleted_at < $1 AND `+taskInProgress+` AND id > $2 ORDER BY id LIMIT $3`, before, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TrashedTask])
}
