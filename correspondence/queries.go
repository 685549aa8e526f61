package correspondence

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

// serviceOwnerOf returns the owner and type of a service edition; pgx.ErrNoRows when there is none.
func serviceOwnerOf(ctx context.Context, db store.DBTX, code string, edition int) (owner, serviceType string, err error) {
	err = db.QueryRow(ctx, `SELECT service_owner_code, service_type FROM services WHERE service_code = $1 AND service_edition = $2`,
		code, edition).Scan(&owner, &serviceType)
	return owner, serviceType, err
}

// lookUpParties fills in the refusal of each screened recipient that no party has, or a deleted one has,
// and returns the party ids of the others (0 for refused ones), in one statement.
func lookUpParties(ctx context.Context, db store.DBTX, outcomes []Outcome) ([]int64, error) {
	numbers := make([]string, len(outcomes))
	for i, o := range outcomes {
		if o.Refused == "" {
			numbers[i] = o.Recipient
		}
	}
	// Two joins on the unique columns, each an index lookup per recipient (one join on either column
	// would walk parties for every recipient).
	rows, err := db.Query(ctx, `SELECT r.ord, COALESCE(o.id, p.id, 0), COALESCE(o.status, p.status, '') = 'Deleted'
		FROM unnest($1::text[]) WITH ORDINALITY AS r(number, ord)
		LEFT JOIN parties o ON o.organization_number = r.number
		LEFT JOIN parties p ON p.ssn = r.number
		WHERE r.number <> ''`, numbers)
	if err != nil {
		return nil, err
	}
	parties := make([]int64, len(outcomes))
	var (
		ord     int
		party   int64
		deleted bool
	)
	_, err = pgx.ForEachRow(rows, []any{&ord, &party, &deleted}, func() error {
		switch o := &outcomes[ord-1]; {
		case party == 0:
			o.Refused = RefusedUnknown
		case deleted:
			o.Refused = RefusedDeleted
		default:
			parties[ord-1] = party
		}
		return nil
	})
	return parties, err
}

// insertShipment writes the shipment and its recipients, and gives each accepted recipient the id of its
// message-to-be (filled into outcomes).
func insertShipment(ctx context.Context, tx pgx.Tx, id string, s Send, a Actor, at time.Time, outcomes []Outcome, parties []int64) error {
	var custom any
	if len(s.CustomMessageData) > 0 {
		custom = s.CustomMessageData
	}
	if _, err := tx.Exec(ctx, `INSERT INTO shipments (id, service_owner_code, service_code, service_edition, created_at, created_by,
			subject, summary, body, message_sender, senders_reference, reply_options, custom_message_data, is_confirmation_needed,
			language, visible_at, due_at, allow_system_delete_at, recipients, idempotent_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULLIF($11, ''), $12, $13, $14, $15, $16, $17, $18, $19, NULLIF($20, ''))`,
		id, a.ServiceOwner, s.ServiceCode, s.ServiceEdition, at, a.name(), s.Subject, s.Summary, s.Body, a.ServiceOwnerName,
		s.SendersReference, replyOptionsJSON(s.ReplyOptions), custom, s.IsConfirmationNeeded, s.Language,
		s.VisibleAt, s.DueAt, s.AllowSystemDeleteAt, len(outcomes), s.IdempotentKey); err != nil {
		return err
	}
	if err := insertAttachments(ctx, tx, id, s.Attachments); err != nil {
		return err
	}
	recipients, refused := make([]string, len(outcomes)), make([]string, len(outcomes))
	for i, o := range outcomes {
		recipients[i], refused[i] = o.Recipient, o.Refused
	}
	rows, err := tx.Query(ctx, `INSERT INTO shipment_recipients (shipment_id, ordinal, recipient, party_id, message_id, refused)
		SELECT $1, r.ord, r.recipient, NULLIF(r.party, 0), CASE WHEN r.refused = '' THEN 'a' || nextval('message_id_seq') END,
			NULLIF(r.refused, '')
		FROM unnest($2::text[], $3::bigint[], $4::text[]) WITH ORDINALITY AS r(recipient, party, refused, ord)
		RETURNING ordinal, COALESCE(message_id, '')`, id, recipients, parties, refused)
	if err != nil {
		return err
	}
	var (
		ord int
		msg string
	)
	_, err = pgx.ForEachRow(rows, []any{&ord, &msg}, func() error {
		outcomes[ord-1].MessageID = msg
		return nil
	})
	return err
}

// insertAttachments writes the shipment's list of its attachments, each naming its blob (saved before:
// saveInline, or uploaded), however many shipments have the same content.
func insertAttachments(ctx context.Context, tx pgx.Tx, id string, list []Attachment) error {
	for i, a := range list {
		if _, err := tx.Exec(ctx, `INSERT INTO shipment_attachments (shipment_id, ordinal, name, file_name, content_type, file_size, sha256)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, id, i, cmp.Or(a.Name, a.FileName), a.FileName, store.ContentTypeOf(a.FileName),
			a.size, a.sum[:]); err != nil {
			return err
		}
	}
	return nil
}

// sentBefore returns the shipment of owner sent with key, as its first answer said; pgx.ErrNoRows when
// there is none.
func sentBefore(ctx context.Context, db store.DBTX, owner, key string) (Accepted, error) {
	var a Accepted
	if err := db.QueryRow(ctx, `SELECT s.id::text, COALESCE((SELECT o.id::text FROM notification_orders o WHERE o.shipment_id = s.id), '')
		FROM shipments s WHERE s.service_owner_code = $1 AND s.idempotent_key = $2`,
		owner, key).Scan(&a.ShipmentID, &a.NotificationOrderID); err != nil {
		return a, err
	}
	rows, err := db.Query(ctx, `SELECT recipient, COALESCE(message_id, ''), COALESCE(refused, '') FROM shipment_recipients
		WHERE shipment_id = $1 ORDER BY ordinal`, a.ShipmentID)
	if err != nil {
		return a, err
	}
	a.Outcomes, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Outcome])
	return a, err
}

// made is a message a batch made, with what its event needs.
type made struct {
	ID         string
	ReporteeID int64
	Service    store.ServiceKey
	Status     string
}

func scanMade(row pgx.CollectableRow) (made, error) {
	var m made
	return m, row.Scan(&m.ID, &m.ReporteeID, &m.Service.Code, &m.Service.Edition, &m.Status)
}

// errNoShipment: the shipment's row is not there (yet: the request that started the workflow commits it
// moments after the start; or never: that commit failed).
var errNoShipment = errors.New("correspondence: the shipment is not in the database")

// createBatch makes the messages of up to limit recipients of shipment id after the ordinal after that
// have none yet, in the recipients' order, as they are at at (a wall-clock time), and returns them with
// the last ordinal it took. The recipients' rows are locked first, so a retraction waits for the batch and
// a batch run twice makes each message once.
func createBatch(ctx context.Context, tx pgx.Tx, id string, after, limit int, at time.Time) ([]made, int, error) {
	rows, err := tx.Query(ctx, `WITH due AS (
			SELECT r.ordinal, r.message_id, r.party_id FROM shipment_recipients r
			WHERE r.shipment_id = $1 AND r.ordinal > $4 AND r.message_id IS NOT NULL AND r.created_at IS NULL AND r.retracted_at IS NULL
			ORDER BY r.ordinal LIMIT $2 FOR UPDATE),
		marked AS (
			UPDATE shipment_recipients r SET created_at = $3 FROM due WHERE r.shipment_id = $1 AND r.ordinal = due.ordinal
			RETURNING r.ordinal),
		made AS (
			INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status, created_date, last_changed,
				last_changed_by, message_sender, summary, body, reply_options, language, is_confirmation_needed, custom_message_data,
				shipment_id, senders_reference, visible_at, due_at, allow_system_delete_at)
			SELECT due.message_id, due.party_id, 'Correspondence', s.service_code, s.service_edition, s.subject, '`+store.StatusUnread+`', $3, $3,
				s.created_by, s.message_sender, s.summary, s.body, s.reply_options, s.language, s.is_confirmation_needed, s.custom_message_data,
				s.id, s.senders_reference, s.visible_at, s.due_at, s.allow_system_delete_at
			FROM due, shipments s WHERE s.id = $1
			ORDER BY due.ordinal
			ON CONFLICT (id) DO NOTHING
			RETURNING id, reportee_id, service_code, service_edition, status),
		attached AS (
			INSERT INTO attachments (message_id, ordinal, name, file_name, attachment_type, content_type, encrypted, signing_locked,
				signed_by_default, file_size, sha256)
			SELECT made.id, a.ordinal, a.name, a.file_name, 'Vedlegg', a.content_type, false, false, false, a.file_size, a.sha256
			FROM made, shipment_attachments a WHERE a.shipment_id = $1)
		SELECT id, reportee_id, service_code, service_edition, status, (SELECT max(ordinal) FROM marked) FROM made`, id, limit, at, after)
	if err != nil {
		return nil, 0, err
	}
	var (
		list []made
		m    made
		last int
	)
	_, err = pgx.ForEachRow(rows, []any{&m.ID, &m.ReporteeID, &m.Service.Code, &m.Service.Edition, &m.Status, &last}, func() error {
		list = append(list, m)
		return nil
	})
	if err != nil || len(list) > 0 {
		return list, last, err
	}
	// Nothing made: the shipment is done, or its row is not there.
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM shipments WHERE id = $1)`, id).Scan(&exists); err != nil {
		return nil, 0, err
	}
	if !exists {
		return nil, 0, errNoShipment
	}
	return nil, 0, nil
}

// markUnconfirmedOverdue records as overdue every message of shipment id that still waits for its
// confirmation and was not marked before, and returns them.
func markUnconfirmedOverdue(ctx context.Context, tx pgx.Tx, id string, at time.Time) ([]made, error) {
	rows, err := tx.Query(ctx, `UPDATE messages SET overdue_at = $2
		WHERE shipment_id = $1 AND is_confirmation_needed AND confirmed_at IS NULL AND overdue_at IS NULL
		RETURNING id, reportee_id, service_code, service_edition, status`, id, at)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanMade)
}

// purgeBatch deletes for good up to limit messages of shipment id, with their audit lines, and returns
// them as they were. Messages another transaction holds wait for the next batch.
func purgeBatch(ctx context.Context, tx pgx.Tx, id string, limit int, at time.Time, actor string) ([]made, error) {
	rows, err := tx.Query(ctx, `WITH due AS (
			SELECT id, reportee_id, service_code, service_edition, status FROM messages
			WHERE shipment_id = $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED),
		remembered AS (INSERT INTO purged_messages (id, purged_at) SELECT id, $3 FROM due ON CONFLICT (id) DO NOTHING),
		audited AS (
			INSERT INTO message_audit (occurred_at, reportee_id, message_id, actor_name, actor_method, api_key_name, request_id, action, summary)
			SELECT $3, reportee_id, id, $4, 'System', '', '', '`+store.AuditPurge+`', 'Deleted at its AllowSystemDeleteDateTime'
			FROM due),
		gone AS (DELETE FROM messages m USING due WHERE m.id = due.id)
		SELECT id, reportee_id, service_code, service_edition, status FROM due`, id, limit, at, actor)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanMade)
}

const shipmentColumns = `s.id::text, s.service_code, s.service_edition, s.created_at, s.created_by, s.subject,
	COALESCE(s.senders_reference, ''), s.visible_at, s.due_at, s.allow_system_delete_at, s.recipients`

func scanShipment(row pgx.Row, sh *Shipment, extra ...any) error {
	return row.Scan(append([]any{&sh.ID, &sh.ServiceCode, &sh.ServiceEdition, &sh.CreatedAt, &sh.CreatedBy, &sh.Subject,
		&sh.SendersReference, &sh.VisibleAt, &sh.DueAt, &sh.AllowSystemDeleteAt, &sh.Recipients}, extra...)...)
}

// getShipment returns shipment id of owner with the count of its recipients in each state.
func getShipment(ctx context.Context, db store.DBTX, owner, id string) (Shipment, error) {
	var sh Shipment
	err := scanShipment(db.QueryRow(ctx, `SELECT `+shipmentColumns+`, c.created, c.refused, c.retracted,
			COALESCE((SELECT o.id::text FROM notification_orders o WHERE o.shipment_id = s.id), '')
		FROM shipments s, LATERAL (SELECT count(*) FILTER (WHERE r.created_at IS NOT NULL) AS created,
			count(*) FILTER (WHERE r.refused IS NOT NULL) AS refused, count(*) FILTER (WHERE r.retracted_at IS NOT NULL) AS retracted
			FROM shipment_recipients r WHERE r.shipment_id = s.id) c
		WHERE s.id = $1 AND s.service_owner_code = $2`, id, owner), &sh, &sh.Created, &sh.Refused, &sh.Retracted, &sh.NotificationOrderID)
	if errors.Is(err, pgx.ErrNoRows) {
		return sh, ErrNotFound
	}
	return sh, err
}

// stateSQL is the condition of each recipient state over recipients r and their messages m.
var stateSQL = map[string]string{
	StatePending:   `r.message_id IS NOT NULL AND r.created_at IS NULL AND r.retracted_at IS NULL`,
	StateCreated:   `r.created_at IS NOT NULL`,
	StateRead:      `m.read_at IS NOT NULL`,
	StateUnread:    `m.id IS NOT NULL AND m.read_at IS NULL`,
	StateConfirmed: `m.confirmed_at IS NOT NULL`,
	StateRefused:   `r.refused IS NOT NULL`,
	StateRetracted: `r.retracted_at IS NOT NULL`,
}

// listRecipients returns up to limit recipients of shipment id in state ("" for all) after the ordinal
// after, in the order of the request, and whether more follow.
func listRecipients(ctx context.Context, db store.DBTX, id, state string, after, limit int) ([]RecipientStatus, bool, error) {
	where := "TRUE"
	if state != "" {
		where = stateSQL[state]
	}
	// NotifiedAt: the first notice of the shipment's order that went (notification_recipients by message).
	rows, err := db.Query(ctx, `SELECT r.ordinal, r.recipient, COALESCE(r.message_id, ''), COALESCE(r.refused, ''), r.created_at,
			r.retracted_at, m.read_at, m.confirmed_at, r.created_at IS NOT NULL AND r.retracted_at IS NULL AND m.id IS NULL,
			(SELECT min(ns.decided_at) FROM notification_recipients nr
				JOIN notification_sends ns ON ns.order_id = nr.order_id AND ns.ordinal = nr.ordinal AND ns.state = 'sent'
				WHERE nr.message_id = r.message_id)
		FROM shipment_recipients r LEFT JOIN messages m ON m.id = r.message_id
		WHERE r.shipment_id = $1 AND r.ordinal > $2 AND `+where+`
		ORDER BY r.ordinal LIMIT $3`, id, after, limit+1)
	if err != nil {
		return nil, false, err
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RecipientStatus, error) {
		var r RecipientStatus
		return r, row.Scan(&r.Ordinal, &r.Recipient, &r.MessageID, &r.Refused, &r.CreatedAt, &r.RetractedAt, &r.ReadAt,
			&r.ConfirmedAt, &r.Purged, &r.NotifiedAt)
	})
	if err != nil || len(list) <= limit {
		return list, false, err
	}
	return list[:limit], true, nil
}

// sentMessage is a message of a shipment as a retraction finds it.
type sentMessage struct {
	made
	ShipmentID string
	Created    bool // false: still waiting for VisibleDateTime
	Read       bool
}

// lockSent locks the recipient row of message id of one of owner's shipments and, once made, the message.
func lockSent(ctx context.Context, tx pgx.Tx, owner, id string) (sentMessage, error) {
	var m sentMessage
	err := tx.QueryRow(ctx, `SELECT r.shipment_id::text, r.created_at IS NOT NULL, COALESCE(r.party_id, 0), s.service_code, s.service_edition
		FROM shipment_recipients r JOIN shipments s ON s.id = r.shipment_id
		WHERE r.message_id = $1 AND s.service_owner_code = $2 AND r.retracted_at IS NULL
		FOR UPDATE OF r`, id, owner).Scan(&m.ShipmentID, &m.Created, &m.ReporteeID, &m.Service.Code, &m.Service.Edition)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, ErrNotFound
	}
	if err != nil || !m.Created {
		m.ID, m.Status = id, store.StatusUnread
		return m, err
	}
	err = tx.QueryRow(ctx, `SELECT id, status, read_at IS NOT NULL FROM messages WHERE id = $1 FOR UPDATE`, id).Scan(&m.ID, &m.Status, &m.Read)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, ErrNotFound // purged by its recipient or the system
	}
	return m, err
}

// markRetracted records that the recipient of message id was retracted.
func markRetracted(ctx context.Context, tx pgx.Tx, id string, at time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE shipment_recipients SET retracted_at = $2 WHERE message_id = $1`, id, at)
	return err
}

// markTaskOverdue records that form task id is overdue, unless it has been submitted (archived), is gone, or
// was marked before; found says whether it did.
func markTaskOverdue(ctx context.Context, tx pgx.Tx, id string, at time.Time) (made, bool, error) {
	rows, err := tx.Query(ctx, `UPDATE messages SET overdue_at = $2
		WHERE id = $1 AND type = 'FormTask' AND status <> '`+taskstatus.Archived+`' AND overdue_at IS NULL
		RETURNING id, reportee_id, service_code, service_edition, status`, id, at)
	if err != nil {
		return made{}, false, err
	}
	m, err := pgx.CollectExactlyOneRow(rows, scanMade)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, false, nil
	}
	return m, err == nil, err
}
