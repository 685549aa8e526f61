// Package config reads Postbox's settings from POSTBOX_* environment variables, in one place.
package config

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config holds every setting. The defaults run the whole stack on one machine.
type Config struct {
	DatabaseURL       string        // POSTBOX_DATABASE_URL
	HTTPAddr          string        // POSTBOX_HTTP_ADDR
	TemporalAddress   string        // POSTBOX_TEMPORAL_ADDRESS
	TemporalNamespace string        // POSTBOX_TEMPORAL_NAMESPACE
	TrustProxy        bool          // POSTBOX_TRUST_PROXY: honour X-Forwarded-Proto and -Host
	MaxBodyBytes      int64         // POSTBOX_MAX_BODY_BYTES: limit of JSON and XML request bodies
	ShutdownTimeout   time.Duration // POSTBOX_SHUTDOWN_TIMEOUT: how long in-flight work may finish on stop
	LogLevel          slog.Level    // POSTBOX_LOG_LEVEL: debug, info, warn or error
	LogFormat         string        // POSTBOX_LOG_FORMAT: json or text

	TokenIssuer     string // POSTBOX_TOKEN_ISSUER: the trusted token issuer (iss); empty trusts none
	TokenAudience   string // POSTBOX_TOKEN_AUDIENCE: the aud tokens must carry
	TokenJWKS       string // POSTBOX_TOKEN_JWKS: the issuer's keys, a URL (cached, refreshed) or a file
	TokenSigningKey string // POSTBOX_TOKEN_SIGNING_KEY: private key `postbox token` signs with (local use)

	TLSAddr     string // POSTBOX_TLS_ADDR: where to serve TLS with client certificates; empty for none
	TLSCert     string // POSTBOX_TLS_CERT: server certificate (PEM)
	TLSKey      string // POSTBOX_TLS_KEY: its private key (PEM)
	TLSClientCA string // POSTBOX_TLS_CLIENT_CA: CA bundle enterprise certificates are verified against

	WorkerMaxActivities    int // POSTBOX_WORKER_MAX_ACTIVITIES: activities one worker runs at once
	WorkerMaxWorkflowTasks int // POSTBOX_WORKER_MAX_WORKFLOW_TASKS: workflow tasks one worker runs at once
}

// Load reads the environment. A malformed value is an error that names its variable.
func Load() (Config, error) {
	return load(os.Getenv)
}

func load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	c := Config{
		DatabaseURL:       r.str("POSTBOX_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postbox?sslmode=disable"),
		HTTPAddr:          r.str("POSTBOX_HTTP_ADDR", "127.0.0.1:8080"),
		TemporalAddress:   r.str("POSTBOX_TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		TemporalNamespace: r.str("POSTBOX_TEMPORAL_NAMESPACE", "default"),
		TrustProxy:        r.boolean("POSTBOX_TRUST_PROXY", false),
		MaxBodyBytes:      r.integer("POSTBOX_MAX_BODY_BYTES", 10<<20),
		ShutdownTimeout:   r.duration("POSTBOX_SHUTDOWN_TIMEOUT", 20*time.Second),
		LogLevel:          r.level("POSTBOX_LOG_LEVEL", slog.LevelInfo),
		LogFormat:         r.oneOf("POSTBOX_LOG_FORMAT", "text", "text", "json"),

		TokenIssuer:     r.str("POSTBOX_TOKEN_ISSUER", "https://test-issuer.demo.local"),
		TokenAudience:   r.str("POSTBOX_TOKEN_AUDIENCE", "mailbox-api"),
		TokenJWKS:       r.str("POSTBOX_TOKEN_JWKS", "deploy/demo/certs/jwks.json"),
		TokenSigningKey: r.str("POSTBOX_TOKEN_SIGNING_KEY", "deploy/demo/certs/issuer-key.pem"),

		TLSAddr:     r.str("POSTBOX_TLS_ADDR", ""),
		TLSCert:     r.str("POSTBOX_TLS_CERT", "deploy/demo/certs/server.pem"),
		TLSKey:      r.str("POSTBOX_TLS_KEY", "deploy/demo/certs/server-key.pem"),
		TLSClientCA: r.str("POSTBOX_TLS_CLIENT_CA", "deploy/demo/certs/ca.pem"),

		WorkerMaxActivities:    int(r.integer("POSTBOX_WORKER_MAX_ACTIVITIES", 16)),
		WorkerMaxWorkflowTasks: int(r.integer("POSTBOX_WORKER_MAX_WORKFLOW_TASKS", 16)),
	}
	if c.MaxBodyBytes <= 0 {
		r.fail("POSTBOX_MAX_BODY_BYTES", "must be positive")
	}
	if c.WorkerMaxActivities <= 0 {
		r.fail("POSTBOX_WORKER_MAX_ACTIVITIES", "must be positive")
	}
	if c.WorkerMaxWorkflowTasks <= 0 {
		r.fail("POSTBOX_WORKER_MAX_WORKFLOW_TASKS", "must be positive")
	}
	return c, r.err
}

type reader struct {
	getenv func(string) string
	err    error
}

func (r *reader) fail(name, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

func (r *reader) boolean(name string, def bool) bool {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(name, "%q is not true or false", v)
	}
	return b
}

func (r *reader) integer(name string, def int64) int64 {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		r.fail(name, "%q is not a whole number", v)
	}
	return n
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		r.fail(name, "%q is not a duration like 30s or 2m", v)
	}
	return d
}

func (r *reader) level(name string, def slog.Level) slog.Level {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		r.fail(name, "%q is not one of debug, info, warn, error", v)
	}
	return l
}

func (r *reader) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(r.getenv(name))
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(name, "%q is not one of %s", v, strings.Join(allowed, ", "))
	return def
}
