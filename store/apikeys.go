package store

import "context"

// APIKey is a registered client key: the areas it may call and the browser origins registered for it.
type APIKey struct {
	Name             string
	Areas            []string
	Origins          []string
	ServiceOwnerCode *string
}

// GetAPIKey finds a key by the SHA-256 of its value.
func (q *Queries) GetAPIKey(ctx context.Context, keyHash []byte) (APIKey, error) {
	var k APIKey
	err := q.db.QueryRow(ctx, `SELECT name, areas, origins, service_owner_code FROM api_keys WHERE key_hash = $1`, keyHash).
		Scan(&k.Name, &k.Areas, &k.Origins, &k.ServiceOwnerCode)
	return k, notFound(err)
}

// OriginRegistered tells whether any key has origin registered for browser use.
func (q *Queries) OriginRegistered(ctx context.Context, origin string) (bool, error) {
	var ok bool
	err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys WHERE $1 = ANY (origins))`, origin).Scan(&ok)
	return ok, err
}
