package store

import (
	"context"
	"time"
)

// CountRequests counts n requests of an API key in an area in the current fixed window of the given
// length, and returns the window's count so far and the time left in it. The window is cut from the
// database's clock, so every API replica counts in the same one; it is one statement on one row per key
// and area.
func (q *Queries) CountRequests(ctx context.Context, keyHash []byte, area string, window time.Duration, n int) (count int, left time.Duration, err error) {
	var leftMicros int64
	err = q.db.QueryRow(ctx, `
		WITH w AS (SELECT date_bin($3::interval, now(), timestamptz 'epoch') AS start)
		INSERT INTO rate_windows AS r (key_hash, area, window_start, count)
		SELECT $1, $2, w.start, $4 FROM w
		ON CONFLICT (key_hash, area) DO UPDATE
		SET count = CASE WHEN r.window_start = excluded.window_start THEN r.count + $4 ELSE $4 END,
		    window_start = excluded.window_start
		RETURNING count, (extract(epoch FROM window_start + $3::interval - now()) * 1e6)::bigint`,
		keyHash, area, window, n).Scan(&count, &leftMicros)
	return count, time.Duration(leftMicros) * time.Microsecond, err
}
