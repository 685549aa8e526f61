package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

// healthz says the process is up; it checks nothing else, so a slow database never restarts the pod.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readiness is the answer of /readyz: the state of each dependency and, when one is down, a problem
// document naming it.
type readiness struct {
	*problem.Problem
	Checks map[string]string `json:"checks"`
}

// readyz says whether the API can serve: the database and Temporal both answer. When one does not, the
// answer is a 503 problem that names it, with Retry-After.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"database": "ok", "temporal": "ok"}
	var down []string
	if err := s.opts.Pool.Ping(ctx); err != nil {
		checks["database"], down = "unreachable", append(down, "database")
		s.log.WarnContext(ctx, "readiness: database unreachable", "err", err)
	}
	if s.formTasks == nil {
		checks["temporal"] = "not configured"
	} else if err := s.formTasks.CheckHealth(ctx); err != nil {
		checks["temporal"], down = "unreachable", append(down, "temporal")
		s.log.WarnContext(ctx, "readiness: temporal unreachable", "err", err)
	}
	if len(down) == 0 {
		c.JSON(http.StatusOK, gin.H{"status": "ok", "checks": checks})
		return
	}
	kind := "dependency-unavailable"
	if len(down) == 1 {
		kind = down[0] + "-unavailable"
	}
	p := problem.New(http.StatusServiceUnavailable, kind, "not ready: %s cannot be reached", strings.Join(down, " and "))
	p.Instance = c.Request.URL.Path
	problem.SetRetryAfter(c.Writer.Header(), problem.UnavailableRetryAfter)
	c.Header("Content-Type", "application/problem+json; charset=utf-8")
	c.JSON(http.StatusServiceUnavailable, readiness{Problem: p, Checks: checks})
}
