package api

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/store"
)

// RateLimit is the default limit of every API key in every area: Limit requests per Window, counted in
// PostgreSQL so that all replicas share it. A key may have limits of its own per area (api_keys.rate_limits).
// A zero Limit turns limiting off.
type RateLimit struct {
	Limit  int
	Window time.Duration
}

// maxLease bounds the requests a replica takes from a window's count at once (limit/leaseShare, at least
// one): one upsert serves that many requests, so the limiter costs a fraction of a query per request. A
// lease not used up by the end of its window is lost, never given twice, so all replicas together never
// admit more than the limit; a key may be refused up to a lease per replica early.
const (
	maxLease   = 64
	leaseShare = 64
)

// rateLimiter holds this replica's leases, per API key and area, in the current window.
type rateLimiter struct {
	q      *store.Queries
	mu     sync.Mutex
	leases map[rateKey]*lease
}

type rateKey struct {
	hash string
	area string
}

type lease struct {
	left    int       // requests this replica may still admit in the window
	counted int       // the window's count in PostgreSQL after the last lease, all replicas'
	ends    time.Time // when the window ends
	full    bool      // the window's count reached the limit: nothing more to lease in it
}

// take admits one request of key in area under limit, leasing from PostgreSQL when this replica has
// nothing left in the window. It returns what remains (about: other replicas' leases count as used) and
// the time left in the window, and whether the request is admitted.
func (l *rateLimiter) take(ctx context.Context, key store.APIKey, area string, limit int, window time.Duration) (remaining int, left time.Duration, ok bool, err error) {
	k := rateKey{string(key.KeyHash), area}
	now := time.Now()
	l.mu.Lock()
	ls := l.leases[k]
	if ls != nil && now.Before(ls.ends) && (ls.left > 0 || ls.full) {
		// A full window stays full: counts only grow until the window ends.
		admit := ls.left > 0
		if admit {
			ls.left--
		}
		remaining, left = max(0, limit-ls.counted+ls.left), ls.ends.Sub(now)
		l.mu.Unlock()
		return remaining, left, admit, nil
	}
	l.mu.Unlock()

	size := min(maxLease, max(1, limit/leaseShare))
	counted, left, err := l.q.CountRequests(ctx, key.KeyHash, area, window, size)
	if err != nil {
		return 0, 0, false, err
	}
	granted := min(size, limit-(counted-size))
	l.mu.Lock()
	defer l.mu.Unlock()
	// Requests that found no lease at the same time each leased: their shares add up.
	if ls = l.leases[k]; ls != nil && now.Before(ls.ends) {
		ls.left += max(0, granted)
		ls.counted = max(ls.counted, counted)
		ls.full = ls.full || granted < size
	} else {
		ls = &lease{left: max(0, granted), counted: counted, ends: now.Add(left), full: granted < size}
		l.leases[k] = ls
	}
	if ls.left == 0 {
		return 0, left, false, nil
	}
	ls.left--
	return max(0, limit-counted+ls.left), left, true, nil
}

// limitRate counts the request against its key's limit in the area and answers it with the IETF
// RateLimit-Policy and RateLimit headers (draft-ietf-httpapi-ratelimit-headers), or 429 with Retry-After
// beyond the limit. It runs in requireKey, once the key and the area are known.
func (s *Server) limitRate(c *gin.Context, key store.APIKey, area string) {
	rl := s.opts.RateLimit
	if rl.Limit <= 0 {
		c.Next()
		return
	}
	limit := rl.Limit
	if own, ok := key.RateLimits[area]; ok {
		limit = own
	}
	remaining, left, ok, err := s.limiter.take(c.Request.Context(), key, area, limit, rl.Window)
	if err != nil {
		abort(c, err)
		return
	}
	reset := max(1, int(math.Ceil(left.Seconds())))
	h := c.Writer.Header()
	// Concatenated, not Sprintf: every request writes them.
	h.Set("RateLimit-Policy", `"`+area+`";q=`+strconv.Itoa(limit)+`;w=`+strconv.Itoa(int(rl.Window.Seconds())))
	h.Set("RateLimit", `"`+area+`";r=`+strconv.Itoa(remaining)+`;t=`+strconv.Itoa(reset))
	if !ok {
		problem.SetRetryAfter(h, time.Duration(reset)*time.Second)
		abort(c, problem.New(http.StatusTooManyRequests, "rate-limited",
			"this API key has made %d requests in the %s area within %s; wait %d s", limit, area, rl.Window, reset))
		return
	}
	c.Next()
}
