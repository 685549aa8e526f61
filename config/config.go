// Package config reads Postbox's settings from POSTBOX_* environment variables, in one place.
package config

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/files"
)

// Config holds every setting. The defaults run the whole stack on one machine.
type Config struct {
	DatabaseURL string // POSTBOX_DATABASE_URL
	// DatabaseListenURL is where the LISTEN connections go (the rights cache's and the webhook
	// listener's; POSTBOX_DATABASE_LISTEN_URL, default POSTBOX_DATABASE_URL): PostgreSQL itself when
	// POSTBOX_DATABASE_URL is a transaction-mode pooler, behind which a LISTEN hears nothing.
	DatabaseListenURL string
	// RightsCacheTTL is how long a cached answer of the rights cache is used (POSTBOX_RIGHTS_CACHE_TTL):
	// the cache is emptied by every change it hears of, and this bounds how long a listener that hears
	// nothing (a pooler in between, a lost notification) can keep a revoked right alive.
	RightsCacheTTL    time.Duration
	HTTPAddr          string // POSTBOX_HTTP_ADDR
	TemporalAddress   string // POSTBOX_TEMPORAL_ADDRESS
	TemporalNamespace string // POSTBOX_TEMPORAL_NAMESPACE
	// TemporalConnectTimeout bounds how long a form-task change waits for the Temporal server to answer
	// before it is 503 (POSTBOX_TEMPORAL_CONNECT_TIMEOUT); an Update the server runs is not cut by it.
	TemporalConnectTimeout time.Duration
	// A secured Temporal frontend (Temporal Cloud, or a cluster with TLS): POSTBOX_TEMPORAL_TLS turns TLS
	// on (it is on by default as soon as any of the others is set); POSTBOX_TEMPORAL_TLS_CA is the CA
	// bundle the frontend's certificate is verified against (empty: the system's roots);
	// POSTBOX_TEMPORAL_TLS_CERT and POSTBOX_TEMPORAL_TLS_KEY the client certificate of mTLS (read again at
	// every handshake, so a rotated certificate is used without a restart);
	// POSTBOX_TEMPORAL_TLS_SERVER_NAME the name to verify when it is not the address's host;
	// POSTBOX_TEMPORAL_API_KEY an API key sent as a bearer token on every call (TLS only).
	TemporalTLS     TemporalTLS
	TemporalAPIKey  string
	TrustProxy      bool          // POSTBOX_TRUST_PROXY: honour X-Forwarded-Proto and -Host
	MaxBodyBytes    int64         // POSTBOX_MAX_BODY_BYTES: limit of JSON and XML request bodies
	ShutdownTimeout time.Duration // POSTBOX_SHUTDOWN_TIMEOUT: how long in-flight work may finish on stop
	// ListTimeout bounds each list statement in PostgreSQL (POSTBOX_LIST_TIMEOUT); a list cut off is a 400
	// query-too-broad naming the options to narrow.
	ListTimeout time.Duration
	// StartupTimeout bounds how long a starting process waits for the database (and the worker for
	// Temporal) before it gives up (POSTBOX_STARTUP_TIMEOUT); 0 waits for ever.
	StartupTimeout time.Duration

	// Slow and idle clients (docs/http.md, Slow clients).
	ReadHeaderTimeout time.Duration // POSTBOX_READ_HEADER_TIMEOUT: how long the request line and headers may take
	IdleTimeout       time.Duration // POSTBOX_IDLE_TIMEOUT: how long an idle keep-alive connection stays open
	ProgressWindow    time.Duration // POSTBOX_PROGRESS_WINDOW: the window in which bodies must make progress
	ProgressMinBytes  int64         // POSTBOX_PROGRESS_MIN_BYTES: what a body must bring (or a response take) per window
	MaxHeaderBytes    int64         // POSTBOX_MAX_HEADER_BYTES: limit of the request line and headers (431 beyond)

	// Rate limits (docs/http.md, Rate limits): requests each API key may make per window in each area,
	// unless the key has its own limit for the area; 0 turns limiting off.
	RateLimit  int           // POSTBOX_RATE_LIMIT
	RateWindow time.Duration // POSTBOX_RATE_WINDOW: the fixed window the limit counts in
	LogLevel   slog.Level    // POSTBOX_LOG_LEVEL: debug, info, warn or error
	LogFormat  string        // POSTBOX_LOG_FORMAT: json or text

	// APIGCPercent is the API's garbage-collection target (runtime/debug.SetGCPercent), from
	// POSTBOX_API_GC_PERCENT; 0 leaves the Go runtime's own (GOGC, 100 unless set). The API's live heap is
	// small and it allocates with every response, so the default collects a fifth as often.
	APIGCPercent int

	// POSTBOX_TOKEN_ISSUER and POSTBOX_TOKEN_JWKS: the trusted token issuers (iss) and their keys (a URL,
	// cached and refreshed, or a file), as two comma-separated lists of the same length.
	TokenIssuers    []TokenIssuer
	TokenAudience   string // POSTBOX_TOKEN_AUDIENCE: the aud tokens must carry
	TokenSigningKey string // POSTBOX_TOKEN_SIGNING_KEY: private key `postbox token` signs with (local use)

	TLSAddr     string // POSTBOX_TLS_ADDR: where to serve TLS with client certificates; empty for none
	TLSCert     string // POSTBOX_TLS_CERT: server certificate (PEM)
	TLSKey      string // POSTBOX_TLS_KEY: its private key (PEM)
	TLSClientCA string // POSTBOX_TLS_CLIENT_CA: CA bundle enterprise certificates are verified against

	// TrustClientCertHeader makes the API believe the RFC 9440 Client-Cert header of a TLS-terminating
	// proxy (POSTBOX_TRUST_CLIENT_CERT_HEADER); the certificate is still verified against TLSClientCA.
	TrustClientCertHeader bool

	WorkerMaxActivities    int      // POSTBOX_WORKER_MAX_ACTIVITIES: activities one worker runs at once
	WorkerMaxWorkflowTasks int      // POSTBOX_WORKER_MAX_WORKFLOW_TASKS: workflow tasks one worker runs at once
	WorkerQueues           []string // POSTBOX_WORKER_QUEUES: the queue groups a worker polls (QueueGroups)
	// TrashbinRetention is how long a message stays in a trashbin before the scheduled purge deletes it
	// for good (POSTBOX_TRASHBIN_RETENTION).
	TrashbinRetention time.Duration
	// EventsRetentionMonths is how many whole months of events are kept before the current one
	// (POSTBOX_EVENTS_RETENTION_MONTHS); AuditRetentionMonths the same for the audit logs
	// (POSTBOX_AUDIT_RETENTION_MONTHS), which are the trail of the archives and so kept for their legal
	// period. 0 keeps them for good.
	EventsRetentionMonths int
	AuditRetentionMonths  int

	// PublicURL is the base URL clients reach the API at (POSTBOX_PUBLIC_URL): events name their
	// resources as absolute URIs under it.
	PublicURL string

	// TimeZone is the zone of every local date-time the interface shows without a zone (POSTBOX_TIME_ZONE,
	// an IANA name; Europe/Oslo by default). The commands make it the clock's (clock.SetZone).
	TimeZone *time.Location

	// Webhook deliveries (docs/events.md): POSTBOX_WEBHOOK_ALLOW_PRIVATE lets endpoints be plain
	// http and resolve to private, loopback and link-local addresses (local receivers only);
	// POSTBOX_WEBHOOK_RETRIES are the waits before each further attempt of a failed delivery, after the last
	// of which the event is dead-lettered; POSTBOX_WEBHOOK_TIMEOUT cuts one request to an endpoint;
	// POSTBOX_WEBHOOK_PAUSE_AFTER pauses a subscription whose endpoint has failed for that long;
	// POSTBOX_WEBHOOK_MAX_SUBSCRIPTIONS is the most subscriptions a caller may have in an area (0: no limit).
	WebhookAllowPrivate bool
	WebhookRetries      []time.Duration
	WebhookTimeout      time.Duration
	// WebhookSealKeys seal subscription secrets at rest (POSTBOX_WEBHOOK_SEAL_KEYS: comma-separated
	// id:base64 AES-256 keys, the newest first; the first seals, all open). The default is the demo's key,
	// for make run and the tests only. WebhookSecretOverlap is how long a rotated secret still signs beside
	// the new one (POSTBOX_WEBHOOK_SECRET_OVERLAP).
	WebhookSealKeys         []SealKey
	WebhookSecretOverlap    time.Duration
	WebhookPauseAfter       time.Duration
	WebhookMaxSubscriptions int

	// Notifications (docs/notifications.md). The mail server: POSTBOX_SMTP_ADDR (host:port; empty: no
	// e-mail channel), POSTBOX_SMTP_USERNAME and POSTBOX_SMTP_PASSWORD (SMTP AUTH when set),
	// POSTBOX_SMTP_TLS (starttls, required; tls, implicit; none, for a server on loopback only),
	// POSTBOX_SMTP_FROM (the sender), POSTBOX_SMTP_CONNECTIONS (kept open per worker) and POSTBOX_SMTP_RATE
	// (mails a second per worker; 0: no limit).
	SMTPAddr        string
	SMTPUsername    string
	SMTPPassword    string
	SMTPTLS         string
	SMTPFrom        string
	SMTPConnections int
	SMTPRate        int
	// The SMS gateway (Twilio's Messages API shape): POSTBOX_SMS_URL (empty: no SMS channel, and Sms
	// orders are refused), POSTBOX_SMS_ACCOUNT and POSTBOX_SMS_TOKEN, POSTBOX_SMS_FROM (a number or sender
	// id) and POSTBOX_SMS_RATE (SMS a second per worker; 0: no limit).
	SMSURL     string
	SMSAccount string
	SMSToken   string
	SMSFrom    string
	SMSRate    int

	// Files (docs/files.md): the S3-compatible bucket of the file bytes. POSTBOX_S3_ENDPOINT (host:port),
	// POSTBOX_S3_TLS, POSTBOX_S3_REGION, POSTBOX_S3_BUCKET, POSTBOX_S3_ACCESS_KEY, POSTBOX_S3_SECRET_KEY,
	// POSTBOX_S3_PREFIX (starts every key this deployment writes) and POSTBOX_S3_PART_SIZE (bytes of each
	// part of a multipart upload, at least 5 MiB: the memory one upload holds); POSTBOX_FILES_MAX_SIZE is
	// the ceiling of any one file, whatever its rule allows.
	Files files.Config
	// POSTBOX_FILES_SWEEP_GRACE: how long an object no row refers to is kept before it is swept.
	FilesSweepGrace time.Duration
	// POSTBOX_FILES_PRESIGN_FROM: downloads of files at least this large answer a redirect to a pre-signed
	// URL of the store instead of passing the bytes through (0: never); POSTBOX_FILES_PRESIGN_EXPIRY is
	// how long such a URL works.
	FilesPresignFrom   int64
	FilesPresignExpiry time.Duration

	AdminAddr string // POSTBOX_ADMIN_ADDR: /metrics and /healthz; empty: no admin listener
	// AdminPprof (POSTBOX_ADMIN_PPROF) adds Go's profiles (/debug/pprof/) to the admin listener, for
	// measuring under load (go run ./cmd/benchload --cpuprofile); off by default.
	AdminPprof   bool
	OTLPEndpoint string // POSTBOX_OTLP_ENDPOINT: where traces go by OTLP/gRPC; empty: tracing off
}

// TemporalTLS is how the Temporal client secures its connection.
type TemporalTLS struct {
	Enabled    bool
	CA         string
	Cert, Key  string
	ServerName string
}

// DevPublicURL is POSTBOX_PUBLIC_URL's default: right for make run only. The processes a deployment runs
// refuse it (RequirePublicURL), since every event's immutable source would name it.
const DevPublicURL = "http://127.0.0.1:8080"

// RequirePublicURL refuses the default POSTBOX_PUBLIC_URL: `postbox api` and `postbox worker` call it;
// `postbox dev` (make run) does not.
func (c Config) RequirePublicURL() error {
	if c.PublicURL == DevPublicURL {
		return fmt.Errorf("POSTBOX_PUBLIC_URL: set it to the URL clients reach the API at; the default %s is for `postbox dev` only (events name their resources under it, for good)", DevPublicURL)
	}
	return nil
}

// Queue groups of POSTBOX_WORKER_QUEUES: the form-task workflows, the CPU-bound checks and prints, the
// archiving and read-model writes, the webhook deliveries, the agency's shipments of correspondence, and
// the notifications by e-mail and SMS.
// Each maps to a Temporal task queue (worker.TaskQueueOf).
const (
	QueueFormTask       = "formtask"
	QueueValidation     = "validation"
	QueueArchive        = "archive"
	QueueEvents         = "events"
	QueueCorrespondence = "correspondence"
	QueueNotification   = "notification"
)

// QueueGroups are all queue groups, the default of POSTBOX_WORKER_QUEUES.
var QueueGroups = []string{QueueFormTask, QueueValidation, QueueArchive, QueueEvents, QueueCorrespondence, QueueNotification}

// Load reads the environment. A malformed value is an error that names its variable.
func Load() (Config, error) {
	return load(os.LookupEnv)
}

func load(lookup func(string) (string, bool)) (Config, error) {
	r := reader{lookup: lookup}
	c := Config{
		DatabaseURL:            r.str("POSTBOX_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postbox?sslmode=disable"),
		RightsCacheTTL:         r.duration("POSTBOX_RIGHTS_CACHE_TTL", time.Minute),
		HTTPAddr:               r.str("POSTBOX_HTTP_ADDR", "127.0.0.1:8080"),
		TemporalAddress:        r.str("POSTBOX_TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		TemporalNamespace:      r.str("POSTBOX_TEMPORAL_NAMESPACE", "default"),
		TemporalConnectTimeout: r.duration("POSTBOX_TEMPORAL_CONNECT_TIMEOUT", 3*time.Second),
		TemporalTLS: TemporalTLS{
			CA:         r.str("POSTBOX_TEMPORAL_TLS_CA", ""),
			Cert:       r.str("POSTBOX_TEMPORAL_TLS_CERT", ""),
			Key:        r.str("POSTBOX_TEMPORAL_TLS_KEY", ""),
			ServerName: r.str("POSTBOX_TEMPORAL_TLS_SERVER_NAME", ""),
		},
		TemporalAPIKey:    r.str("POSTBOX_TEMPORAL_API_KEY", ""),
		TrustProxy:        r.boolean("POSTBOX_TRUST_PROXY", false),
		MaxBodyBytes:      r.integer("POSTBOX_MAX_BODY_BYTES", 10<<20),
		ShutdownTimeout:   r.duration("POSTBOX_SHUTDOWN_TIMEOUT", 20*time.Second),
		ListTimeout:       r.duration("POSTBOX_LIST_TIMEOUT", 3*time.Second),
		StartupTimeout:    r.duration("POSTBOX_STARTUP_TIMEOUT", 2*time.Minute),
		ReadHeaderTimeout: r.duration("POSTBOX_READ_HEADER_TIMEOUT", 10*time.Second),
		IdleTimeout:       r.duration("POSTBOX_IDLE_TIMEOUT", 2*time.Minute),
		ProgressWindow:    r.duration("POSTBOX_PROGRESS_WINDOW", 30*time.Second),
		ProgressMinBytes:  r.integer("POSTBOX_PROGRESS_MIN_BYTES", 16<<10),
		MaxHeaderBytes:    r.integer("POSTBOX_MAX_HEADER_BYTES", 64<<10),
		RateLimit:         int(r.integer("POSTBOX_RATE_LIMIT", 6000)),
		RateWindow:        r.duration("POSTBOX_RATE_WINDOW", time.Minute),
		APIGCPercent:      int(r.integer("POSTBOX_API_GC_PERCENT", 400)),
		LogLevel:          r.level("POSTBOX_LOG_LEVEL", slog.LevelInfo),
		LogFormat:         r.oneOf("POSTBOX_LOG_FORMAT", "text", "text", "json"),

		TokenIssuers:    r.issuers("POSTBOX_TOKEN_ISSUER", "https://test-issuer.demo.local", "POSTBOX_TOKEN_JWKS", "deploy/demo/certs/jwks.json"),
		TokenAudience:   r.str("POSTBOX_TOKEN_AUDIENCE", "mailbox-api"),
		TokenSigningKey: r.str("POSTBOX_TOKEN_SIGNING_KEY", "deploy/demo/certs/issuer-key.pem"),

		TLSAddr:     r.str("POSTBOX_TLS_ADDR", ""),
		TLSCert:     r.str("POSTBOX_TLS_CERT", "deploy/demo/certs/server.pem"),
		TLSKey:      r.str("POSTBOX_TLS_KEY", "deploy/demo/certs/server-key.pem"),
		TLSClientCA: r.str("POSTBOX_TLS_CLIENT_CA", "deploy/demo/certs/ca.pem"),

		TrustClientCertHeader: r.boolean("POSTBOX_TRUST_CLIENT_CERT_HEADER", false),

		WorkerMaxActivities:    int(r.integer("POSTBOX_WORKER_MAX_ACTIVITIES", 16)),
		WorkerMaxWorkflowTasks: int(r.integer("POSTBOX_WORKER_MAX_WORKFLOW_TASKS", 16)),
		WorkerQueues:           r.queues("POSTBOX_WORKER_QUEUES"),
		TrashbinRetention:      r.duration("POSTBOX_TRASHBIN_RETENTION", 30*24*time.Hour),
		EventsRetentionMonths:  int(r.integer("POSTBOX_EVENTS_RETENTION_MONTHS", 13)),
		AuditRetentionMonths:   int(r.integer("POSTBOX_AUDIT_RETENTION_MONTHS", 120)),

		PublicURL: r.baseURL("POSTBOX_PUBLIC_URL", DevPublicURL),
		TimeZone:  parsed(&r, "POSTBOX_TIME_ZONE", clock.DefaultLocation(), time.LoadLocation, "an IANA time zone like Europe/Oslo"),

		WebhookAllowPrivate:     r.boolean("POSTBOX_WEBHOOK_ALLOW_PRIVATE", false),
		WebhookRetries:          r.durations("POSTBOX_WEBHOOK_RETRIES", "10s,30s,1m,5m,10m,30m,1h,3h,6h,12h"),
		WebhookTimeout:          r.duration("POSTBOX_WEBHOOK_TIMEOUT", 10*time.Second),
		WebhookSealKeys:         r.sealKeys("POSTBOX_WEBHOOK_SEAL_KEYS", DemoSealKey),
		WebhookSecretOverlap:    r.duration("POSTBOX_WEBHOOK_SECRET_OVERLAP", 24*time.Hour),
		WebhookPauseAfter:       r.duration("POSTBOX_WEBHOOK_PAUSE_AFTER", 24*time.Hour),
		WebhookMaxSubscriptions: int(r.integer("POSTBOX_WEBHOOK_MAX_SUBSCRIPTIONS", 100)),

		SMTPAddr:        r.addr("POSTBOX_SMTP_ADDR", ""),
		SMTPUsername:    r.str("POSTBOX_SMTP_USERNAME", ""),
		SMTPPassword:    r.str("POSTBOX_SMTP_PASSWORD", ""),
		SMTPTLS:         r.oneOf("POSTBOX_SMTP_TLS", "starttls", "starttls", "tls", "none"),
		SMTPFrom:        r.str("POSTBOX_SMTP_FROM", "Postbox <varsling@postbox.local>"),
		SMTPConnections: int(r.integer("POSTBOX_SMTP_CONNECTIONS", 4)),
		SMTPRate:        int(r.integer("POSTBOX_SMTP_RATE", 0)),
		SMSAccount:      r.str("POSTBOX_SMS_ACCOUNT", ""),
		SMSToken:        r.str("POSTBOX_SMS_TOKEN", ""),
		SMSFrom:         r.str("POSTBOX_SMS_FROM", "Postbox"),
		SMSRate:         int(r.integer("POSTBOX_SMS_RATE", 0)),

		Files: files.Config{
			Endpoint:  r.addr("POSTBOX_S3_ENDPOINT", "127.0.0.1:7070"),
			TLS:       r.boolean("POSTBOX_S3_TLS", false),
			Region:    r.str("POSTBOX_S3_REGION", "us-east-1"),
			Bucket:    r.str("POSTBOX_S3_BUCKET", "postbox"),
			AccessKey: r.str("POSTBOX_S3_ACCESS_KEY", "postbox"),
			SecretKey: r.str("POSTBOX_S3_SECRET_KEY", "postbox-dev-secret"),
			Prefix:    r.str("POSTBOX_S3_PREFIX", "files/"),
			PartSize:  r.integer("POSTBOX_S3_PART_SIZE", 16<<20),
			MaxSize:   r.integer("POSTBOX_FILES_MAX_SIZE", 5<<30),
		},
		FilesSweepGrace:    r.duration("POSTBOX_FILES_SWEEP_GRACE", 24*time.Hour),
		FilesPresignFrom:   r.integer("POSTBOX_FILES_PRESIGN_FROM", 0),
		FilesPresignExpiry: r.duration("POSTBOX_FILES_PRESIGN_EXPIRY", 5*time.Minute),

		AdminAddr:    r.addr("POSTBOX_ADMIN_ADDR", "127.0.0.1:9090"),
		AdminPprof:   r.boolean("POSTBOX_ADMIN_PPROF", false),
		OTLPEndpoint: r.endpoint("POSTBOX_OTLP_ENDPOINT"),
	}
	c.DatabaseListenURL = r.str("POSTBOX_DATABASE_LISTEN_URL", c.DatabaseURL)
	tt := &c.TemporalTLS
	secured := tt.CA != "" || tt.Cert != "" || tt.Key != "" || tt.ServerName != "" || c.TemporalAPIKey != ""
	tt.Enabled = r.boolean("POSTBOX_TEMPORAL_TLS", secured)
	if (tt.Cert == "") != (tt.Key == "") {
		r.fail("POSTBOX_TEMPORAL_TLS_CERT", "and POSTBOX_TEMPORAL_TLS_KEY go together (the client certificate and its key)")
	}
	if secured && !tt.Enabled {
		r.fail("POSTBOX_TEMPORAL_TLS", "is false while a CA, a client certificate or an API key is set: they need TLS")
	}
	if c.MaxBodyBytes <= 0 {
		r.fail("POSTBOX_MAX_BODY_BYTES", "must be positive")
	}
	for name, d := range map[string]time.Duration{"POSTBOX_READ_HEADER_TIMEOUT": c.ReadHeaderTimeout,
		"POSTBOX_IDLE_TIMEOUT": c.IdleTimeout, "POSTBOX_PROGRESS_WINDOW": c.ProgressWindow,
		"POSTBOX_TEMPORAL_CONNECT_TIMEOUT": c.TemporalConnectTimeout, "POSTBOX_LIST_TIMEOUT": c.ListTimeout,
		"POSTBOX_TRASHBIN_RETENTION": c.TrashbinRetention, "POSTBOX_WEBHOOK_TIMEOUT": c.WebhookTimeout,
		"POSTBOX_WEBHOOK_PAUSE_AFTER": c.WebhookPauseAfter, "POSTBOX_RIGHTS_CACHE_TTL": c.RightsCacheTTL} {
		if d <= 0 {
			r.fail(name, "must be longer than 0s")
		}
	}
	if c.WebhookMaxSubscriptions < 0 {
		r.fail("POSTBOX_WEBHOOK_MAX_SUBSCRIPTIONS", "must be 0 (no limit) or positive")
	}
	if c.RateLimit < 0 {
		r.fail("POSTBOX_RATE_LIMIT", "must be 0 (off) or positive")
	}
	if c.APIGCPercent < 0 {
		r.fail("POSTBOX_API_GC_PERCENT", "must be 0 (the runtime's GOGC) or positive")
	}
	if c.RateWindow < time.Second || c.RateWindow > 24*time.Hour {
		r.fail("POSTBOX_RATE_WINDOW", "must be from 1s to 24h")
	}
	if c.ProgressMinBytes <= 0 {
		r.fail("POSTBOX_PROGRESS_MIN_BYTES", "must be positive")
	}
	if c.MaxHeaderBytes < 4<<10 {
		r.fail("POSTBOX_MAX_HEADER_BYTES", "must be at least 4096")
	}
	if r.str("POSTBOX_SMS_URL", "") != "" {
		c.SMSURL = r.baseURL("POSTBOX_SMS_URL", "")
	}
	if c.SMTPConnections < 1 || c.SMTPConnections > 100 {
		r.fail("POSTBOX_SMTP_CONNECTIONS", "must be from 1 to 100")
	}
	if c.Files.Endpoint == "" {
		r.fail("POSTBOX_S3_ENDPOINT", "is needed: the file bytes live in the bucket")
	}
	if c.Files.PartSize < 5<<20 || c.Files.PartSize > 5<<30 {
		r.fail("POSTBOX_S3_PART_SIZE", "must be from 5 MiB to 5 GiB (S3's limits of a part)")
	}
	if c.Files.MaxSize < 5<<30 {
		r.fail("POSTBOX_FILES_MAX_SIZE", "must be at least 5 GiB")
	}
	if c.Files.MaxSize > c.Files.PartSize*10000 {
		r.fail("POSTBOX_FILES_MAX_SIZE", "is more than 10,000 parts of POSTBOX_S3_PART_SIZE (S3's limit of parts)")
	}
	if c.FilesSweepGrace < time.Hour {
		r.fail("POSTBOX_FILES_SWEEP_GRACE", "must be at least an hour: an upload must be able to refer to what it saved")
	}
	if c.FilesPresignFrom < 0 || c.FilesPresignExpiry < time.Second || c.FilesPresignExpiry > time.Hour {
		r.fail("POSTBOX_FILES_PRESIGN_FROM", "must be 0 or positive, with POSTBOX_FILES_PRESIGN_EXPIRY from a second to an hour")
	}
	if c.SMTPRate < 0 {
		r.fail("POSTBOX_SMTP_RATE", "must be 0 (no limit) or positive")
	}
	if c.SMSRate < 0 {
		r.fail("POSTBOX_SMS_RATE", "must be 0 (no limit) or positive")
	}
	if c.EventsRetentionMonths < 0 {
		r.fail("POSTBOX_EVENTS_RETENTION_MONTHS", "must be 0 (kept for good) or positive")
	}
	if c.AuditRetentionMonths != 0 && c.AuditRetentionMonths < 12 {
		r.fail("POSTBOX_AUDIT_RETENTION_MONTHS", "must be 0 (kept for good) or at least 12: the audit logs are the archives' trail, kept for their legal period")
	}
	if c.WorkerMaxActivities <= 0 {
		r.fail("POSTBOX_WORKER_MAX_ACTIVITIES", "must be positive")
	}
	if c.WorkerMaxWorkflowTasks <= 0 {
		r.fail("POSTBOX_WORKER_MAX_WORKFLOW_TASKS", "must be positive")
	}
	return c, r.err
}
