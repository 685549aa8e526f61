package config

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultsWorkLocally(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", c.HTTPAddr)
	assert.Equal(t, "127.0.0.1:7233", c.TemporalAddress)
	assert.Equal(t, int64(10<<20), c.MaxBodyBytes)
	assert.Equal(t, slog.LevelInfo, c.LogLevel)
	assert.Equal(t, 16, c.WorkerMaxActivities)
	assert.Equal(t, 16, c.WorkerMaxWorkflowTasks)
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
	} {
		_, err := load(env(map[string]string{name: value}))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}
