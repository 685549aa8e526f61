package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/postbox/postbox/internal/telemetry"
)

func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

func TestRedactDigits(t *testing.T) {
	for in, want := range map[string]string{
		"12857812326":                         "***********",
		"you may not act for \"12857812326\"": "you may not act for \"***********\"",
		"/api/12857812326/messages?x=1":       "/api/***********/messages?x=1",
		"ssn12857812326x":                     "ssn***********x",
		"a 1285781232 b":                      "a 1285781232 b", // 10 digits: an organization number is 9
		"128578123261":                        "128578123261",   // 12 digits
		"r50001 310123455 a3101102":           "r50001 310123455 a3101102",
		"12857812326,23056912345":             "***********,***********",
		"":                                    "",
	} {
		assert.Equal(t, want, telemetry.RedactDigits(in), in)
	}
}

func TestLoggerRedactsSecretsAndIdentityNumbers(t *testing.T) {
	var buf bytes.Buffer
	log := telemetry.NewLogger(&buf, "json", slog.LevelDebug).With("UserPassword", "Demo-1-Fjellheim!")
	log.Info("login for 12857812326 failed",
		"password", "hunter2", "Authorization", "Bearer eyJhbGciOi", "session_cookie", "abc",
		"api_key", "9D4E2680", "err", errors.New("party 12857812326 not found"), "who", "12857812326",
		"pid", int64(12857812326), "org", "310123455", "status", 403,
		slog.Group("req", "token", "t0k3n", "path", "/api/12857812326/messages"))
	l := lines(t, &buf)[0]
	assert.Equal(t, "login for *********** failed", l["msg"])
	for _, k := range []string{"UserPassword", "password", "Authorization", "session_cookie", "api_key", "pid"} {
		assert.Equal(t, telemetry.Redacted, l[k], k)
	}
	assert.Equal(t, "party *********** not found", l["err"])
	assert.Equal(t, "***********", l["who"])
	assert.Equal(t, "310123455", l["org"], "organization numbers stay")
	assert.EqualValues(t, 403, l["status"])
	assert.Equal(t, map[string]any{"token": telemetry.Redacted, "path": "/api/***********/messages"}, l["req"])
	out := buf.String()
	for _, secret := range []string{"Demo-1-Fjellheim!", "hunter2", "eyJhbGciOi", "9D4E2680", "12857812326", "t0k3n"} {
		assert.NotContains(t, out, secret)
	}
}

func TestLinesCarryTheRequestAndTraceIDOfTheirContext(t *testing.T) {
	var buf bytes.Buffer
	log := telemetry.NewLogger(&buf, "json", slog.LevelInfo)
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exp))
	ctx, span := tp.Tracer("t").Start(telemetry.WithRequestID(context.Background(), "req-42"), "s")
	log.InfoContext(ctx, "in a request")
	log.InfoContext(ctx, "explicit", "request_id", "req-42")
	log.Info("outside")
	span.End()

	l := lines(t, &buf)
	require.Len(t, l, 3)
	assert.Equal(t, "req-42", l[0]["request_id"])
	assert.Equal(t, span.SpanContext().TraceID().String(), l[0]["trace_id"])
	assert.Equal(t, 1, strings.Count(strings.Split(buf.String(), "\n")[1], `"request_id"`), "not repeated")
	assert.NotContains(t, l[2], "request_id")
	assert.NotContains(t, l[2], "trace_id")
}

// A trace or span id whose hex happens to hold a run of 11 digits is logged as it is; the same run in
// another attribute, or in an id of the wrong shape, is still masked.
func TestTraceIdentifiersAreNotMistakenForIdentityNumbers(t *testing.T) {
	var buf bytes.Buffer
	log := telemetry.NewLogger(&buf, "json", slog.LevelInfo)
	log.Info("ids", "trace_id", "ab12345678901cdef0123456789abcde", "span_id", "a12345678901bcde",
		"other", "ab12345678901cdef0123456789abcde", "trace_id_like", "x12345678901")
	l := lines(t, &buf)
	require.Len(t, l, 1)
	assert.Equal(t, "ab12345678901cdef0123456789abcde", l[0]["trace_id"])
	assert.Equal(t, "a12345678901bcde", l[0]["span_id"])
	assert.Equal(t, "ab***********cdef0123456789abcde", l[0]["other"])
	assert.Equal(t, "x***********", l[0]["trace_id_like"])
}

func TestTextFormat(t *testing.T) {
	var buf bytes.Buffer
	telemetry.NewLogger(&buf, "text", slog.LevelInfo).Info("hello", "password", "x")
	assert.Contains(t, buf.String(), "msg=hello password="+telemetry.Redacted)
}
