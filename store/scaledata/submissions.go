package scaledata

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/files"
)

// Queue is a run of archived submissions in one owner's download queue, for the queue's load and plans.
type Queue struct {
	Count          int
	Owner          string // service owner code
	ServiceCode    string
	ServiceEdition int
	ReporteeID     int64
	// FirstSeq is the number of the first ArchiveReference (AR<FirstSeq>; FirstSubmission); the run takes
	// Count numbers from it.
	FirstSeq int64
}

// FirstSubmission is the first reference number of generated submissions: apart from the archive
// sequence's (7000001 on) and from the generated messages' ids (a8…).
const FirstSubmission = 900_000_001

// attachmentSize is the size of the one attachment every generated submission shares: its bytes are
// stored once, by their SHA-256, as the archive stores equal contents.
const attachmentSize = 64 << 10

// Submissions adds the archives of q that are not there yet (a second call with the same run adds none),
// each with one form, one attachment and a print, and enters them in the owner's queue unconfirmed, in one
// transaction, then analyzes the tables. It returns how many it added.
func Submissions(ctx context.Context, pool *pgxpool.Pool, fs *files.Service, q Queue) (int, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	var have int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM submissions WHERE seq BETWEEN $1 AND $1 + $2 - 1`, q.FirstSeq, q.Count).Scan(&have); err != nil {
		return 0, err
	}
	if have >= q.Count {
		return 0, nil
	}
	attachment, err := fs.In(tx).SaveBytes(ctx, bytes.Repeat([]byte("postbox-scale-attachment-"), attachmentSize/25+1)[:attachmentSize], "text/plain")
	if err != nil {
		return 0, fmt.Errorf("attachment: %w", err)
	}
	print, err := fs.In(tx).SaveBytes(ctx, []byte("%PDF-1.4 scaledata"), "application/pdf")
	if err != nil {
		return 0, fmt.Errorf("print: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO prints (document_digest, pdf_sha256) VALUES (sha256('scaledata'::bytea), $1) ON CONFLICT DO NOTHING`,
		print.SHA256); err != nil {
		return 0, fmt.Errorf("print: %w", err)
	}
	blob := base64.StdEncoding.EncodeToString(attachment.SHA256)
	from, to := q.FirstSeq+int64(have), q.FirstSeq+int64(q.Count)-1
	if _, err := tx.Exec(ctx, `INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest)
		SELECT 'AR' || s, 'a' || s, timestamp '2026-01-01' + (s - $1) * interval '1 second', 'Skala',
			jsonb_build_array(jsonb_build_object('ID', 1, 'Type', 'MainForm', 'DataFormatID', '3106', 'DataFormatVersion', 21845,
				'Name', 'Skjema', 'FormData', '<Skjema><Nummer>' || s || '</Nummer></Skjema>')),
			jsonb_build_array(jsonb_build_object('ID', 1, 'Name', 'Vedlegg', 'FileName', 'vedlegg.txt', 'AttachmentType', 'Dokumentasjon',
				'FileSize', $3::int, 'SHA256', $4::text)),
			sha256('scaledata'::bytea)
		FROM generate_series($1::bigint, $2::bigint) s`, from, to, attachmentSize, blob); err != nil {
		return 0, fmt.Errorf("archives: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO archive_blobs (archive_reference, sha256)
		SELECT 'AR' || s, $3 FROM generate_series($1::bigint, $2::bigint) s`, from, to, attachment.SHA256); err != nil {
		return 0, fmt.Errorf("archive blobs: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO submissions (archive_reference, seq, message_id, service_owner_code, service_code,
			service_edition, reportee_id, archived_at, filled_by, signed_by)
		SELECT 'AR' || s, s, 'a' || s, $3, $4, $5, $6, timestamp '2026-01-01' + (s - $1) * interval '1 second', 'Skala', 'Skala'
		FROM generate_series($1::bigint, $2::bigint) s`, from, to, q.Owner, q.ServiceCode, q.ServiceEdition, q.ReporteeID); err != nil {
		return 0, fmt.Errorf("submissions: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	_, err = pool.Exec(ctx, "ANALYZE archives, archive_blobs, submissions")
	return int(to - from + 1), err
}
