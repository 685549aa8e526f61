package notification

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// insertOrder writes order id of owner for the messages of t, one recipient row per message.
func insertOrder(ctx context.Context, db store.DBTX, id, owner, createdBy string, o Order, sendAt, at time.Time, t Target) error {
	var shipment *string
	if t.ShipmentID != "" {
		shipment = &t.ShipmentID
	}
	if _, err := db.Exec(ctx, `INSERT INTO notification_orders (id, service_owner_code, shipment_id, channel, email_subject,
			email_body, sms_text, send_at, reminder_days, reminders, recipients, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		id, owner, shipment, o.Channel, o.EmailSubject, o.EmailBody, o.SmsText, sendAt, o.ReminderDays, o.Reminders,
		len(t.Messages), at, createdBy); err != nil {
		return err
	}
	messages, parties := make([]string, len(t.Messages)), make([]int64, len(t.Messages))
	for i, m := range t.Messages {
		messages[i], parties[i] = m.MessageID, m.PartyID
	}
	var email, mobile *string
	if a := o.Addresses; a != nil {
		email, mobile = nullable(a.EmailAddress), nullable(a.MobileNumber)
	}
	_, err := db.Exec(ctx, `INSERT INTO notification_recipients (order_id, ordinal, message_id, party_id, email_address, mobile_number)
		SELECT $1, r.ord, r.message_id, r.party_id, $4, $5
		FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS r(message_id, party_id, ord)`,
		id, messages, parties, email, mobile)
	return err
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// orderRow is what a batch needs of its order.
type orderRow struct {
	Channel                          string
	EmailSubject, EmailBody, SmsText string
}

func getOrderRow(ctx context.Context, db store.DBTX, id string) (orderRow, error) {
	var o orderRow
	err := db.QueryRow(ctx, `SELECT channel, email_subject, email_body, sms_text FROM notification_orders WHERE id = $1`, id).
		Scan(&o.Channel, &o.EmailSubject, &o.EmailBody, &o.SmsText)
	return o, err
}

// target is one recipient of a batch as its send is decided: the message as it is now (Exists false
// when it is gone), the addresses to reach it at, and its send of the round so far (State "" for none).
type target struct {
	Ordinal   int
	MessageID string
	PartyID   int64
	Name      string
	Addresses Addresses
	Exists    bool
	Type      string
	Subject   string
	Status    string
	Service   store.ServiceKey
	DueAt     *time.Time
	Read      bool
	Confirm   bool // it needs confirmation
	Confirmed bool
	Deleted   bool
	State     string
	Channel   string
	Address   string
}

// loadBatch returns the recipients of order with an ordinal in (from, to] and their sends of round. The
// sends are read by their own range and matched here: in a join the planner, knowing nothing yet of an
// order's fresh rows, walks every send of the order (or of the batch) once per recipient.
func loadBatch(ctx context.Context, db store.DBTX, order string, round, from, to int) ([]target, error) {
	rows, err := db.Query(ctx, `SELECT r.ordinal, r.message_id, r.party_id, p.name,
			COALESCE(r.email_address, CASE WHEN r.mobile_number IS NULL THEN p.email_address END, ''),
			COALESCE(r.mobile_number, CASE WHEN r.email_address IS NULL THEN p.mobile_number END, ''),
			m.id IS NOT NULL, COALESCE(m.type, ''), COALESCE(m.subject, ''), COALESCE(m.status, ''),
			COALESCE(m.service_code, ''), COALESCE(m.service_edition, 0), m.due_at,
			m.read_at IS NOT NULL, COALESCE(m.is_confirmation_needed, false), m.confirmed_at IS NOT NULL, m.deleted_at IS NOT NULL
		FROM notification_recipients r
		JOIN parties p ON p.id = r.party_id
		LEFT JOIN messages m ON m.id = r.message_id
		WHERE r.order_id = $1 AND r.ordinal > $2 AND r.ordinal <= $3
		ORDER BY r.ordinal`, order, from, to)
	if err != nil {
		return nil, err
	}
	batch, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (target, error) {
		var t target
		err := row.Scan(&t.Ordinal, &t.MessageID, &t.PartyID, &t.Name, &t.Addresses.EmailAddress, &t.Addresses.MobileNumber,
			&t.Exists, &t.Type, &t.Subject, &t.Status, &t.Service.Code, &t.Service.Edition, &t.DueAt,
			&t.Read, &t.Confirm, &t.Confirmed, &t.Deleted)
		return t, err
	})
	if err != nil || len(batch) == 0 {
		return batch, err
	}
	rows, err = db.Query(ctx, `SELECT ordinal, state, COALESCE(channel, ''), COALESCE(address, '') FROM notification_sends
		WHERE order_id = $1 AND ordinal > $2 AND ordinal <= $3 AND round = $4`, order, from, to, round)
	if err != nil {
		return nil, err
	}
	at := make(map[int]int, len(batch))
	for i, t := range batch {
		at[t.Ordinal] = i
	}
	var (
		ordinal                 int
		state, channel, address string
	)
	_, err = pgx.ForEachRow(rows, []any{&ordinal, &state, &channel, &address}, func() error {
		if i, ok := at[ordinal]; ok {
			batch[i].State, batch[i].Channel, batch[i].Address = state, channel, address
		}
		return nil
	})
	return batch, err
}

// decision is a send's new state.
type decision struct {
	Ordinal int
	State   string
	Channel string
	Address string
	Reason  string
}

// writeDecisions records ds for round of order: 'sending' ones count an attempt, the others are final. A
// send already decided is never changed. It returns the ordinals whose row it changed to a final state.
func writeDecisions(ctx context.Context, db store.DBTX, order string, round int, ds []decision, at time.Time) ([]int, error) {
	n := len(ds)
	ordinals, states, channels, addresses, reasons := make([]int32, n), make([]string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	for i, d := range ds {
		ordinals[i], states[i] = int32(d.Ordinal), d.State
		channels[i], addresses[i], reasons[i] = nullable(d.Channel), nullable(d.Address), nullable(d.Reason)
	}
	rows, err := db.Query(ctx, `INSERT INTO notification_sends AS s (order_id, ordinal, round, state, channel, address, reason, attempts, decided_at)
		SELECT $1, d.ordinal, $2, d.state, d.channel, d.address, d.reason, (d.state = 'sending')::int,
			CASE WHEN d.state <> 'sending' THEN $8::timestamp END
		FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) AS d(ordinal, state, channel, address, reason)
		ON CONFLICT (order_id, ordinal, round) DO UPDATE
			SET state = excluded.state, channel = COALESCE(excluded.channel, s.channel), address = COALESCE(excluded.address, s.address),
				reason = excluded.reason, attempts = s.attempts + excluded.attempts, decided_at = excluded.decided_at
			WHERE s.state = 'sending'
		RETURNING ordinal, state <> 'sending'`, order, round, ordinals, states, channels, addresses, reasons, at)
	if err != nil {
		return nil, err
	}
	var decided []int
	var ordinal int
	var final bool
	_, err = pgx.ForEachRow(rows, []any{&ordinal, &final}, func() error {
		if final {
			decided = append(decided, ordinal)
		}
		return nil
	})
	return decided, err
}

// getOrder returns order id of owner.
func getOrder(ctx context.Context, db store.DBTX, owner, id string) (OrderStatus, error) {
	var o OrderStatus
	var shipment *string
	err := db.QueryRow(ctx, `SELECT id::text, shipment_id::text, channel, send_at, reminder_days, reminders, recipients, created_at, created_by
		FROM notification_orders WHERE id = $1 AND service_owner_code = $2`, id, owner).
		Scan(&o.ID, &shipment, &o.Channel, &o.SendAt, &o.ReminderDays, &o.Reminders, &o.Recipients, &o.CreatedAt, &o.CreatedBy)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, ErrNotFound
	}
	if shipment != nil {
		o.ShipmentID = *shipment
	}
	return o, err
}

// listRecipients returns up to limit recipients of order after ordinal after with their sends, and
// whether more follow. The sends are read by the page's range, as in loadBatch.
func listRecipients(ctx context.Context, db store.DBTX, order string, after, limit int) ([]RecipientStatus, bool, error) {
	rows, err := db.Query(ctx, `SELECT ordinal, message_id FROM notification_recipients
		WHERE order_id = $1 AND ordinal > $2 ORDER BY ordinal LIMIT $3`, order, after, limit+1)
	if err != nil {
		return nil, false, err
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RecipientStatus, error) {
		var r RecipientStatus
		return r, row.Scan(&r.Ordinal, &r.MessageID)
	})
	more := len(list) > limit
	if more {
		list = list[:limit]
	}
	if err != nil || len(list) == 0 {
		return list, more, err
	}
	rows, err = db.Query(ctx, `SELECT ordinal, round, state, COALESCE(channel, ''), COALESCE(address, ''), COALESCE(reason, ''),
			attempts, decided_at
		FROM notification_sends WHERE order_id = $1 AND ordinal > $2 AND ordinal <= $3 ORDER BY ordinal, round`,
		order, after, list[len(list)-1].Ordinal)
	if err != nil {
		return nil, false, err
	}
	at := make(map[int]int, len(list))
	for i, r := range list {
		at[r.Ordinal] = i
	}
	var (
		ordinal int
		s       Send
	)
	_, err = pgx.ForEachRow(rows, []any{&ordinal, &s.Round, &s.State, &s.Channel, &s.Address, &s.Reason, &s.Attempts, &s.DecidedAt}, func() error {
		list[at[ordinal]].Sends = append(list[at[ordinal]].Sends, s)
		return nil
	})
	return list, more, err
}

// messageOf returns the message id of the owner's services as a target, or ErrNotFound.
func messageOf(ctx context.Context, db store.DBTX, owner, id string) (TargetMessage, error) {
	var m TargetMessage
	err := db.QueryRow(ctx, `SELECT m.id, m.reportee_id FROM messages m
		JOIN services s ON (s.service_code, s.service_edition) = (m.service_code, m.service_edition)
		WHERE m.id = $1 AND s.service_owner_code = $2`, id, owner).Scan(&m.MessageID, &m.PartyID)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, ErrNotFound
	}
	return m, err
}

// ordersOf returns the orders of owner that name message id, newest first, each with that message's
// sends (a purged message's orders stay listed).
func ordersOf(ctx context.Context, db store.DBTX, owner, messageID string) ([]MessageOrder, error) {
	// One row per order and send of the message (the sends by their full key: the message has one
	// recipient row per order, found by its index).
	rows, err := db.Query(ctx, `SELECT o.id::text, COALESCE(o.shipment_id::text, ''), o.channel, o.send_at, o.reminder_days, o.reminders,
			o.recipients, o.created_at, o.created_by, r.ordinal, s.round, s.state, COALESCE(s.channel, ''), COALESCE(s.address, ''),
			COALESCE(s.reason, ''), s.attempts, s.decided_at
		FROM notification_recipients r JOIN notification_orders o ON o.id = r.order_id
		LEFT JOIN notification_sends s ON s.order_id = r.order_id AND s.ordinal = r.ordinal
		WHERE r.message_id = $1 AND o.service_owner_code = $2
		ORDER BY o.created_at DESC, o.id, s.round`, messageID, owner)
	if err != nil {
		return nil, err
	}
	var (
		orders   []MessageOrder
		m        MessageOrder
		round    *int
		state    *string
		send     Send
		attempts *int
	)
	_, err = pgx.ForEachRow(rows, []any{&m.ID, &m.ShipmentID, &m.Channel, &m.SendAt, &m.ReminderDays, &m.Reminders, &m.Recipients,
		&m.CreatedAt, &m.CreatedBy, &m.Recipient.Ordinal, &round, &state, &send.Channel, &send.Address, &send.Reason, &attempts,
		&send.DecidedAt}, func() error {
		if len(orders) == 0 || orders[len(orders)-1].ID != m.ID {
			m.Recipient.MessageID = messageID
			orders = append(orders, m)
		}
		if round != nil {
			s := send
			s.Round, s.State, s.Attempts = *round, *state, *attempts
			last := &orders[len(orders)-1].Recipient
			last.Sends = append(last.Sends, s)
		}
		return nil
	})
	return orders, err
}

// countBatch counts the sends of in's round and range by their state.
func countBatch(ctx context.Context, db store.DBTX, in BatchInput) (BatchResult, error) {
	var r BatchResult
	err := db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'sent'), count(*) FILTER (WHERE state = 'failed'),
			count(*) FILTER (WHERE state = 'skipped')
		FROM notification_sends WHERE order_id = $1 AND ordinal > $2 AND ordinal <= $3 AND round = $4`,
		in.OrderID, in.From, in.To, in.Round).Scan(&r.Sent, &r.Failed, &r.Skipped)
	return r, err
}
