package files

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/minio/minio-go/v7"
	"go.temporal.io/sdk/activity"
)

// Sweeper holds the sweep's activities (Sweep).
type Sweeper struct {
	Pool    *pgxpool.Pool
	Objects *Objects
	Log     *slog.Logger
}

// Sweeper is the sweep of this service's bucket, over pool.
func (s *Service) Sweeper(pool *pgxpool.Pool) *Sweeper {
	return &Sweeper{Pool: pool, Objects: s.objects, Log: s.log}
}

// Activities lists the sweep's activities, by method value (registered under their methods' names).
func (s *Sweeper) Activities() []any { return []any{s.SweepBlobs, s.SweepObjects} }

// sweepBatch is how many blobs or objects the sweep looks at between heartbeats.
const sweepBatch = 500

// unreferencedSQL lists blobs no row refers to that were last saved before the grace period: every table
// whose rows name a content is here (and has a foreign key to blobs, which stops a delete that races
// with a new reference).
const unreferencedSQL = `SELECT b.sha256, b.object_key FROM blobs b
	WHERE b.touched_at < now() - $1::interval
	  AND NOT EXISTS (SELECT FROM attachments x WHERE x.sha256 = b.sha256)
	  AND NOT EXISTS (SELECT FROM revision_attachments x WHERE x.sha256 = b.sha256)
	  AND NOT EXISTS (SELECT FROM shipment_attachments x WHERE x.sha256 = b.sha256)
	  AND NOT EXISTS (SELECT FROM correspondence_uploads x WHERE x.sha256 = b.sha256)
	  AND NOT EXISTS (SELECT FROM prints x WHERE x.pdf_sha256 = b.sha256)
	  AND NOT EXISTS (SELECT FROM archive_blobs x WHERE x.sha256 = b.sha256)
	ORDER BY b.touched_at LIMIT $2`

// SweepBlobs deletes the blobs no row refers to that were last saved before the grace period, each row
// before its object: an object whose delete fails is left without a row, for SweepObjects. It returns
// how many it deleted.
func (s *Sweeper) SweepBlobs(ctx context.Context, in SweepInput) (int, error) {
	deleted := 0
	for {
		rows, err := s.Pool.Query(ctx, unreferencedSQL, in.Grace, sweepBatch)
		if err != nil {
			return deleted, err
		}
		type blob struct {
			sha256 []byte
			key    string
		}
		batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (b blob, err error) { return b, r.Scan(&b.sha256, &b.key) })
		if err != nil {
			return deleted, err
		}
		swept := 0
		for _, b := range batch {
			// The grace is checked again: the content may have been saved again since the list.
			tag, err := s.Pool.Exec(ctx, `DELETE FROM blobs WHERE sha256 = $1 AND touched_at < now() - $2::interval`, b.sha256, in.Grace)
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" { // a row came to refer to it meanwhile
				continue
			}
			if err != nil {
				return deleted, err
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			deleted++
			swept++
			if err := s.Objects.remove(ctx, b.key); err != nil {
				s.Log.Warn("an object of a swept blob is left for the next sweep", "key", b.key, "error", err)
			}
		}
		activity.RecordHeartbeat(ctx, deleted)
		if len(batch) < sweepBatch || swept == 0 {
			return deleted, nil
		}
	}
}

// SweepObjects deletes the objects under the deployment's prefix that no blob names and that were
// written before the grace period (an upload cut before its blob was written, a duplicate whose delete
// failed, an object of a swept blob), and aborts the multipart uploads begun before it. It returns how
// many it deleted.
func (s *Sweeper) SweepObjects(ctx context.Context, in SweepInput) (int, error) {
	before := time.Now().Add(-in.Grace)
	deleted := 0
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		rows, err := s.Pool.Query(ctx, `SELECT object_key FROM blobs WHERE object_key = ANY($1)`, batch)
		if err != nil {
			return err
		}
		named, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		keep := make(map[string]bool, len(named))
		for _, k := range named {
			keep[k] = true
		}
		for _, k := range batch {
			if keep[k] {
				continue
			}
			if err := s.Objects.remove(ctx, k); err != nil {
				return err
			}
			deleted++
		}
		batch = batch[:0]
		activity.RecordHeartbeat(ctx, deleted)
		return nil
	}
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for obj := range s.Objects.client.ListObjects(listCtx, s.Objects.bucket, minio.ListObjectsOptions{Prefix: s.Objects.prefix, Recursive: true}) {
		if obj.Err != nil {
			return deleted, storeError(obj.Err)
		}
		if !obj.LastModified.Before(before) {
			continue
		}
		if batch = append(batch, obj.Key); len(batch) == sweepBatch {
			if err := flush(); err != nil {
				return deleted, err
			}
		}
	}
	if err := flush(); err != nil {
		return deleted, err
	}
	for up := range s.Objects.client.ListIncompleteUploads(listCtx, s.Objects.bucket, s.Objects.prefix, true) {
		if up.Err != nil {
			return deleted, storeError(up.Err)
		}
		if up.Initiated.Before(before) {
			if err := s.Objects.client.RemoveIncompleteUpload(ctx, s.Objects.bucket, up.Key); err != nil {
				return deleted, storeError(err)
			}
			deleted++
		}
	}
	return deleted, nil
}
