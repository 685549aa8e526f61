package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaultsWorkLocally(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", c.HTTPAddr)
	assert.Equal(t, "127.0.0.1:7233", c.TemporalAddress)
	assert.Equal(t, int64(10<<20), c.MaxBodyBytes)
	assert.Equal(t, slog.LevelInfo, c.LogLevel)
	assert.Equal(t, 16, c.WorkerMaxActivities)
	assert.Equal(t, 16, c.WorkerMaxWorkflowTasks)
	assert.Equal(t, []string{"formtask", "validation", "archive", "events", "correspondence", "notification"}, c.WorkerQueues)
	assert.Equal(t, "127.0.0.1:9090", c.AdminAddr)
	assert.False(t, c.AdminPprof, "profiles are off by default")
	assert.Empty(t, c.OTLPEndpoint, "tracing is off by default")
	assert.False(t, c.TrustClientCertHeader)
	assert.Equal(t, "http://127.0.0.1:8080", c.PublicURL)
	assert.Equal(t, "Europe/Oslo", c.TimeZone.String())
}

func TestTimeZone(t *testing.T) {
	c, err := load(env(map[string]string{"POSTBOX_TIME_ZONE": "UTC"}))
	require.NoError(t, err)
	assert.Equal(t, "UTC", c.TimeZone.String())
	_, err = load(env(map[string]string{"POSTBOX_TIME_ZONE": "Mars/Olympus"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "POSTBOX_TIME_ZONE")
}

func TestPublicURL(t *testing.T) {
	c, err := load(env(map[string]string{"POSTBOX_PUBLIC_URL": "https://postbox.example.no/"}))
	require.NoError(t, err)
	assert.Equal(t, "https://postbox.example.no", c.PublicURL, "without its trailing slash")
	for _, bad := range []string{"postbox.example.no", "ftp://postbox.example.no", "https://postbox.example.no/?a=1", "https://u:p@postbox.example.no"} {
		_, err := load(env(map[string]string{"POSTBOX_PUBLIC_URL": bad}))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "POSTBOX_PUBLIC_URL")
	}
	require.NoError(t, c.RequirePublicURL())
	c, err = load(env(nil))
	require.NoError(t, err)
	err = c.RequirePublicURL()
	require.Error(t, err, "the default is make run's only")
	assert.Contains(t, err.Error(), "POSTBOX_PUBLIC_URL")
}

func TestTemporalTLS(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, TemporalTLS{}, c.TemporalTLS, "plain text to the local dev server by default")
	c, err = load(env(map[string]string{"POSTBOX_TEMPORAL_API_KEY": "k"}))
	require.NoError(t, err)
	assert.True(t, c.TemporalTLS.Enabled, "an API key turns TLS on")
	c, err = load(env(map[string]string{"POSTBOX_TEMPORAL_TLS": "true"}))
	require.NoError(t, err)
	assert.True(t, c.TemporalTLS.Enabled, "TLS with the system's roots")
	for _, bad := range []map[string]string{
		{"POSTBOX_TEMPORAL_TLS_CERT": "c.pem"},
		{"POSTBOX_TEMPORAL_TLS_KEY": "k.pem"},
		{"POSTBOX_TEMPORAL_API_KEY": "k", "POSTBOX_TEMPORAL_TLS": "false"},
	} {
		_, err := load(env(bad))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "POSTBOX_TEMPORAL_TLS", bad)
	}
}

// Webhook deliveries retry on Altinn's schedule by default; tests run it in milliseconds.
func TestWebhookSettings(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.False(t, c.WebhookAllowPrivate)
	assert.Equal(t, []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute,
		30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour}, c.WebhookRetries)
	assert.Equal(t, 10*time.Second, c.WebhookTimeout)
	assert.Equal(t, 24*time.Hour, c.WebhookPauseAfter)
	c, err = load(env(map[string]string{"POSTBOX_WEBHOOK_ALLOW_PRIVATE": "true", "POSTBOX_WEBHOOK_RETRIES": "5ms, 10ms",
		"POSTBOX_WEBHOOK_TIMEOUT": "2s", "POSTBOX_WEBHOOK_PAUSE_AFTER": "1h"}))
	require.NoError(t, err)
	assert.True(t, c.WebhookAllowPrivate)
	assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond}, c.WebhookRetries)
	assert.Equal(t, 2*time.Second, c.WebhookTimeout)
	assert.Equal(t, time.Hour, c.WebhookPauseAfter)
}

func TestOperationsSettings(t *testing.T) {
	c, err := load(env(map[string]string{
		"POSTBOX_ADMIN_ADDR":               "0.0.0.0:9091",
		"POSTBOX_WORKER_QUEUES":            " Validation, archive,validation ",
		"POSTBOX_OTLP_ENDPOINT":            "otel-collector:4317",
		"POSTBOX_TRUST_CLIENT_CERT_HEADER": "true",
		"POSTBOX_ADMIN_PPROF":              "true",
	}))
	require.NoError(t, err)
	assert.Equal(t, "0.0.0.0:9091", c.AdminAddr)
	assert.True(t, c.AdminPprof)
	assert.Equal(t, []string{"validation", "archive"}, c.WorkerQueues)
	assert.Equal(t, "otel-collector:4317", c.OTLPEndpoint)
	assert.True(t, c.TrustClientCertHeader)

	c, err = load(env(map[string]string{"POSTBOX_ADMIN_ADDR": "", "POSTBOX_WORKER_QUEUES": "",
		"POSTBOX_OTLP_ENDPOINT": "https://collector.example.org:4317"}))
	require.NoError(t, err)
	assert.Empty(t, c.AdminAddr, "set but empty turns the admin listener off")
	assert.Equal(t, []string{"formtask", "validation", "archive", "events", "correspondence", "notification"}, c.WorkerQueues)
	assert.Equal(t, "https://collector.example.org:4317", c.OTLPEndpoint)
	assert.Equal(t, 13, c.EventsRetentionMonths)
	assert.Equal(t, 120, c.AuditRetentionMonths, "the archives' legal period")

	c, err = load(env(map[string]string{"POSTBOX_EVENTS_RETENTION_MONTHS": "0", "POSTBOX_AUDIT_RETENTION_MONTHS": "60"}))
	require.NoError(t, err)
	assert.Zero(t, c.EventsRetentionMonths, "kept for good")
	assert.Equal(t, 60, c.AuditRetentionMonths)
}

func TestValuesAreRead(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, c.TemporalConnectTimeout, "a few seconds for Temporal to answer")
	assert.Equal(t, 3*time.Second, c.ListTimeout, "a few seconds for a list")
	assert.Equal(t, 2*time.Minute, c.StartupTimeout)
	c, err = load(env(map[string]string{"POSTBOX_TRUST_PROXY": "true", "POSTBOX_SHUTDOWN_TIMEOUT": "3s", "POSTBOX_LOG_LEVEL": "debug",
		"POSTBOX_TEMPORAL_CONNECT_TIMEOUT": "1500ms", "POSTBOX_LIST_TIMEOUT": "750ms", "POSTBOX_STARTUP_TIMEOUT": "0"}))
	require.NoError(t, err)
	assert.True(t, c.TrustProxy)
	assert.Equal(t, 3*time.Second, c.ShutdownTimeout)
	assert.Equal(t, slog.LevelDebug, c.LogLevel)
	assert.Equal(t, 1500*time.Millisecond, c.TemporalConnectTimeout)
	assert.Equal(t, 750*time.Millisecond, c.ListTimeout)
	assert.Zero(t, c.StartupTimeout, "0: wait for ever")
}

func TestABadValueNamesItsVariable(t *testing.T) {
	for name, value := range map[string]string{
		"POSTBOX_TRUST_PROXY":               "perhaps",
		"POSTBOX_MAX_BODY_BYTES":            "-5",
		"POSTBOX_SHUTDOWN_TIMEOUT":          "soon",
		"POSTBOX_LOG_LEVEL":                 "loud",
		"POSTBOX_LOG_FORMAT":                "yaml",
		"POSTBOX_WORKER_MAX_ACTIVITIES":     "0",
		"POSTBOX_WORKER_MAX_WORKFLOW_TASKS": "many",
		"POSTBOX_WORKER_QUEUES":             "formtask,print",
		"POSTBOX_ADMIN_ADDR":                "9090",
		"POSTBOX_OTLP_ENDPOINT":             "ftp://collector:21",
		"POSTBOX_TRUST_CLIENT_CERT_HEADER":  "yes please",
		"POSTBOX_READ_HEADER_TIMEOUT":       "0s",
		"POSTBOX_IDLE_TIMEOUT":              "forever",
		"POSTBOX_PROGRESS_WINDOW":           "0s",
		"POSTBOX_PROGRESS_MIN_BYTES":        "0",
		"POSTBOX_MAX_HEADER_BYTES":          "100",
		"POSTBOX_TEMPORAL_CONNECT_TIMEOUT":  "0s",
		"POSTBOX_LIST_TIMEOUT":              "-1s",
		"POSTBOX_STARTUP_TIMEOUT":           "-1s",
		"POSTBOX_RATE_LIMIT":                "-1",
		"POSTBOX_RATE_WINDOW":               "10ms",
		"POSTBOX_API_GC_PERCENT":            "-1",
		"POSTBOX_WEBHOOK_ALLOW_PRIVATE":     "sometimes",
		"POSTBOX_WEBHOOK_RETRIES":           "10s,,1m",
		"POSTBOX_WEBHOOK_TIMEOUT":           "0s",
		"POSTBOX_WEBHOOK_PAUSE_AFTER":       "a day",
		"POSTBOX_EVENTS_RETENTION_MONTHS":   "-1",
		"POSTBOX_AUDIT_RETENTION_MONTHS":    "6",
	} {
		_, err := load(env(map[string]string{name: value}))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}

// Slow and idle clients are cut off by default, and every limit can be changed.
func TestSlowClientSettings(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, c.ReadHeaderTimeout)
	assert.Equal(t, 2*time.Minute, c.IdleTimeout)
	assert.Equal(t, 30*time.Second, c.ProgressWindow)
	assert.Equal(t, int64(16<<10), c.ProgressMinBytes)
	assert.Equal(t, int64(64<<10), c.MaxHeaderBytes)

	c, err = load(env(map[string]string{"POSTBOX_READ_HEADER_TIMEOUT": "2s", "POSTBOX_IDLE_TIMEOUT": "5s",
		"POSTBOX_PROGRESS_WINDOW": "1m", "POSTBOX_PROGRESS_MIN_BYTES": "1024", "POSTBOX_MAX_HEADER_BYTES": "8192"}))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, c.ReadHeaderTimeout)
	assert.Equal(t, 5*time.Second, c.IdleTimeout)
	assert.Equal(t, time.Minute, c.ProgressWindow)
	assert.Equal(t, int64(1024), c.ProgressMinBytes)
	assert.Equal(t, int64(8192), c.MaxHeaderBytes)
}

func TestTokenIssuersPairWithTheirKeys(t *testing.T) {
	c, err := load(env(map[string]string{
		"POSTBOX_TOKEN_ISSUER": "https://idp.example, https://tokens.example",
		"POSTBOX_TOKEN_JWKS":   "https://idp.example/jwks, /etc/postbox/tokens-jwks.json",
	}))
	require.NoError(t, err)
	assert.Equal(t, []TokenIssuer{{"https://idp.example", "https://idp.example/jwks"},
		{"https://tokens.example", "/etc/postbox/tokens-jwks.json"}}, c.TokenIssuers)

	_, err = load(env(map[string]string{"POSTBOX_TOKEN_ISSUER": "https://idp.example, https://tokens.example"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "POSTBOX_TOKEN_JWKS")
}

// A value that cannot be read says what it should be.
func TestABadValueSaysWhatItShouldBe(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"POSTBOX_TRUST_PROXY", "perhaps", `"perhaps" is not true or false`},
		{"POSTBOX_WORKER_MAX_WORKFLOW_TASKS", "many", `"many" is not a whole number`},
		{"POSTBOX_SHUTDOWN_TIMEOUT", "soon", `"soon" is not a duration like 30s or 2m`},
		{"POSTBOX_LIST_TIMEOUT", "-1s", `"-1s" is not a duration like 30s or 2m`},
		{"POSTBOX_LOG_LEVEL", "loud", `"loud" is not one of debug, info, warn, error`},
	} {
		_, err := load(env(map[string]string{tc.name: tc.value}))
		require.Error(t, err, tc.name)
		assert.Equal(t, tc.name+": "+tc.want, err.Error())
	}
}

// Rate limits are on by default, generous, per minute; both can be changed, and 0 turns them off.
func TestRateLimitSettings(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 6000, c.RateLimit)
	assert.Equal(t, time.Minute, c.RateWindow)
	c, err = load(env(map[string]string{"POSTBOX_RATE_LIMIT": "0", "POSTBOX_RATE_WINDOW": "10s"}))
	require.NoError(t, err)
	assert.Equal(t, 0, c.RateLimit)
	assert.Equal(t, 10*time.Second, c.RateWindow)
}

// The API collects garbage less often than Go's default unless told otherwise; 0 leaves GOGC alone.
func TestAPIGCPercent(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 400, c.APIGCPercent)
	c, err = load(env(map[string]string{"POSTBOX_API_GC_PERCENT": "0"}))
	require.NoError(t, err)
	assert.Zero(t, c.APIGCPercent)
}

func TestWebhookSealKeys(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	require.Len(t, c.WebhookSealKeys, 1)
	assert.Equal(t, "demo-1", c.WebhookSealKeys[0].ID)
	assert.Len(t, c.WebhookSealKeys[0].Key, 32)
	assert.Equal(t, 24*time.Hour, c.WebhookSecretOverlap)

	c, err = load(env(map[string]string{"POSTBOX_WEBHOOK_SEAL_KEYS": "k2:FPatyNC3Kz7lbDHn4e52wYCoTCfd+V9sLYyOzYxG8i8=, k1:" + strings.Repeat("A", 43) + "="}))
	require.NoError(t, err)
	assert.Equal(t, []string{"k2", "k1"}, []string{c.WebhookSealKeys[0].ID, c.WebhookSealKeys[1].ID})
	for _, bad := range []string{"nokey", "k1:short", "k1:FPatyNC3Kz7lbDHn4e52wYCoTCfd+V9sLYyOzYxG8i8=,k1:FPatyNC3Kz7lbDHn4e52wYCoTCfd+V9sLYyOzYxG8i8=", "bad id:FPatyNC3Kz7lbDHn4e52wYCoTCfd+V9sLYyOzYxG8i8="} {
		_, err := load(env(map[string]string{"POSTBOX_WEBHOOK_SEAL_KEYS": bad}))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "POSTBOX_WEBHOOK_SEAL_KEYS")
		assert.NotContains(t, err.Error(), "FPaty", "a key is never told")
	}
}
