package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// IdempotencyScope names one Idempotency-Key: the client's key, of one caller with one API key.
type IdempotencyScope struct {
	APIKey []byte // SHA-256 of the API key
	Caller string
	Key    string
}

// IdempotentResponse is the answer kept for a key. Done is false while the first request still runs.
type IdempotentResponse struct {
	Done          bool
	RequestDigest []byte
	RequestBytes  int64
	Status        int
	Header        map[string][]string
	Body          []byte
}

// IdempotencyClaim is held by the request that runs for a key; only it may complete or release the key.
type IdempotencyClaim struct {
	Scope IdempotencyScope
	token string
}

// ClaimIdempotencyKey takes the key for a request that is to run: ok is true when no request had it, or
// its answer expired (ttl after it was claimed), or its request was abandoned (its claim not renewed for
// abandonAfter: its process died; RenewIdempotencyClaim). Otherwise ok is false and kept is what the key
// holds now.
func (q *Queries) ClaimIdempotencyKey(ctx context.Context, scope IdempotencyScope, ttl, abandonAfter time.Duration) (
	claim IdempotencyClaim, kept IdempotentResponse, ok bool, err error) {
	// The claim and the read are two statements: a read in the claim's statement would not see a row
	// another transaction committed while this one waited for it.
	for range 3 {
		var token string
		err = q.db.QueryRow(ctx, `
			INSERT INTO idempotent_requests AS r (api_key, caller, key, claim, claimed_at, expires_at)
			VALUES ($1, $2, $3, gen_random_uuid(), now(), now() + $4::interval)
			ON CONFLICT (api_key, caller, key) DO UPDATE
			SET claim = gen_random_uuid(), claimed_at = now(), expires_at = now() + $4::interval,
			    request_digest = NULL, request_bytes = NULL, status = NULL, header = NULL, body = NULL
			WHERE r.expires_at < now() OR (r.status IS NULL AND r.claimed_at < now() - $5::interval)
			RETURNING claim::text`, scope.APIKey, scope.Caller, scope.Key, ttl, abandonAfter).Scan(&token)
		if err == nil {
			return IdempotencyClaim{Scope: scope, token: token}, kept, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return claim, kept, false, err
		}
		var status *int
		err = q.db.QueryRow(ctx, `
			SELECT request_digest, coalesce(request_bytes, 0), status, header, body FROM idempotent_requests
			WHERE api_key = $1 AND caller = $2 AND key = $3`, scope.APIKey, scope.Caller, scope.Key).
			Scan(&kept.RequestDigest, &kept.RequestBytes, &status, &kept.Header, &kept.Body)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // released in between: claim it again
		}
		if err != nil {
			return claim, kept, false, err
		}
		if status != nil {
			kept.Done, kept.Status = true, *status
		}
		return claim, kept, false, nil
	}
	return claim, kept, false, errors.New("store: an idempotency key kept changing hands")
}

// RenewIdempotencyClaim tells that the request holding claim still runs, so that its key is not taken
// over as abandoned. It reports false when the claim is no longer the key's.
func (q *Queries) RenewIdempotencyClaim(ctx context.Context, claim IdempotencyClaim) (bool, error) {
	tag, err := q.db.Exec(ctx, `UPDATE idempotent_requests SET claimed_at = now()
		WHERE api_key = $1 AND caller = $2 AND key = $3 AND claim = $4::uuid AND status IS NULL`,
		claim.Scope.APIKey, claim.Scope.Caller, claim.Scope.Key, claim.token)
	return tag.RowsAffected() == 1, err
}

// CompleteIdempotencyKey keeps the answer of the request that holds claim. An answer whose claim was
// taken over (its request ran past the abandonment time) is not kept.
func (q *Queries) CompleteIdempotencyKey(ctx context.Context, claim IdempotencyClaim, r IdempotentResponse) error {
	_, err := q.db.Exec(ctx, `
		UPDATE idempotent_requests SET request_digest = $5, request_bytes = $6, status = $7, header = $8, body = $9
		WHERE api_key = $1 AND caller = $2 AND key = $3 AND claim = $4::uuid`,
		claim.Scope.APIKey, claim.Scope.Caller, claim.Scope.Key, claim.token, r.RequestDigest, r.RequestBytes, r.Status, r.Header, r.Body)
	return err
}

// ReleaseIdempotencyKey gives the key up without an answer, so that a retry runs again.
func (q *Queries) ReleaseIdempotencyKey(ctx context.Context, claim IdempotencyClaim) error {
	_, err := q.db.Exec(ctx, `DELETE FROM idempotent_requests WHERE api_key = $1 AND caller = $2 AND key = $3 AND claim = $4::uuid`,
		claim.Scope.APIKey, claim.Scope.Caller, claim.Scope.Key, claim.token)
	return err
}

// DeleteExpiredIdempotentResponses removes the keys whose answers have expired.
func (q *Queries) DeleteExpiredIdempotentResponses(ctx context.Context) (int64, error) {
	tag, err := q.db.Exec(ctx, `DELETE FROM idempotent_requests WHERE expires_at < now()`)
	return tag.RowsAffected(), err
}
