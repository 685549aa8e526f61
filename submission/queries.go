package submission

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// The queue's SQL, over store.DBTX so that it runs on the pool or in a transaction.

// submissionColumns are a Submission's columns (scanSubmission's order) of submissions su joined with its
// archive a and reportee p. Form sizes and digests are taken from the archived XML's UTF-8 bytes, the bytes
// a download sends.
const submissionColumns = `su.archive_reference, su.seq, su.message_id, su.service_code, su.service_edition, su.archived_at,
	su.filled_by, su.signed_by, su.confirmed_at, COALESCE(su.confirmed_by, ''),
	p.id, p.name, COALESCE(p.organization_number, ''), COALESCE(p.ssn, ''),
	(SELECT COALESCE(json_agg(json_build_object('ID', f->'ID', 'Type', f->'Type', 'DataFormatID', f->'DataFormatID',
			'DataFormatVersion', f->'DataFormatVersion', 'Name', f->'Name',
			'Size', octet_length(convert_to(f->>'FormData', 'UTF8')),
			'SHA256', encode(sha256(convert_to(f->>'FormData', 'UTF8')), 'base64')) ORDER BY x.n), '[]')
		FROM jsonb_array_elements(a.forms) WITH ORDINALITY AS x(f, n)),
	a.attachments, (SELECT b.size FROM blobs b WHERE b.sha256 = pr.pdf_sha256), pr.pdf_sha256, a.signatures`

const submissionFrom = `
	FROM submissions su
	JOIN archives a ON a.archive_reference = su.archive_reference
	JOIN parties p ON p.id = su.reportee_id
	JOIN prints pr ON pr.document_digest = a.print_digest`

func scanSubmission(row pgx.CollectableRow) (Submission, error) {
	var (
		s           Submission
		confirmedAt *time.Time
		confirmedBy string
	)
	err := row.Scan(&s.ArchiveReference, &s.seq, &s.MessageID, &s.ServiceCode, &s.ServiceEdition, &s.ArchivedAt,
		&s.FilledBy, &s.SignedBy, &confirmedAt, &confirmedBy,
		&s.Reportee.ID, &s.Reportee.Name, &s.Reportee.OrganizationNumber, &s.Reportee.SocialSecurityNumber,
		&s.Forms, &s.Attachments, &s.Print.Size, &s.Print.SHA256, &s.Signatures)
	if confirmedAt != nil {
		s.Confirmation = &Confirmation{At: clock.Local(*confirmedAt), By: confirmedBy}
	}
	return s, err
}

// listSubmissions returns up to limit submissions of owner after the queue key after that match f, in
// queue order, and whether more follow.
func listSubmissions(ctx context.Context, db store.DBTX, owner string, f Filter, after int64, limit int) ([]Submission, bool, error) {
	sql := `SELECT ` + submissionColumns + submissionFrom + `
		WHERE su.service_owner_code = $1 AND su.seq > $2`
	args := []any{owner, after, limit + 1}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	switch f.Confirmed {
	case Unconfirmed:
		sql += ` AND su.confirmed_at IS NULL`
	case OnlyConfirmed:
		sql += ` AND su.confirmed_at IS NOT NULL`
	}
	if f.ServiceCode != "" {
		sql += ` AND su.service_code = ` + arg(f.ServiceCode)
	}
	if f.ServiceEdition != 0 {
		sql += ` AND su.service_edition = ` + arg(f.ServiceEdition)
	}
	if f.ArchivedAfter != nil {
		sql += ` AND su.archived_at > ` + arg(*f.ArchivedAfter)
	}
	if f.ArchivedBefore != nil {
		sql += ` AND su.archived_at < ` + arg(*f.ArchivedBefore)
	}
	if f.Reportee != "" {
		sql += ` AND su.reportee_id = ` + reporteeSQL(f.Reportee, arg)
	}
	sql += ` ORDER BY su.seq LIMIT $3`
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, false, err
	}
	subs, err := pgx.CollectRows(rows, scanSubmission)
	return page(subs, limit, err)
}

// reporteeSQL is the party id of a reportee filter (reportee id, organization or identity number), with
// its value as a parameter that arg adds.
func reporteeSQL(reportee string, arg func(any) string) string {
	if id, ok := identity.ParseReporteeID(reportee); ok {
		return arg(id)
	}
	v := arg(reportee)
	return `(SELECT id FROM parties WHERE organization_number = ` + v + ` OR ssn = ` + v + `)`
}

// page cuts rows read with limit+1 to limit, telling whether more follow.
func page[T any](rows []T, limit int, err error) ([]T, bool, error) {
	if err != nil || len(rows) <= limit {
		return rows, false, err
	}
	return rows[:limit], true, nil
}

// getSubmission returns submission ref of owner, or ErrNotFound (also for another owner's). lock takes
// the row's lock for a confirmation.
func getSubmission(ctx context.Context, db store.DBTX, owner, ref string, lock bool) (Submission, error) {
	sql := `SELECT ` + submissionColumns + submissionFrom + `
		WHERE su.archive_reference = $1 AND su.service_owner_code = $2`
	if lock {
		sql += ` FOR UPDATE OF su`
	}
	rows, err := db.Query(ctx, sql, ref, owner)
	if err != nil {
		return Submission{}, err
	}
	s, err := pgx.CollectExactlyOneRow(rows, scanSubmission)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, ErrNotFound
	}
	return s, err
}

// confirmSubmission records owner's confirmation of s at, and shows it on the party's message while
// the message is there.
func confirmSubmission(ctx context.Context, db store.DBTX, s Submission, at time.Time, by string) error {
	b := &pgx.Batch{}
	b.Queue(`UPDATE submissions SET confirmed_at = $2, confirmed_by = $3 WHERE archive_reference = $1`, s.ArchiveReference, at, by)
	b.Queue(`UPDATE messages SET received_by_owner_at = $2 WHERE id = $1`, s.MessageID, clock.Local(at))
	return db.SendBatch(ctx, b).Close()
}

// appendLog writes a line of the submission's log.
func appendLog(ctx context.Context, db store.DBTX, ref, action, part string, a Actor) error {
	_, err := db.Exec(ctx, `INSERT INTO submission_log (archive_reference, action, part, organization_number, api_key_name, auth_method, request_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, ref, action, part, a.OrganizationNumber, a.APIKeyName, a.AuthMethod, a.RequestID)
	return err
}

// listLog returns up to limit lines of the log of ref after id after, oldest first, and whether more follow.
func listLog(ctx context.Context, db store.DBTX, ref string, after int64, limit int) ([]LogEntry, bool, error) {
	rows, err := db.Query(ctx, `SELECT id, occurred_at, action, part, organization_number, api_key_name, auth_method, request_id
		FROM submission_log WHERE archive_reference = $1 AND id > $2 ORDER BY id LIMIT $3`, ref, after, limit+1)
	if err != nil {
		return nil, false, err
	}
	entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (LogEntry, error) {
		var e LogEntry
		err := row.Scan(&e.ID, &e.At, &e.Action, &e.Part, &e.OrganizationNumber, &e.APIKeyName, &e.AuthMethod, &e.RequestID)
		e.At = clock.Local(e.At)
		return e, err
	})
	return page(entries, limit, err)
}

// formData returns the XML of archived form id of ref as signed.
func formData(ctx context.Context, db store.DBTX, ref string, id int64) (string, error) {
	var data string
	err := db.QueryRow(ctx, `SELECT f->>'FormData' FROM archives a, jsonb_array_elements(a.forms) f
		WHERE a.archive_reference = $1 AND (f->>'ID')::bigint = $2`, ref, id).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return data, err
}
