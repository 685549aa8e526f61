package formtask

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

// Store is the form task room's SQL — tasks, revisions and their promotion, signing, the archive and its
// prints — over the connection of q, a pool or a transaction, beside the shared statements of q itself
// (the message's audit entries and events).
type Store struct {
	*store.Queries
}

// NewStore returns the form task statements over q.
func NewStore(q *store.Queries) Store { return Store{q} }

// inTx runs fn in a transaction on q's connection (a savepoint inside a transaction; the caller's own for
// queries over store.NewTx).
func (q Store) inTx(ctx context.Context, fn func(Store) error) error {
	return q.InTx(ctx, func(tq *store.Queries) error { return fn(Store{tq}) })
}

// Task is a form task as the caller loaded it, and what its workflow is started from: everything it needs is in the message.
type Task struct {
	MessageID        string
	ReporteeID       string // "r" + party id, never an identity number
	ServiceCode      string
	ServiceEdition   int
	Subject          string
	Status           string
	ArchiveReference string
	// RequiredSecurityLevel is the highest SecurityLevel of the service's ProcessSteps.
	RequiredSecurityLevel int
	// Revision is the revision last promoted into the message (LastPromotedRevision), 0 for none.
	Revision int64
	// InTrashbin says the message is in the reportee's trashbin.
	InTrashbin bool
}

// GetFormTask returns a form-task message, or store.ErrNotFound (also for correspondence).
func (q Store) GetFormTask(ctx context.Context, messageID string) (Task, error) {
	var t Task
	err := q.DB().QueryRow(ctx, `SELECT m.id, 'r' || m.reportee_id, m.service_code, m.service_edition, m.subject, m.status,
			COALESCE(m.archive_reference, ''),
			COALESCE((SELECT max(p.security_level) FROM process_steps p
				WHERE p.service_code = m.service_code AND p.service_edition = m.service_edition), 0),
			`+lastPromotedRevisionOf("m.id")+`, m.deleted_at IS NOT NULL
		FROM messages m WHERE m.id = $1 AND m.type = 'FormTask'`, messageID).
		Scan(&t.MessageID, &t.ReporteeID, &t.ServiceCode, &t.ServiceEdition, &t.Subject, &t.Status,
			&t.ArchiveReference, &t.RequiredSecurityLevel, &t.Revision, &t.InTrashbin)
	return t, store.NotFound(err)
}

// lastPromotedRevisionOf is the revision promoted last into the message whose id is the SQL expression
// messageID, 0 for none: promotions of a task run one at a time in its workflow, so the latest promotion
// is the content the message shows.
func lastPromotedRevisionOf(messageID string) string {
	return `COALESCE((SELECT r.id FROM form_revisions r WHERE r.message_id = ` + messageID + ` AND r.promoted_at IS NOT NULL
				ORDER BY r.promoted_at DESC, r.id DESC LIMIT 1), 0)`
}

// LastPromotedRevision is the revision last promoted into a message, 0 for none (also for a message that
// does not exist): with the status, what a change made under If-Match expects of the task's workflow. It
// reads only the revisions, not the message row, which the change reads once (Begin).
func (q Store) LastPromotedRevision(ctx context.Context, messageID string) (int64, error) {
	var id int64
	err := q.DB().QueryRow(ctx, `SELECT `+lastPromotedRevisionOf("$1"), messageID).Scan(&id)
	return id, err
}

// SetFormTaskState records a form task's status and who changed it when, and tells whether the status
// changed (a retried projection, or a save in Utfylling, does not). An archived task is never changed.
func (q Store) SetFormTaskState(ctx context.Context, messageID, status, by string, at time.Time) (changed bool, err error) {
	var before string
	err = q.DB().QueryRow(ctx, `WITH before AS (SELECT id, status FROM messages WHERE id = $1 AND type = 'FormTask' FOR UPDATE)
		UPDATE messages m SET status = $2, last_changed_by = $3, last_changed = $4
		FROM before WHERE m.id = before.id AND before.status <> $5 RETURNING before.status`,
		messageID, status, by, at, taskstatus.Archived).Scan(&before)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil && before != status, err
}

// XSDSchema returns the schema of a data format version, or store.ErrNotFound.
func (q Store) XSDSchema(ctx context.Context, dataFormatID string, version int) (string, error) {
	var s string
	err := q.DB().QueryRow(ctx, `SELECT content FROM xsd_schemas WHERE data_format_id = $1 AND data_format_version = $2`,
		dataFormatID, version).Scan(&s)
	return s, store.NotFound(err)
}

// NewFormTask is what a new form task starts with besides its service: its Subject (the service's name
// when empty) and, for one a service owner sent, the date it is due.
type NewFormTask struct {
	// ID, when set, is the task's message id, reserved beforehand (a pre-fill waiting for its
	// VisibleDateTime); else the task takes the next one.
	ID      string
	Subject string
	DueAt   *time.Time
}

// CreateFormTaskMessage creates an empty form task of svc in the reportee's mailbox and returns its id, with
// the event created makes of that id, in one transaction.
func (q Store) CreateFormTaskMessage(ctx context.Context, reporteeID int64, svc store.Service, task NewFormTask, by string, at time.Time,
	created func(messageID string) store.Event) (string, error) {
	var id string
	subject := task.Subject
	if subject == "" {
		subject = svc.ServiceName
	}
	err := q.inTx(ctx, func(q Store) error {
		err := q.DB().QueryRow(ctx, `INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status,
				created_date, last_changed, last_changed_by, due_at)
			VALUES (COALESCE(NULLIF($8, ''), 'a' || nextval('message_id_seq')), $1, 'FormTask', $2, $3, $4, '`+taskstatus.Filling+`', $5, $5, $6, $7)
			RETURNING id`, reporteeID, svc.ServiceCode, svc.ServiceEdition, subject, at, by, task.DueAt, task.ID).Scan(&id)
		if err != nil {
			return err
		}
		return q.AppendEvents(ctx, created(id))
	})
	return id, err
}

// DeleteNewFormTask removes a form task created moments ago whose first content was refused, with the
// event removed, in one transaction.
func (q Store) DeleteNewFormTask(ctx context.Context, messageID string, removed store.Event) error {
	return q.inTx(ctx, func(q Store) error {
		tag, err := q.DB().Exec(ctx, `DELETE FROM messages WHERE id = $1 AND type = 'FormTask' AND status = '`+taskstatus.Filling+`'`, messageID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return q.AppendEvents(ctx, removed)
	})
}

// SigningText is the text a signer of form task m confirms in language (DefaultLanguage when 0), with the
// language: the service's own text or the language's default. A message of another type is refused.
func (q Store) SigningText(ctx context.Context, m store.Message, language int) (string, int, error) {
	if err := OnlyFormTask(m, ": only a form task is signed"); err != nil {
		return "", 0, err
	}
	svc, err := q.GetService(ctx, m.ServiceCode, m.ServiceEdition)
	if err != nil {
		return "", 0, err
	}
	if language == 0 {
		language = store.DefaultLanguage
	}
	return svc.SigningText(language), language, nil
}
