package store

import "context"

// APIKey is a registered client key: the areas it may call and the browser origins registered for it.
type APIKey struct {
	KeyHash          []byte // SHA-256 of the key: what names it
	Name             string
	Areas            []string
	Origins          []string
	ServiceOwnerCode *string
	// RateLimits are the key's own limits per area (requests per window), over the configured default.
	RateLimits map[string]int
}

// GetAPIKey finds a key by the SHA-256 of its value.
func (q *Queries) GetAPIKey(ctx context.Context, keyHash []byte) (APIKey, error) {
	var k APIKey
	err := q.db.QueryRow(ctx, `SELECT key_hash, name, areas, origins, service_owner_code, rate_limits FROM api_keys WHERE key_hash = $1`, keyHash).
		Scan(&k.KeyHash, &k.Name, &k.Areas, &k.Origins, &k.ServiceOwnerCode, &k.RateLimits)
	return k, NotFound(err)
}

// OriginRegistered tells whether any key has origin registered for browser use.
func (q *Queries) OriginRegistered(ctx context.Context, origin string) (bool, error) {
	var ok bool
	err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys WHERE $1 = ANY (origins))`, origin).Scan(&ok)
	return ok, err
}
