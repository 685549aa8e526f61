package api

import (
	"fmt"
	"math"
	"net/http"
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
	count, left, err := s.q.CountRequest(c.Request.Context(), key.KeyHash, area, rl.Window)
	if err != nil {
		abort(c, err)
		return
	}
	reset := max(1, int(math.Ceil(left.Seconds())))
	h := c.Writer.Header()
	h.Set("RateLimit-Policy", fmt.Sprintf(`"%s";q=%d;w=%d`, area, limit, int(rl.Window.Seconds())))
	h.Set("RateLimit", fmt.Sprintf(`"%s";r=%d;t=%d`, area, max(0, limit-count), reset))
	if count > limit {
		problem.SetRetryAfter(h, time.Duration(reset)*time.Second)
		abort(c, problem.New(http.StatusTooManyRequests, "rate-limited",
			"this API key has made %d requests in the %s area within %s; wait %d s", limit, area, rl.Window, reset))
		return
	}
	c.Next()
}
