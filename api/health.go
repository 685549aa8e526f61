package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// healthz says the process is up; it checks nothing else, so a slow database never restarts the pod.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz says whether the API can serve: the database and Temporal both answer.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	checks := gin.H{"database": "ok", "temporal": "ok"}
	ready := true
	if err := s.opts.Pool.Ping(ctx); err != nil {
		checks["database"], ready = "unreachable", false
		s.log.WarnContext(ctx, "readiness: database unreachable", "err", err)
	}
	if s.opts.TemporalHealth == nil {
		checks["temporal"] = "not configured"
	} else if err := s.opts.TemporalHealth(ctx); err != nil {
		checks["temporal"], ready = "unreachable", false
		s.log.WarnContext(ctx, "readiness: temporal unreachable", "err", err)
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
		c.Header("Retry-After", "5")
	}
	c.JSON(status, checks)
}
