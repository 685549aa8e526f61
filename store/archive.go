package store

import (
	"context"
	"errors"
	"fmt"
	"time"
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
}

// GetArchive returns the archive of a message, or ErrNotFound.
func (q *Queries) GetArchive(ctx context.Context, messageID string) (Archive, error) {
	var a Archive
	err := q.db.QueryRow(ctx, `SELECT archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest
		FROM archives WHERE message_id = $1`, messageID).
		Scan(&a.ArchiveReference, &a.MessageID, &a.ArchivedAt, &a.ArchivedBy, &a.Forms, &a.Attachments, &a.PrintDigest)
	return a, notFound(err)
}

// PrintFunc renders the print of an archive about to be written and returns the digest of its document
// and the PDF. q is the archive's transaction: asking the pool for another connection while holding one
// could exhaust it.
type PrintFunc func(q *Queries, header PrintHeader, a Archive) (digest, pdf []byte, err error)

// ArchiveFormTask archives a form task exactly once: in one transaction it snapshots the message's content,
// takes an ArchiveReference from the sequence, stores the print made by render, and marks the message
// `Sendt og arkivert`. When the message is archived already it returns the existing archive and created false.
func (q *Queries) ArchiveFormTask(ctx context.Context, messageID, by string, at time.Time, render PrintFunc) (a Archive, created bool, err error) {
	err = q.inTx(ctx, func(q *Queries) error {
		// The message lock makes concurrent attempts wait for the first one and then find its archive.
		var status string
		if err := q.db.QueryRow(ctx, `SELECT status FROM messages WHERE id = $1 AND type = 'FormTask' FOR UPDATE`, messageID).Scan(&status); err != nil {
			return notFound(err)
		}
		existing, err := q.GetArchive(ctx, messageID)
		if err == nil {
			a = existing
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		a = Archive{MessageID: messageID, ArchivedAt: at, ArchivedBy: by}
		if a.Forms, a.Attachments, err = q.MessageContent(ctx, messageID); err != nil {
			return err
		}
		var seq int64
		if err := q.db.QueryRow(ctx, `SELECT nextval('archive_reference_seq')`).Scan(&seq); err != nil {
			return err
		}
		a.ArchiveReference = fmt.Sprintf("AR%d", seq)
		header, err := q.GetPrintHeader(ctx, messageID)
		if err != nil {
			return err
		}
		header.Status, header.ArchiveReference, header.LastChanged, header.LastChangedBy = StatusArchived, a.ArchiveReference, at, by
		digest, pdf, err := render(q, header, a)
		if err != nil {
			return err
		}
		a.PrintDigest = digest
		if err := q.PutPrint(ctx, digest, pdf); err != nil {
			return err
		}
		if _, err := q.db.Exec(ctx, `INSERT INTO archived_blobs (sha256, data)
			SELECT a.sha256, COALESCE((SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) FROM attachment_chunks c WHERE c.attachment_id = a.id), '')
			FROM attachments a WHERE a.message_id = $1
			ON CONFLICT DO NOTHING`, messageID); err != nil {
			return err
		}
		if _, err := q.db.Exec(ctx, `INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, a.ArchiveReference, messageID, at, by, a.Forms, a.Attachments, digest); err != nil {
			return err
		}
		created = true
		_, err = q.db.Exec(ctx, `UPDATE messages SET status = $2, archive_reference = $3, last_changed = $4, last_changed_by = $5
			WHERE id = $1`, messageID, StatusArchived, a.ArchiveReference, at, by)
		return err
	})
	return a, created, err
}
