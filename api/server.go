// Package api is the HTTP layer of Postbox: routes, middleware, HAL rendering, problem errors and handlers.
package api

import (
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/serviceowner"
	"github.com/postbox/postbox/store"
)

// Options are the dependencies and settings of the HTTP layer.
type Options struct {
	Pool *pgxpool.Pool
	// Files holds the bytes of attachments and prints (the object store).
	Files *files.Service
	// PresignFrom: downloads of files at least this large answer a redirect to a pre-signed URL of the
	// store valid for PresignExpiry (POSTBOX_FILES_PRESIGN_FROM, _EXPIRY); zero streams every file.
	PresignFrom   int64
	PresignExpiry time.Duration
	Logger        *slog.Logger
	// TrustProxy makes links follow X-Forwarded-Proto and X-Forwarded-Host, for use behind a reverse proxy.
	TrustProxy bool
	// MaxBodyBytes limits JSON and XML request bodies; larger ones get 413.
	MaxBodyBytes int64
	// Limits bound slow clients and large headers; the zero value turns them off.
	Limits ClientLimits
	// RateLimit limits the requests of each API key per area; the zero value turns it off.
	RateLimit RateLimit
	// Tokens verifies bearer tokens; nil trusts no issuer.
	Tokens *identity.TokenVerifier
	// Rights answers effective rights; nil makes one without a cache (the caller starts Listen to cache).
	Rights *identity.Rights
	// FormTasks carries form-task changes to their workflows (nil answers them with 503); /readyz checks it.
	FormTasks *formtask.Service
	// Correspondence sends the agency's correspondence; without a Temporal client it answers sends with 503.
	Correspondence *correspondence.Service
	// Notifications takes the notification orders; without a Temporal client it answers orders with 503.
	Notifications *notification.Service
	// TracerProvider makes a server span of every request, in the request's context; nil traces nothing.
	TracerProvider trace.TracerProvider
	// Propagator reads a trace context the client sent (traceparent); nil ignores it.
	Propagator propagation.TextMapPropagator
	// TrustClientCertHeader believes the RFC 9440 Client-Cert header of a TLS-terminating proxy, verified
	// against ClientCAs, on requests that did not arrive over TLS.
	TrustClientCertHeader bool
	// ClientCAs verify forwarded client certificates; required with TrustClientCertHeader.
	ClientCAs *x509.CertPool
	// ListTimeout bounds each list statement; a list cut off is 400 query-too-broad. Zero: unbounded.
	ListTimeout time.Duration
	// Webhooks checks the endpoints of webhook subscriptions (POSTBOX_WEBHOOK_ALLOW_PRIVATE).
	Webhooks webhook.Guard
	// MaxSubscriptions is the most webhook subscriptions that have not ended a caller may have in an area
	// (POSTBOX_WEBHOOK_MAX_SUBSCRIPTIONS); zero: no limit.
	MaxSubscriptions int
	// WebhookSealer seals the subscriptions' secrets (POSTBOX_WEBHOOK_SEAL_KEYS); nil: the demo key's.
	WebhookSealer *webhook.Sealer
	// WebhookSecretOverlap is how long a rotated secret still signs (POSTBOX_WEBHOOK_SECRET_OVERLAP);
	// zero: a day.
	WebhookSecretOverlap time.Duration
	// PublicURL is the base URL clients reach the API at (config.PublicURL): the events of changes name
	// their resources under it.
	PublicURL string
}

// Server holds what the handlers depend on.
type Server struct {
	opts      Options
	q         *store.Queries
	messages  *store.MessageReader
	log       *slog.Logger
	auth      *identity.Authenticator
	rights    *identity.Rights
	formTasks *formtask.Service
	events    events.Builder
	tracer    trace.Tracer
	handler   http.Handler
	// routeList is every registered route with its area and scopes; routeIndex finds one by "METHOD path".
	routeList  []Route
	routeIndex map[string]Route
	// openAPI is the OpenAPI document of the routes, made at its first request.
	openAPI openAPIDocument
	// Keys, origins and parties change rarely and every request needs them: they are kept for a short while.
	keys    *identity.Keys
	parties *identity.Parties
	owners  *serviceowner.Gate // who may call the service-owner area, and its audit log's pseudonyms
	limiter *rateLimiter
	series  requestSeries
}

// referenceTTL is how long API keys, origins, parties and service owners are kept: a revoked key stops working within it.
const referenceTTL = 30 * time.Second

// New builds the server and its routes.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 10 << 20
	}
	if opts.TrustClientCertHeader && opts.ClientCAs == nil {
		return nil, errors.New("api: TrustClientCertHeader needs ClientCAs to verify forwarded certificates")
	}
	if opts.TracerProvider == nil {
		opts.TracerProvider = noop.NewTracerProvider()
	}
	if opts.WebhookSealer == nil {
		opts.WebhookSealer = webhook.DemoSealer()
	}
	if opts.WebhookSecretOverlap <= 0 {
		opts.WebhookSecretOverlap = 24 * time.Hour
	}
	q := store.New(opts.Pool).WithListTimeout(opts.ListTimeout)
	if opts.Rights == nil {
		opts.Rights = identity.NewRights(q, opts.Logger)
	}
	auth, err := identity.NewAuthenticator(q, opts.Tokens)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, q: q, messages: newMessageReader(opts.Pool), log: opts.Logger, auth: auth, rights: opts.Rights, formTasks: opts.FormTasks,
		events:  events.NewBuilder(opts.PublicURL),
		keys:    identity.NewKeys(q, referenceTTL),
		limiter: &rateLimiter{q: q, leases: map[rateKey]*lease{}},
		parties: identity.NewParties(q, opts.Rights, referenceTTL, 100_000),
		owners:  serviceowner.NewGate(q, opts.Logger, referenceTTL),
	}
	s.tracer = opts.TracerProvider.Tracer("github.com/postbox/postbox/api")
	s.handler = opts.Limits.Wrap(s.routes())
	return s, nil
}

// newMessageReader coalesces the single-message reads of concurrent requests, with up to one statement per
// connection of pool in flight (none without a pool: the OpenAPI document's server).
func newMessageReader(pool *pgxpool.Pool) *store.MessageReader {
	inFlight := 1
	if pool != nil {
		inFlight = int(pool.Config().MaxConns)
	}
	return store.NewMessageReader(pool, inFlight, func(reads int) { telemetry.MessageReadBatch.Observe(float64(reads)) })
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func init() {
	gin.SetMode(gin.ReleaseMode)
}
