package xsd

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Loader returns the XSD text for a key such as "3106/21845".
type Loader func(ctx context.Context, key string) ([]byte, error)

// Cache compiles each schema once and shares it. Concurrent Gets for the
// same key wait for one compilation. Failures are not cached, so a later
// Get retries.
type Cache struct {
	load   Loader
	limits Limits

	mu      sync.Mutex
	entries map[string]*cacheEntry // nil once closed
}

type cacheEntry struct {
	done   chan struct{} // closed when schema and err are set
	schema *Schema
	err    error
}

// NewCache returns a cache that loads schemas with load and validates with lim.
func NewCache(load Loader, lim Limits) *Cache {
	return &Cache{load: load, limits: lim, entries: make(map[string]*cacheEntry)}
}

var errLoaderPanicked = errors.New("xsd: schema loader panicked")

// Get returns the compiled schema for key, loading and compiling it on first
// use. The caller must not Close it; Cache.Close does.
func (c *Cache) Get(ctx context.Context, key string) (*Schema, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	e, ok := c.entries[key]
	if !ok {
		e = &cacheEntry{done: make(chan struct{})}
		c.entries[key] = e
	}
	c.mu.Unlock()
	if !ok {
		c.fill(ctx, key, e)
		return e.schema, e.err
	}
	select {
	case <-e.done:
		return e.schema, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Cache) fill(ctx context.Context, key string, e *cacheEntry) {
	e.err = errLoaderPanicked // replaced below unless the loader panics
	defer func() {
		if e.err != nil {
			c.mu.Lock()
			if c.entries != nil {
				delete(c.entries, key)
			}
			c.mu.Unlock()
		}
		close(e.done) // waiters must never hang, even after a panic
	}()
	text, err := c.load(ctx, key)
	if err != nil {
		e.err = fmt.Errorf("xsd: loading schema %q: %w", key, err)
		return
	}
	e.schema, e.err = Compile(text, c.limits)
	if e.err != nil {
		e.err = fmt.Errorf("schema %q: %w", key, e.err)
	}
}

// Close frees every cached schema, waiting for compilations and validations
// in progress. Later Gets return ErrClosed.
func (c *Cache) Close() {
	c.mu.Lock()
	entries := c.entries
	c.entries = nil
	c.mu.Unlock()
	for _, e := range entries {
		<-e.done
		if e.schema != nil {
			e.schema.Close()
		}
	}
}
