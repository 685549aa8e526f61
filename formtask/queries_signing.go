package formtask

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// Signing by several: the signees a task names, and the signatures it collects (migration 030_signing.sql).
// The form-task workflow orders every change of them; these are its reads and writes.

// TaskSignee is a person or organization named to sign a form task.
type TaskSignee struct {
	PartyID              int64
	Kind                 string // Person or Organization
	Name                 string
	SocialSecurityNumber string `json:",omitempty"`
	LastName             string `json:",omitempty"`
	OrganizationNumber   string `json:",omitempty"`
}

// Signature is one signature of a form task: who signed, on behalf of whom, when, in which step, and the
// digest of the content signed; VoidedAt is set once the task went back to Utfylling.
type Signature struct {
	ID                int64
	Step              int
	SignerPartyID     int64
	SignerName        string
	OnBehalfOfPartyID int64
	OnBehalfOfName    string
	SignedAt          time.Time
	ContentDigest     string
	VoidedAt          *time.Time
}

// ListTaskSignees returns the signees of a task, in the order they were named.
func (q Store) ListTaskSignees(ctx context.Context, messageID string) ([]TaskSignee, error) {
	rows, err := q.DB().Query(ctx, `SELECT p.id, p.kind, p.name, COALESCE(p.ssn, ''), COALESCE(p.last_name, ''),
			COALESCE(p.organization_number, '')
		FROM task_signees s JOIN parties p ON p.id = s.party_id WHERE s.message_id = $1 ORDER BY s.ordinal`, messageID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[TaskSignee])
}

// CallToSign is a call to sign a task in the mailbox of one of its signees.
type CallToSign struct {
	MessageID string
	PartyID   int64
}

// CallsToSign are the calls to sign a task (CreateCallsToSign), with the service owner of its service.
type CallsToSign struct {
	ServiceOwner string
	Service      store.ServiceKey
	Calls        []CallToSign
}

// CreateCallsToSign puts a call to sign task messageID in the mailbox of each signee it names, and of each
// organization its service's steps name, at at (a wall-clock time): a Correspondence message of the task's service from the task's party, asking them to
// sign it and giving the address where they read and sign it (base + /api/r{signee}/signing/{id}).
func (q Store) CreateCallsToSign(ctx context.Context, messageID, base string, at time.Time) (CallsToSign, error) {
	var c CallsToSign
	rows, err := q.DB().Query(ctx, `INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status,
			created_date, last_changed, last_changed_by, message_sender, summary, body)
		SELECT 'a' || nextval('message_id_seq'), s.party_id, '`+store.TypeCorrespondence+`', m.service_code, m.service_edition,
			'Til signering: ' || m.subject, '`+store.StatusUnread+`', $3, $3, 'Postbox', p.name,
			p.name || ' ber deg signere «' || m.subject || '».',
			'Les og signer: ' || $2 || '/api/r' || s.party_id || '/signing/' || m.id
		FROM (SELECT t.message_id, t.party_id, t.ordinal FROM task_signees t WHERE t.message_id = $1
			UNION ALL
			SELECT m.id, o.id, 1000 + st.n FROM messages m JOIN services sv ON sv.service_code = m.service_code
				AND sv.service_edition = m.service_edition, jsonb_array_elements(sv.signing_steps) WITH ORDINALITY AS st(step, n)
				JOIN parties o ON o.organization_number = st.step->>'OrganizationNumber'
			WHERE m.id = $1 AND st.step->>'Signees' = '`+store.SigneesOrganization+`') s
		JOIN messages m ON m.id = s.message_id JOIN parties p ON p.id = m.reportee_id
		ORDER BY s.ordinal
		RETURNING id, reportee_id`, messageID, base, at)
	if err != nil {
		return c, err
	}
	if c.Calls, err = pgx.CollectRows(rows, pgx.RowToStructByPos[CallToSign]); err != nil || len(c.Calls) == 0 {
		return c, err
	}
	err = q.DB().QueryRow(ctx, `SELECT sv.service_owner_code, sv.service_code, sv.service_edition FROM messages m
		JOIN services sv ON sv.service_code = m.service_code AND sv.service_edition = m.service_edition WHERE m.id = $1`,
		messageID).Scan(&c.ServiceOwner, &c.Service.Code, &c.Service.Edition)
	return c, err
}

// KeepCallOrder records order as the notification order of the calls to sign task messageID (replacing
// that of an earlier completion).
func (q Store) KeepCallOrder(ctx context.Context, messageID, order string) error {
	_, err := q.DB().Exec(ctx, `INSERT INTO task_call_orders (message_id, order_id) VALUES ($1, $2::uuid)
		ON CONFLICT (message_id) DO UPDATE SET order_id = EXCLUDED.order_id`, messageID, order)
	return err
}

// CallOrder is the notification order of the calls to sign task messageID and how many it notifies;
// found is false for a task that called no one.
func (q Store) CallOrder(ctx context.Context, messageID string) (order string, recipients int, found bool, err error) {
	err = q.DB().QueryRow(ctx, `SELECT o.order_id::text, (SELECT count(*) FROM notification_recipients r WHERE r.order_id = o.order_id)
		FROM task_call_orders o WHERE o.message_id = $1`, messageID).Scan(&order, &recipients)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, false, nil
	}
	return order, recipients, err == nil, err
}

// ReplaceTaskSignees makes partyIDs the signees of a task, in that order, with its signing deadline (a
// wall-clock time; nil for none), in one transaction.
func (q Store) ReplaceTaskSignees(ctx context.Context, messageID string, partyIDs []int64, deadline *time.Time) error {
	return q.inTx(ctx, func(q Store) error {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM task_signees WHERE message_id = $1`, messageID)
		b.Queue(`INSERT INTO task_signees (message_id, ordinal, party_id)
			SELECT $1, o, id FROM unnest($2::bigint[]) WITH ORDINALITY AS s(id, o)`, messageID, partyIDs)
		b.Queue(`DELETE FROM task_signing_deadlines WHERE message_id = $1`, messageID)
		if deadline != nil {
			b.Queue(`INSERT INTO task_signing_deadlines (message_id, deadline) VALUES ($1, $2)`, messageID, *deadline)
		}
		return q.execBatch(ctx, b)
	})
}

// KeepServiceSigningDeadline records the deadline the service's SigningDeadlineDays gives a task entering
// Signering (a wall-clock time), unless its signees were named with one.
func (q Store) KeepServiceSigningDeadline(ctx context.Context, messageID string, deadline time.Time) error {
	_, err := q.DB().Exec(ctx, `INSERT INTO task_signing_deadlines (message_id, deadline, from_service) VALUES ($1, $2, true)
		ON CONFLICT (message_id) DO NOTHING`, messageID, deadline)
	return err
}

// DropServiceSigningDeadline forgets the service's deadline of a task going back to Utfylling: its next
// completion starts the days again. One set with the signees stays.
func (q Store) DropServiceSigningDeadline(ctx context.Context, messageID string) error {
	_, err := q.DB().Exec(ctx, `DELETE FROM task_signing_deadlines WHERE message_id = $1 AND from_service`, messageID)
	return err
}

// TaskSigningDeadline is the signing deadline of a task: the one its signees were named with, or the
// service's once it is in Signering; nil for none.
func (q Store) TaskSigningDeadline(ctx context.Context, messageID string) (*time.Time, error) {
	var deadline *time.Time
	err := q.DB().QueryRow(ctx, `SELECT deadline FROM task_signing_deadlines WHERE message_id = $1`, messageID).Scan(&deadline)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return deadline, err
}

// ListSignatures returns the signatures of a task, the voided ones too, oldest first.
func (q Store) ListSignatures(ctx context.Context, messageID string) ([]Signature, error) {
	rows, err := q.DB().Query(ctx, `SELECT s.id, s.step, s.signer_party_id, s.signer_name, s.on_behalf_of_party_id, b.name,
			s.signed_at, s.content_digest, s.voided_at
		FROM task_signatures s JOIN parties b ON b.id = s.on_behalf_of_party_id
		WHERE s.message_id = $1 ORDER BY s.id`, messageID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Signature])
}

// InsertSignature records a signature and returns its id; 0 when the signer has signed for that signee
// already (and that signature is not voided).
func (q Store) InsertSignature(ctx context.Context, messageID string, s Signature) (int64, error) {
	var id int64
	err := q.DB().QueryRow(ctx, `INSERT INTO task_signatures (message_id, step, signer_party_id, signer_name,
			on_behalf_of_party_id, signed_at, content_digest)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (message_id, signer_party_id, on_behalf_of_party_id) WHERE voided_at IS NULL DO NOTHING
		RETURNING id`, messageID, s.Step, s.SignerPartyID, s.SignerName, s.OnBehalfOfPartyID, s.SignedAt, s.ContentDigest).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// VoidSignatures voids the signatures of a task not yet voided, at at, and returns them.
func (q Store) VoidSignatures(ctx context.Context, messageID string, at time.Time) ([]Signature, error) {
	rows, err := q.DB().Query(ctx, `UPDATE task_signatures s SET voided_at = $2 FROM parties b
		WHERE s.message_id = $1 AND s.voided_at IS NULL AND b.id = s.on_behalf_of_party_id
		RETURNING s.id, s.step, s.signer_party_id, s.signer_name, s.on_behalf_of_party_id, b.name, s.signed_at,
			s.content_digest, s.voided_at`, messageID, at)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Signature])
}

// ContentDigest is the SHA-256 (hex) of a task's current content: its forms (type, data format, name and
// data) and attachments (names, type, size and the SHA-256 of their bytes), in their order. A signature
// records it, so what was signed can be told from what is there.
func (q Store) ContentDigest(ctx context.Context, messageID string) (string, error) {
	var digest string
	err := q.DB().QueryRow(ctx, `SELECT encode(sha256(convert_to(
			COALESCE((SELECT string_agg(concat_ws(E'\x1f', f.type, f.data_format_id, f.data_format_version, f.name,
				encode(sha256(convert_to(f.form_data, 'UTF8')), 'hex')), E'\x1e' ORDER BY f.ordinal)
				FROM forms f WHERE f.message_id = $1), '') || E'\x1d' ||
			COALESCE((SELECT string_agg(concat_ws(E'\x1f', a.name, a.file_name, a.attachment_type, a.file_size,
				encode(a.sha256, 'hex')), E'\x1e' ORDER BY a.ordinal)
				FROM attachments a WHERE a.message_id = $1), ''), 'UTF8')), 'hex')`, messageID).Scan(&digest)
	return digest, err
}

// HoldsRoleCode tells whether the party holderID holds the role definition code for the reportee, itself
// or through a delegation.
func (q Store) HoldsRoleCode(ctx context.Context, holderID, reporteeID int64, code string) (bool, error) {
	var held bool
	err := q.DB().QueryRow(ctx, `SELECT EXISTS (SELECT FROM roles ro JOIN role_definitions d ON d.id = ro.role_definition_id
		WHERE ro.holder_party_id = $1 AND ro.reportee_id = $2 AND d.role_definition_code = $3)`, holderID, reporteeID, code).Scan(&held)
	return held, err
}

// SigningTask is a form task in Signering that names a party a signee: what the signee's list shows.
type SigningTask struct {
	MessageID      string
	Subject        string
	ReporteeID     int64
	ReporteeName   string
	ServiceCode    string
	ServiceEdition int
	LastChanged    time.Time
}

// SigningTasksOf returns the tasks in Signering (not deleted) that name party a signee, newest first, at
// most 200: those the tasks name (by task_signees_party), and, for an organization, those of the services
// whose steps name it (by messages_service_status). A union, not an OR, so that each part walks its index.
func (q Store) SigningTasksOf(ctx context.Context, party int64) ([]SigningTask, error) {
	rows, err := q.DB().Query(ctx, `SELECT m.id, m.subject, m.reportee_id, p.name, m.service_code, m.service_edition, m.last_changed
		FROM (SELECT s.message_id AS id FROM task_signees s WHERE s.party_id = $1
			UNION
			SELECT t.id FROM services sv JOIN parties o ON o.id = $1, jsonb_array_elements(sv.signing_steps) st, messages t
			WHERE st->>'Signees' = '`+store.SigneesOrganization+`' AND st->>'OrganizationNumber' = o.organization_number
			  AND t.service_code = sv.service_code AND t.service_edition = sv.service_edition AND t.status = 'Signering') named
		JOIN messages m ON m.id = named.id JOIN parties p ON p.id = m.reportee_id
		WHERE m.status = 'Signering' AND m.deleted_at IS NULL AND m.type = 'FormTask'
		ORDER BY m.last_changed DESC, m.id LIMIT 200`, party)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[SigningTask])
}

// NamesSignee tells whether a task names party a signee: on the task, or, for an organization, in a step of
// its service (store.SigneesOrganization).
func (q Store) NamesSignee(ctx context.Context, messageID string, party int64) (bool, error) {
	var named bool
	err := q.DB().QueryRow(ctx, `SELECT EXISTS (SELECT FROM task_signees WHERE message_id = $1 AND party_id = $2)
		OR EXISTS (SELECT FROM messages m JOIN services sv ON sv.service_code = m.service_code AND sv.service_edition = m.service_edition
			JOIN parties o ON o.id = $2, jsonb_array_elements(sv.signing_steps) st
			WHERE m.id = $1 AND st->>'Signees' = '`+store.SigneesOrganization+`' AND st->>'OrganizationNumber' = o.organization_number)`,
		messageID, party).Scan(&named)
	return named, err
}

// OrganizationParty is the party id of the organization with organizationNumber, or store.ErrNotFound.
func (q Store) OrganizationParty(ctx context.Context, organizationNumber string) (int64, error) {
	var id int64
	err := q.DB().QueryRow(ctx, `SELECT id FROM parties WHERE organization_number = $1`, organizationNumber).Scan(&id)
	return id, store.NotFound(err)
}

// SignedBySeveral tells whether a task is signed by several: its service declares signing steps, or the
// task names signees.
func (q Store) SignedBySeveral(ctx context.Context, messageID string) (bool, error) {
	var several bool
	err := q.DB().QueryRow(ctx, `SELECT EXISTS (SELECT FROM messages m JOIN services s ON s.service_code = m.service_code
			AND s.service_edition = m.service_edition WHERE m.id = $1 AND s.signing_steps IS NOT NULL)
		OR EXISTS (SELECT FROM task_signees WHERE message_id = $1)`, messageID).Scan(&several)
	return several, err
}
