package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/postbox/postbox/internal/ttlcache"
	"github.com/postbox/postbox/store"
)

// Keys finds the API keys clients send and the origins registered on them. Every keyed request needs a
// key and keys change rarely, so answers (also "no such key") are kept for a while: a revoked key stops
// working within it.
type Keys struct {
	q       *store.Queries
	keys    *ttlcache.Cache[[32]byte, cachedKey]
	origins *ttlcache.Cache[string, bool]
}

type cachedKey struct {
	key store.APIKey
	err error
}

// NewKeys returns the keys over q, kept for ttl.
func NewKeys(q *store.Queries, ttl time.Duration) *Keys {
	return &Keys{q: q, keys: ttlcache.New[[32]byte, cachedKey](ttl, 10_000), origins: ttlcache.New[string, bool](ttl, 10_000)}
}

// Find is the key whose value is raw, or store.ErrNotFound.
func (k *Keys) Find(ctx context.Context, raw string) (store.APIKey, error) {
	hash := sha256.Sum256([]byte(raw))
	if c, ok := k.keys.Get(hash); ok {
		return c.key, c.err
	}
	key, err := k.q.GetAPIKey(ctx, hash[:])
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return key, err
	}
	k.keys.Set(hash, cachedKey{key, err})
	return key, err
}

// maxOriginChars is the longest origin a key can register.
const maxOriginChars = 256

// OriginRegistered tells whether origin is registered on any key.
func (k *Keys) OriginRegistered(ctx context.Context, origin string) (bool, error) {
	if strings.IndexByte(origin, 0) >= 0 || !utf8.ValidString(origin) || utf8.RuneCountInString(origin) > maxOriginChars {
		return false, nil // no registered origin looks like that, and PostgreSQL would refuse to compare it
	}
	if ok, cached := k.origins.Get(origin); cached {
		return ok, nil
	}
	ok, err := k.q.OriginRegistered(ctx, origin)
	if err == nil {
		k.origins.Set(origin, ok)
	}
	return ok, err
}
