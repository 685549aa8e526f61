package config

import (
	"log/slog"
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
	assert.Equal(t, []string{"formtask", "validation", "archive"}, c.WorkerQueues)
	assert.Equal(t, "127.0.0.1:9090", c.AdminAddr)
	assert.Empty(t, c.OTLPEndpoint, "tracing is off by default")
	assert.False(t, c.TrustClientCertHeader)
}

func TestOperationsSettings(t *testing.T) {
	c, err := load(env(map[string]string{
		"POSTBOX_ADMIN_ADDR":               "0.0.0.0:9091",
		"POSTBOX_WORKER_QUEUES":            " Validation, archive,validation ",
		"POSTBOX_OTLP_ENDPOINT":            "otel-collector:4317",
		"POSTBOX_TRUST_CLIENT_CERT_HEADER": "true",
	}))
	require.NoError(t, err)
	assert.Equal(t, "0.0.0.0:9091", c.AdminAddr)
	assert.Equal(t, []string{"validation", "archive"}, c.WorkerQueues)
	assert.Equal(t, "otel-collector:4317", c.OTLPEndpoint)
	assert.True(t, c.TrustClientCertHeader)

	c, err = load(env(map[string]string{"POSTBOX_ADMIN_ADDR": "", "POSTBOX_WORKER_QUEUES": "",
		"POSTBOX_OTLP_ENDPOINT": "https://collector.example.org:4317"}))
	require.NoError(t, err)
	assert.Empty(t, c.AdminAddr, "set but empty turns the admin listener off")
	assert.Equal(t, []string{"formtask", "validation", "archive"}, c.WorkerQueues)
	assert.Equal(t, "https://collector.example.org:4317", c.OTLPEndpoint)
}

func TestValuesAreRead(t *testing.T) {
	c, err := load(env(map[string]string{"POSTBOX_TRUST_PROXY": "true", "POSTBOX_SHUTDOWN_TIMEOUT": "3s", "POSTBOX_LOG_LEVEL": "debug"}))
	require.NoError(t, err)
	assert.True(t, c.TrustProxy)
	assert.Equal(t, 3*time.Second, c.ShutdownTimeout)
	assert.Equal(t, slog.LevelDebug, c.LogLevel)
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
	} {
		_, err := load(env(map[string]string{name: value}))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
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
