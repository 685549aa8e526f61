// Package ttlcache is a small concurrent map whose entries expire, for data that may be a few seconds stale.
package ttlcache

import (
	"sync"
	"time"
)

// Cache maps keys to values for a fixed time. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	ttl     time.Duration
	max     int
	mu      sync.RWMutex
	entries map[K]entry[V]
	now     func() time.Time
}

type entry[V any] struct {
	value   V
	expires time.Time
}

// New returns a cache whose entries live for ttl; past max entries it starts over.
func New[K comparable, V any](ttl time.Duration, max int) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: max, entries: map[K]entry[V]{}, now: time.Now}
}

// Get returns the live value of key.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || c.now().After(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Set stores value under key until the cache's ttl, or until expires if that is sooner.
func (c *Cache[K, V]) Set(key K, value V, expires ...time.Time) {
	until := c.now().Add(c.ttl)
	for _, e := range expires {
		if e.Before(until) {
			until = e
		}
	}
	c.mu.Lock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[key] = entry[V]{value: value, expires: until}
	c.mu.Unlock()
}

// Clear forgets everything.
func (c *Cache[K, V]) Clear() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
