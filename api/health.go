package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

// healthz says the process is up; it checks nothing else, so a slow database never restarts the pod.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readiness is the answer of /readyz: the state of each dependency and, when the database is down, a
// problem document naming it.
type readiness struct {
	*problem.Problem
	Checks map[string]string `json:"checks"`
}

// readyz says whether the API can serve, which only PostgreSQL decides: every read comes from it. An
// unreachable Temporal is reported ("status": "degraded") but keeps the pod in its Service, since only
// form-task changes need it and they answer 503 temporal-unavailable meanwhile; taking every pod out
// would fail the reads as well.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"database": "ok", "temporal": "ok"}
	status := "ok"
	if s.formTasks == nil {
		checks["temporal"] = "not configured"
	} else if err := s.formTasks.CheckHealth(ctx); err != nil {
		checks["temporal"], status = "unreachable", "degraded"
		s.log.WarnContext(ctx, "readiness: temporal unreachable, form-task changes answer 503", "err", err)
	}
	if err := s.opts.Pool.Ping(ctx); err != nil {
		checks["database"] = "unreachable"
		s.log.WarnContext(ctx, "readiness: database unreachable", "err", err)
		p := problem.New(http.StatusServiceUnavailable, "database-unavailable", "not ready: the database cannot be reached")
		p.Instance = c.Request.URL.Path
		problem.SetRetryAfter(c.Writer.Header(), problem.UnavailableRetryAfter)
		c.Header("Content-Type", "application/problem+json; charset=utf-8")
		c.JSON(http.StatusServiceUnavailable, readiness{Problem: p, Checks: checks})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": status, "checks": checks})
}
