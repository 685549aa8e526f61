// Package api is the HTTP layer of Postbox: routes, middleware, HAL rendering, problem errors and handlers.
package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/store"
)

// Options are the dependencies and settings of the HTTP layer.
type Options struct {
	Pool   *pgxpool.Pool
	Logger *slog.Logger
	// TrustProxy makes links follow X-Forwarded-Proto and X-Forwarded-Host, for use behind a reverse proxy.
	TrustProxy bool
	// MaxBodyBytes limits JSON and XML request bodies; larger ones get 413.
	MaxBodyBytes int64
	// TemporalHealth reports whether Temporal answers; /readyz calls it.
	TemporalHealth func(context.Context) error
}

// Server holds what the handlers depend on.
type Server struct {
	opts    Options
	q       *store.Queries
	log     *slog.Logger
	handler http.Handler
}

// New builds the server and its routes.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 10 << 20
	}
	s := &Server{opts: opts, q: store.New(opts.Pool), log: opts.Logger}
	s.handler = s.routes()
	return s
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func init() {
	gin.SetMode(gin.ReleaseMode)
}
