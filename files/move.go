package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// MoveOutBefore is the migration that drops the byte tables: MoveOut runs just before it.
const MoveOutBefore = 33

// MoveOut moves the file bytes that versions before migration 033 kept in PostgreSQL into the object
// store: attachments, the shared attachments of correspondence, pending revisions' attachments, archived
// attachments and prints. Each content is streamed chunk by chunk and checked against the digest its rows
// name; a mismatch stops the move, so nothing is dropped. It can be stopped and run again: contents that
// have a blob are skipped. Uploads of correspondence under way are not moved (their clients upload again).
func MoveOut(ctx context.Context, db store.DBTX, s *Service, log *slog.Logger) error {
	s = s.In(db)
	sources := []struct {
		what, list, chunk string
	}{
		{"attachment", `SELECT DISTINCT ON (a.sha256) a.sha256, a.id::text FROM attachments a
			WHERE NOT a.shared AND NOT EXISTS (SELECT FROM blobs b WHERE b.sha256 = a.sha256)`,
			`SELECT data FROM attachment_chunks WHERE attachment_id = $1::bigint AND seq = $2`},
		{"shared attachment", `SELECT DISTINCT c.sha256, encode(c.sha256, 'hex') FROM shared_attachment_chunks c
			WHERE NOT EXISTS (SELECT FROM blobs b WHERE b.sha256 = c.sha256)`,
			`SELECT data FROM shared_attachment_chunks WHERE sha256 = decode($1, 'hex') AND seq = $2`},
		{"revision attachment", `SELECT DISTINCT ON (a.sha256) a.sha256, a.revision_id || '/' || a.ordinal FROM revision_attachments a
			WHERE NOT EXISTS (SELECT FROM blobs b WHERE b.sha256 = a.sha256)`,
			`SELECT data FROM revision_attachment_chunks
			WHERE revision_id = split_part($1, '/', 1)::bigint AND ordinal = split_part($1, '/', 2)::int AND seq = $2`},
		// Archived contents are read in slices of the chunk size, as if they were chunks.
		{"archived attachment", `SELECT a.sha256, encode(a.sha256, 'hex') FROM archived_blobs a
			WHERE NOT EXISTS (SELECT FROM blobs b WHERE b.sha256 = a.sha256)`,
			`SELECT substring(data FROM $2 * 262144 + 1 FOR 262144) FROM archived_blobs
			WHERE sha256 = decode($1, 'hex') AND ($2 = 0 OR octet_length(data) > $2 * 262144)`},
	}
	for _, src := range sources {
		rows, err := db.Query(ctx, src.list)
		if err != nil {
			return fmt.Errorf("move %ss: %w", src.what, err)
		}
		type content struct {
			sum []byte
			key string
		}
		todo, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c content, err error) { return c, r.Scan(&c.sum, &c.key) })
		if err != nil {
			return fmt.Errorf("move %ss: %w", src.what, err)
		}
		for _, c := range todo {
			f, err := s.Save(ctx, &chunks{ctx: ctx, db: db, sql: src.chunk, key: c.key}, -1, "")
			if err != nil {
				return fmt.Errorf("move %s %s: %w", src.what, c.key, err)
			}
			if !bytes.Equal(f.SHA256, c.sum) {
				return fmt.Errorf("move %s %s: its bytes have the digest %x, not %x as its rows say: nothing is dropped; repair it and run again",
					src.what, c.key, f.SHA256, c.sum)
			}
		}
		if len(todo) > 0 {
			log.Info("moved file bytes into the object store", "what", src.what, "contents", len(todo))
		}
	}
	return movePrints(ctx, db, s, log)
}

// movePrints moves each print's PDF and names its blob in pdf_sha256.
func movePrints(ctx context.Context, db store.DBTX, s *Service, log *slog.Logger) error {
	rows, err := db.Query(ctx, `SELECT document_digest FROM prints WHERE pdf_sha256 IS NULL`)
	if err != nil {
		return fmt.Errorf("move prints: %w", err)
	}
	digests, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return fmt.Errorf("move prints: %w", err)
	}
	for _, d := range digests {
		var pdf []byte
		if err := db.QueryRow(ctx, `SELECT pdf FROM prints WHERE document_digest = $1`, d).Scan(&pdf); err != nil {
			return fmt.Errorf("move print %x: %w", d, err)
		}
		f, err := s.SaveBytes(ctx, pdf, "application/pdf")
		if err != nil {
			return fmt.Errorf("move print %x: %w", d, err)
		}
		if sum := sha256.Sum256(pdf); !bytes.Equal(sum[:], f.SHA256) {
			return fmt.Errorf("move print %x: the store kept other bytes", d)
		}
		if _, err := db.Exec(ctx, `UPDATE prints SET pdf_sha256 = $2 WHERE document_digest = $1`, d, f.SHA256); err != nil {
			return fmt.Errorf("move print %x: %w", d, err)
		}
	}
	if len(digests) > 0 {
		log.Info("moved file bytes into the object store", "what", "print", "contents", len(digests))
	}
	return nil
}

// chunks reads a content kept in numbered chunks, one query per chunk, until a chunk is missing.
type chunks struct {
	ctx  context.Context
	db   store.DBTX
	sql  string
	key  string
	seq  int
	buf  []byte
	done bool
}

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.done {
			return 0, io.EOF
		}
		err := c.db.QueryRow(c.ctx, c.sql, c.key, c.seq).Scan(&c.buf)
		if errors.Is(err, pgx.ErrNoRows) {
			c.done = true
			continue
		}
		if err != nil {
			return 0, err
		}
		c.seq++
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}
