package formtask

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

// The archive: the immutable record a form task leaves when it is sent.

// Archive is the immutable record of an archived form task.
type Archive struct {
	ArchiveReference string
	MessageID        string
	ArchivedAt       time.Time
	ArchivedBy       string
	Forms            []FormContent
	Attachments      []AttachmentInfo
	PrintDigest      []byte
	// Signatures are the task's signatures (not voided) when it was sent: none for a task signed once, as always.
	Signatures []ArchivedSignature
}

// ArchivedSignature is a signature as its archive keeps it.
type ArchivedSignature struct {
	Step          int
	SignerName    string
	OnBehalfOf    string
	SignedAt      time.Time
	ContentDigest string
}

// archivedSignaturesSQL are the signatures (not voided) of message $1, oldest first, as an archive keeps them.
const archivedSignaturesSQL = `SELECT COALESCE(json_agg(json_build_object('Step', s.step, 'SignerName', s.signer_name,
		'OnBehalfOf', b.name, 'SignedAt', to_char(s.signed_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'ContentDigest', s.content_digest) ORDER BY s.id), '[]')
	FROM task_signatures s JOIN parties b ON b.id = s.on_behalf_of_party_id WHERE s.message_id = $1 AND s.voided_at IS NULL`

// GetArchive returns the archive of a message, or store.ErrNotFound.
func (q Store) GetArchive(ctx context.Context, messageID string) (Archive, error) {
	var a Archive
	err := q.DB().QueryRow(ctx, `SELECT archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest, signatures
		FROM archives WHERE message_id = $1`, messageID).
		Scan(&a.ArchiveReference, &a.MessageID, &a.ArchivedAt, &a.ArchivedBy, &a.Forms, &a.Attachments, &a.PrintDigest, &a.Signatures)
	return a, store.NotFound(err)
}

// ActiveSignatures are the signatures (not voided) of a message, as an archive would keep them now.
func (q Store) ActiveSignatures(ctx context.Context, messageID string) ([]ArchivedSignature, error) {
	var sigs []ArchivedSignature
	err := q.DB().QueryRow(ctx, archivedSignaturesSQL, messageID).Scan(&sigs)
	return sigs, err
}

// PrintFunc renders the print of an archive about to be written, saves its PDF in the object store in q's
// transaction, and returns the digest of its document and the SHA-256 of the PDF (nil when the print of
// that document is stored already). q is the archive's transaction: asking the pool for another
// connection while holding one could exhaust it.
type PrintFunc func(q Store, header PrintHeader, a Archive) (digest, pdfSHA256 []byte, err error)

// ArchiveFormTask archives a form task exactly once: in one transaction it snapshots the message's content,
// takes an ArchiveReference from the sequence, stores the print made by render, marks the message `Sendt og
// arkivert`, enters it in its service owner's download queue (package submission) and notes the archive
// as unconfirmed to its workflow (UnconfirmedArchives). When the message is archived
// already it returns the existing archive and created false. It sends three round trips: the lock, which
// reads an existing archive; the content with the header and the reference; the writes.
func (q Store) ArchiveFormTask(ctx context.Context, messageID, by string, at time.Time, render PrintFunc) (a Archive, created bool, err error) {
	err = q.inTx(ctx, func(q Store) error {
		// The message lock makes concurrent attempts wait for the first one and then find its archive.
		var (
			ref        *string
			archivedAt *time.Time
			archivedBy *string
			existing   = Archive{MessageID: messageID}
		)
		if err := q.DB().QueryRow(ctx, `SELECT a.archive_reference, a.archived_at, a.archived_by, a.forms, a.attachments, a.print_digest,
				COALESCE(a.signatures, '[]')
			FROM messages m LEFT JOIN archives a ON a.message_id = m.id
			WHERE m.id = $1 AND m.type = 'FormTask' FOR UPDATE OF m`, messageID).
			Scan(&ref, &archivedAt, &archivedBy, &existing.Forms, &existing.Attachments, &existing.PrintDigest, &existing.Signatures); err != nil {
			return store.NotFound(err)
		}
		if ref != nil {
			existing.ArchiveReference, existing.ArchivedAt, existing.ArchivedBy = *ref, *archivedAt, *archivedBy
			a = existing
			return nil
		}
		a = Archive{MessageID: messageID, ArchivedAt: at, ArchivedBy: by}
		var (
			seq    int64
			header PrintHeader
		)
		reads := &pgx.Batch{}
		reads.Queue(messageFormsSQL, messageID)
		reads.Queue(messageAttachmentsSQL, messageID, store.AttachmentHeadBytes)
		reads.Queue(`SELECT nextval('archive_reference_seq'),`+printHeaderSQL, messageID)
		reads.Queue(archivedSignaturesSQL, messageID)
		results := q.DB().SendBatch(ctx, reads)
		var err error
		if a.Forms, a.Attachments, err = collectContent(results.Query); err != nil {
			_ = results.Close()
			return err
		}
		if err := results.QueryRow().Scan(append([]any{&seq}, header.scan()...)...); err != nil {
			_ = results.Close()
			return store.NotFound(err)
		}
		if err := results.QueryRow().Scan(&a.Signatures); err != nil {
			_ = results.Close()
			return err
		}
		if err := results.Close(); err != nil {
			return err
		}
		a.ArchiveReference = fmt.Sprintf("AR%d", seq)
		filledBy := header.LastChangedBy // who last changed the content, before it was signed
		header.Status, header.ArchiveReference, header.LastChanged, header.LastChangedBy = taskstatus.Archived, a.ArchiveReference, at, by
		digest, pdfSHA256, err := render(q, header, a)
		if err != nil {
			return err
		}
		a.PrintDigest = digest
		writes := &pgx.Batch{}
		if pdfSHA256 != nil {
			writes.Queue(putPrintSQL, digest, pdfSHA256)
		}
		writes.Queue(`INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest, signatures)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, a.ArchiveReference, messageID, at, by, a.Forms, a.Attachments, digest, a.Signatures)
		if len(a.Attachments) > 0 {
			// The archive keeps its attachments' blobs, whatever becomes of the message: no byte is copied.
			writes.Queue(`INSERT INTO archive_blobs (archive_reference, sha256)
				SELECT DISTINCT $1::text, sha256 FROM attachments WHERE message_id = $2`, a.ArchiveReference, messageID)
		}
		writes.Queue(`INSERT INTO submissions (archive_reference, seq, message_id, service_owner_code, service_code, service_edition,
				reportee_id, archived_at, filled_by, signed_by)
			SELECT $1, $2, $3, s.service_owner_code, s.service_code, s.service_edition, $6, $7, $8, $9
			FROM services s WHERE s.service_code = $4 AND s.service_edition = $5`,
			a.ArchiveReference, seq, messageID, header.ServiceCode, header.ServiceEdition, header.ReporteeID, at, filledBy, by)
		writes.Queue(`UPDATE messages SET status = $2, archive_reference = $3, last_changed = $4, last_changed_by = $5
			WHERE id = $1`, messageID, taskstatus.Archived, a.ArchiveReference, at, by)
		writes.Queue(`INSERT INTO unconfirmed_archives (message_id) VALUES ($1)`, messageID)
		if err := q.execBatch(ctx, writes); err != nil {
			return err
		}
		created = true
		return nil
	})
	return a, created, err
}

// execBatch runs statements that return no rows in one round trip and returns the first error.
func (q Store) execBatch(ctx context.Context, b *pgx.Batch) error {
	return q.DB().SendBatch(ctx, b).Close()
}

// UnconfirmedArchives returns the messages of up to limit archives committed at least minAge ago that are
// not yet confirmed (ConfirmArchives), oldest first.
func (q Store) UnconfirmedArchives(ctx context.Context, minAge time.Duration, limit int) ([]string, error) {
	rows, err := q.DB().Query(ctx, `SELECT message_id FROM unconfirmed_archives
		WHERE archived_at <= now() - make_interval(secs => $1)
		ORDER BY archived_at, message_id LIMIT $2`, minAge.Seconds(), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ConfirmArchives forgets the unconfirmed archives of messageIDs: their workflows know of them.
func (q Store) ConfirmArchives(ctx context.Context, messageIDs []string) error {
	_, err := q.DB().Exec(ctx, `DELETE FROM unconfirmed_archives WHERE message_id = ANY($1)`, messageIDs)
	return err
}
