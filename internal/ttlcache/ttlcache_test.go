package ttlcache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestEntriesExpire(t *testing.T) {
	now := time.Unix(1000, 0)
	c := New[string, int](10*time.Second, 3)
	c.now = func() time.Time { return now }
	c.Set("a", 1)
	c.Set("b", 2, now.Add(time.Second))
	v, ok := c.Get("a")
	assert.True(t, ok)
	assert.Equal(t, 1, v)

	now = now.Add(2 * time.Second)
	_, ok = c.Get("b")
	assert.False(t, ok, "an earlier expiry wins")
	_, ok = c.Get("a")
	assert.True(t, ok)

	now = now.Add(9 * time.Second)
	_, ok = c.Get("a")
	assert.False(t, ok)
}

func TestBoundedAndClearable(t *testing.T) {
	c := New[int, int](time.Minute, 2)
	c.Set(1, 1)
	c.Set(2, 2)
	c.Set(3, 3) // starts over
	_, ok := c.Get(1)
	assert.False(t, ok)
	_, ok = c.Get(3)
	assert.True(t, ok)
	c.Clear()
	_, ok = c.Get(3)
	assert.False(t, ok)
}
