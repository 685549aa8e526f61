package telemetry

import (
	"log/slog"
	"net/http"
	httppprof "net/http/pprof"
	"sync"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// Registry holds every metric of the process; the admin listener serves it at /metrics. The names are
// the ones deploy/grafana/postbox.json reads.
var Registry = prometheus.NewRegistry()

var (
	// HTTPRequests counts API requests by route (gin's route template, never the raw path), method and
	// status.
	HTTPRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "postbox_http_requests_total",
		Help: "HTTP requests served by the API, by route template, method and status.",
	}, []string{"route", "method", "status"})

	// HTTPDuration is the latency of API requests.
	HTTPDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "postbox_http_request_duration_seconds",
		Help:    "Latency of HTTP requests served by the API, by route template, method and status.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "method", "status"})

	// ValidationFailures counts forms that failed XSD validation, by data format ("<id>/<version>").
	ValidationFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "postbox_validation_failures_total",
		Help: "Forms that failed XSD validation, by data format (DataFormatId/DataFormatVersion).",
	}, []string{"data_format"})

	// PDFRender is the time to render one print PDF (prints found in the store are not rendered again).
	PDFRender = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "postbox_pdf_render_seconds",
		Help:    "Time to render a print PDF.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})

	// MessageReadBatch is the number of single-message reads each statement of the API's store.MessageReader
	// answered: its count is the statements, its sum the reads.
	MessageReadBatch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "postbox_db_message_read_batch_size",
		Help:    "Single-message reads answered by one statement (the API coalesces concurrent reads).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
	})

	// WebhookDeliveries counts webhook delivery attempts by subscription and outcome (delivered: the
	// endpoint acknowledged; failed: it refused, failed or timed out).
	WebhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "postbox_webhook_deliveries_total",
		Help: "Webhook delivery attempts, by subscription and outcome (delivered, failed).",
	}, []string{"subscription", "outcome"})

	// WebhookDeadLetters counts events put aside after their last attempt, by subscription.
	WebhookDeadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "postbox_webhook_dead_letters_total",
		Help: "Events dead-lettered after the last delivery attempt, by subscription.",
	}, []string{"subscription"})

	// WebhookLag is how long after its change an event reached its endpoint, per subscription: the last
	// delivered event's.
	WebhookLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "postbox_webhook_lag_seconds",
		Help: "Seconds from an event's change to its acknowledged delivery, of the subscription's last delivered event.",
	}, []string{"subscription"})

	// WebhookLagSeconds is the same lag over all deliveries, for quantiles and alerts.
	WebhookLagSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "postbox_webhook_delivery_lag_seconds",
		Help:    "Seconds from an event's change to its acknowledged delivery, over all subscriptions.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
	})
)

// The form-task transitions (postbox_formtask_transitions_total{from,to}) come from the workflow, through
// the Temporal SDK's metrics handler (TemporalMetrics), like the SDK's own temporal_* series.

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		HTTPRequests, HTTPDuration, ValidationFailures, PDFRender, MessageReadBatch, pools,
		WebhookDeliveries, WebhookDeadLetters, WebhookLag, WebhookLagSeconds,
	)
}

// MetricsHandler serves Registry in the Prometheus text format.
func MetricsHandler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}

// AdminHandler is what the admin listener serves: /metrics and /healthz (the process is up), and with
// pprof Go's profiles under /debug/pprof/.
func AdminHandler(pprof bool) http.Handler {
	mux := http.NewServeMux()
	if pprof {
		mux.HandleFunc("GET /debug/pprof/", httppprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", httppprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", httppprof.Trace)
	}
	mux.Handle("GET /metrics", MetricsHandler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	return mux
}

var (
	temporalOnce    sync.Once
	temporalHandler client.MetricsHandler
)

// sanitizeOptions make names and label names valid for Prometheus, as the SDK's
// PrometheusSanitizeOptions do, but keep label values as they are (Prometheus takes any text), so task
// queues and statuses read as everywhere else: task_queue="postbox-validation", to="Sendt og arkivert".
var sanitizeOptions = tally.SanitizeOptions{
	NameCharacters:       sdktally.PrometheusSanitizeOptions.NameCharacters,
	KeyCharacters:        sdktally.PrometheusSanitizeOptions.KeyCharacters,
	ValueCharacters:      tally.ValidCharacters{Ranges: []tally.SanitizeRange{{0, unicode.MaxRune}}},
	ReplacementCharacter: tally.DefaultReplacementCharacter,
}

// temporalReportInterval is how often the SDK's metrics are copied into Registry.
const temporalReportInterval = time.Second

// TemporalMetrics is the Temporal SDK's metrics handler for clients and workers: a tally scope reporting
// into Registry with Prometheus naming (counters end in _total, timers are histograms in seconds). The
// SDK's own metrics are named temporal_*; the workflow's postbox_formtask_transitions_total goes the same
// way. There is one per process, since its series can be registered once.
func TemporalMetrics(log *slog.Logger) client.MetricsHandler {
	temporalOnce.Do(func() {
		reporter := tallyprom.NewReporter(tallyprom.Options{
			Registerer:       Registry,
			DefaultTimerType: tallyprom.HistogramTimerType,
			DefaultHistogramBuckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60,
				120, 300, 600},
			OnRegisterError: func(err error) { log.Warn("temporal metric not registered", "err", err) },
		})
		scope, _ := tally.NewRootScope(tally.ScopeOptions{
			CachedReporter:  reporter,
			Separator:       tallyprom.DefaultSeparator,
			SanitizeOptions: &sanitizeOptions,
		}, temporalReportInterval)
		temporalHandler = sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope))
	})
	return temporalHandler
}

// pools is the collector of the database pools of the process (one, outside tests).
var pools = &poolCollector{pools: map[*pgxpool.Pool]struct{}{}}

// TrackPool adds pool's statistics to the postbox_db_pool_* series until the returned func is called.
func TrackPool(pool *pgxpool.Pool) (untrack func()) {
	pools.mu.Lock()
	pools.pools[pool] = struct{}{}
	pools.mu.Unlock()
	return func() {
		pools.mu.Lock()
		delete(pools.pools, pool)
		pools.mu.Unlock()
	}
}

type poolCollector struct {
	mu    sync.Mutex
	pools map[*pgxpool.Pool]struct{}
}

var (
	poolAcquired = prometheus.NewDesc("postbox_db_pool_acquired_conns",
		"Connections of the database pool in use.", nil, nil)
	poolIdle = prometheus.NewDesc("postbox_db_pool_idle_conns",
		"Idle connections of the database pool.", nil, nil)
	poolMax = prometheus.NewDesc("postbox_db_pool_max_conns",
		"Maximum size of the database pool (pool_max_conns).", nil, nil)
	poolTotal = prometheus.NewDesc("postbox_db_pool_total_conns",
		"Connections of the database pool, open or being opened.", nil, nil)
	poolWait = prometheus.NewDesc("postbox_db_pool_acquire_wait_seconds_total",
		"Time spent waiting for a connection because the pool had none free.", nil, nil)
	poolAcquires = prometheus.NewDesc("postbox_db_pool_acquires_total",
		"Connections acquired from the pool.", nil, nil)
	poolEmptyAcquires = prometheus.NewDesc("postbox_db_pool_empty_acquires_total",
		"Acquires that had to wait because the pool had no free connection.", nil, nil)
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolIdle, poolMax, poolTotal, poolWait, poolAcquires, poolEmptyAcquires} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	var acquired, idle, maxConns, total int32
	var wait time.Duration
	var acquires, empty int64
	for p := range c.pools {
		s := p.Stat()
		acquired += s.AcquiredConns()
		idle += s.IdleConns()
		maxConns += s.MaxConns()
		total += s.TotalConns()
		wait += s.EmptyAcquireWaitTime()
		acquires += s.AcquireCount()
		empty += s.EmptyAcquireCount()
	}
	c.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(poolAcquired, prometheus.GaugeValue, float64(acquired))
	ch <- prometheus.MustNewConstMetric(poolIdle, prometheus.GaugeValue, float64(idle))
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(maxConns))
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(total))
	ch <- prometheus.MustNewConstMetric(poolWait, prometheus.CounterValue, wait.Seconds())
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(acquires))
	ch <- prometheus.MustNewConstMetric(poolEmptyAcquires, prometheus.CounterValue, float64(empty))
}
