package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// stack is `postbox dev` as the commands wire it (openServices, serveWorker, newAPI) on a real Temporal dev
// server and a database of its own, with spans recorded in memory.
type stack struct {
	api   http.Handler
	spans *tracetest.InMemoryExporter
}

var (
	stackOnce sync.Once
	stackErr  error
	theStack  stack
)

func startStack(t *testing.T) stack {
	t.Helper()
	stackOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		var cleanup []func() // in reverse
		stopStack = func() {
			cancel()
			for i := len(cleanup) - 1; i >= 0; i-- {
				cleanup[i]()
			}
		}
		dev, err := temporaltest.StartDevServer(ctx, "", "")
		if err != nil {
			stackErr = err
			return
		}
		cleanup = append(cleanup, func() { _ = dev.Stop() })
		url, name, drop, err := storetest.Create(ctx)
		if err != nil {
			stackErr = err
			return
		}
		cleanup = append(cleanup, drop)
		demo := filepath.Dir(storetest.DemoDataset())
		cfg, err := config.Load()
		if err != nil {
			stackErr = err
			return
		}
		cfg.DatabaseURL, cfg.TemporalAddress, cfg.TemporalNamespace = url, dev.FrontendHostPort(), "default"
		objects, err := storetest.ObjectServer()
		if err != nil {
			stackErr = err
			return
		}
		cfg.Files = objects.Config("postbox-test")
		cfg.Files.Prefix = name + "/"
		cfg.TokenAudience = "mailbox-api"
		cfg.TokenIssuers = []config.TokenIssuer{{Issuer: "https://test-issuer.demo.local", JWKS: filepath.Join(demo, "certs", "jwks.json")}}
		cfg.WorkerQueues = config.QueueGroups
		cfg.ShutdownTimeout = 5 * time.Second
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

		spans := tracetest.NewInMemoryExporter()
		tracing := telemetry.NewTracingWith(sdktrace.NewSimpleSpanProcessor(spans), "postbox-test")
		svc, err := openServices(ctx, cfg, log, tracing)
		if err != nil {
			stackErr = err
			return
		}
		cleanup = append(cleanup, svc.Close)
		// serveWorker registers the search attributes too, but in its own time: a submission before that
		// is refused ("no mapping defined for search attribute").
		if stackErr = worker.RegisterSearchAttributes(ctx, dev.Client(), "default"); stackErr != nil {
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := serveWorker(ctx, svc); err != nil {
				log.Error("worker", "err", err)
			}
		}()
		cleanup = append(cleanup, func() { cancel(); <-done })
		srv, listenRights, err := newAPI(ctx, svc)
		if err != nil {
			stackErr = err
			return
		}
		go listenRights(ctx)
		theStack = stack{api: srv, spans: spans}
	})
	require.NoError(t, stackErr)
	return theStack
}

var stopStack = func() {}

func TestMain(m *testing.M) {
	code := m.Run()
	stopStack()
	os.Exit(code)
}

const (
	demoKey = "9D4E2680-50AB-47FB-A1E6-6AB8106A0FB6"
	ssnP1   = "12857812326"
	orgO1   = "310123455"
)

func token(t *testing.T) string {
	t.Helper()
	demo := filepath.Dir(storetest.DemoDataset())
	m, err := identity.LoadMinter(filepath.Join(demo, "certs", "issuer-key.pem"), "demo-1", "https://test-issuer.demo.local", "mailbox-api")
	require.NoError(t, err)
	tok, err := m.Mint(identity.TokenRequest{PID: ssnP1, Scope: "platform:enduser"})
	require.NoError(t, err)
	return tok
}

func formData(t *testing.T, id string) string {
	t.Helper()
	raw, err := os.ReadFile(storetest.DemoDataset())
	require.NoError(t, err)
	var ds struct {
		Messages []struct {
			MessageId string
			Forms     []struct{ FormData string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &ds))
	for _, m := range ds.Messages {
		if m.MessageId == id {
			return m.Forms[0].FormData
		}
	}
	t.Fatalf("no message %s", id)
	return ""
}

func call(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "http://postbox.test"+path, strings.NewReader(body))
	req.Header.Set("ApiKey", demoKey)
	req.Header.Set("Authorization", "Bearer "+token(t))
	req.Header.Set("Content-Type", "application/hal+json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func submitAndSign(t *testing.T, h http.Handler, id string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"Type": "FormTask", "ServiceCode": "4711", "ServiceEdition": 2,
		"_embedded": map[string]any{"forms": []map[string]any{{"Type": "MainForm", "DataFormatId": "3106",
			"DataFormatVersion": "21845", "FormData": formData(t, id)}}}})
	require.NoError(t, err)
	r := call(t, h, http.MethodPut, "/api/"+orgO1+"/messages/"+id, string(body))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Contains(t, r.Body.String(), "Sendt og arkivert")
}

func scrape(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	telemetry.AdminHandler(false).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	b, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return string(b)
}

// After a real submission (PUT → Update → validation, archive with PDF → read model) and a validation that
// fails, /metrics on the admin handler has every series the dashboard reads.
func TestMetricsAfterASubmission(t *testing.T) {
	s := startStack(t)
	submitAndSign(t, s.api, "a3101102")
	r := call(t, s.api, http.MethodGet, "/api/"+orgO1+"/messages/a3101221/validate", "")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Contains(t, r.Body.String(), `"Success":false`)

	want := []string{
		`postbox_http_requests_total{method="PUT",route="/api/:who/messages/:messageId",status="200"} `,
		`postbox_http_request_duration_seconds_bucket{method="PUT",route="/api/:who/messages/:messageId",status="200",le="+Inf"} `,
		`postbox_formtask_transitions_total{activity_type="none",client_name="temporal_go",from="Utfylling",namespace="default",task_queue="postbox-formtasks",to="Sendt og arkivert",`,
		`postbox_validation_failures_total{data_format="3106/21845"} `,
		`postbox_pdf_render_seconds_bucket{le="+Inf"} `,
		`postbox_db_pool_acquired_conns `,
		`postbox_db_pool_idle_conns `,
		`postbox_db_pool_max_conns `,
		`postbox_db_pool_acquire_wait_seconds_total `,
		// The SDK's own series, by task queue: the submission's checks and archive ran locally in the
		// workflow task (one local activity per Update since "lean-history", with the archive since its
		// version 2), the validation's checks too.
		`temporal_local_activity_execution_latency_seconds_bucket{activity_type="CheckAndArchive",`,
		`temporal_local_activity_execution_latency_seconds_bucket{activity_type="CheckAndProject",`,
		`task_queue="postbox-formtasks"`,
		`temporal_worker_task_slots_available{`,
		`temporal_workflow_completed_total{`,
	}
	var (
		out     string
		missing []string
	)
	assert.Eventually(t, func() bool { // the SDK's metrics are copied into the registry every second
		out, missing = scrape(t), nil
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = append(missing, w)
			}
		}
		return len(missing) == 0
	}, 30*time.Second, 200*time.Millisecond)
	if len(missing) > 0 {
		_ = os.WriteFile(filepath.Join(os.TempDir(), "postbox-metrics.txt"), []byte(out), 0o644)
	}
	require.Empty(t, missing, "missing series")
	assert.NotContains(t, out, "a3101102", "routes are templates, never raw paths")
	assert.NotContains(t, out, ssnP1)

	rec := httptest.NewRecorder()
	telemetry.AdminHandler(false).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
}

// The trace of an HTTP request reaches into the activities it causes and their database queries: the
// Temporal interceptor carries the span context in headers through the Update and the workflow to the
// activity, and the activity's own queries (made with its context) are children of its span.
func TestTraceFlowsFromHTTPIntoActivities(t *testing.T) {
	s := startStack(t)
	submitAndSign(t, s.api, "a3101263")

	var httpSpan sdktrace.ReadOnlySpan
	spans := func() []tracetest.SpanStub { return s.spans.GetSpans() }
	for _, sp := range spans() {
		if sp.Name == "PUT /api/:who/messages/:messageId" {
			httpSpan = sp.Snapshot()
		}
	}
	require.NotNil(t, httpSpan, "the API made a server span")
	traceID := httpSpan.SpanContext().TraceID()
	for _, a := range httpSpan.Attributes() {
		assert.NotContains(t, a.Value.String(), "a3101263", "no raw path in the span")
	}

	// Activities report after the Update answered; wait for their spans.
	var activitySpans map[string]trace.SpanContext
	require.Eventually(t, func() bool {
		activitySpans = map[string]trace.SpanContext{}
		for _, sp := range spans() {
			if sp.SpanContext.TraceID() == traceID && strings.HasPrefix(sp.Name, "RunActivity:") {
				activitySpans[sp.Name] = sp.SpanContext
			}
		}
		_, archived := activitySpans["RunActivity:CheckAndArchive"]
		return archived
	}, 30*time.Second, 100*time.Millisecond, "activity spans in the request's trace")

	// A query the activity made with its context: a child of the activity's span, in the same trace.
	archive := activitySpans["RunActivity:CheckAndArchive"]
	var queries int
	for _, sp := range spans() {
		if sp.Parent.SpanID() == archive.SpanID() && sp.SpanContext.TraceID() == traceID &&
			sp.SpanKind == trace.SpanKindClient {
			queries++
		}
	}
	assert.Positive(t, queries, "database spans inside the activity")
}
