package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Tracing is where spans go: the API's HTTP spans, the Temporal SDK's spans (client, workflow,
// activities; context crosses in Temporal headers) and the database's. Without an endpoint the provider
// is a no-op, so tracing costs next to nothing and exports nothing.
type Tracing struct {
	Provider   trace.TracerProvider
	Propagator propagation.TextMapPropagator
	shutdown   func(context.Context) error
}

// Enabled reports whether spans are recorded and exported.
func (t *Tracing) Enabled() bool { return t.shutdown != nil }

// Shutdown flushes and stops the exporter (a no-op when tracing is off).
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// Propagator is W3C trace context and baggage, what OpenTelemetry collectors and other services speak.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// NoTracing is the default: a no-op provider.
func NoTracing() *Tracing {
	return &Tracing{Provider: noop.NewTracerProvider(), Propagator: Propagator()}
}

// NewTracing exports spans by OTLP/gRPC to endpoint (host:port in plain text, or an http:// or https://
// URL), batched; an empty endpoint is NoTracing. service names the process in the traces (e.g.
// "postbox-api", "postbox-worker").
func NewTracing(ctx context.Context, endpoint, service string) (*Tracing, error) {
	if endpoint == "" {
		return NoTracing(), nil
	}
	var opts []otlptracegrpc.Option
	if strings.Contains(endpoint, "://") {
		if _, err := url.Parse(endpoint); err != nil {
			return nil, fmt.Errorf("POSTBOX_OTLP_ENDPOINT: %w", err)
		}
		opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
	} else {
		opts = append(opts, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("POSTBOX_OTLP_ENDPOINT: %w", err)
	}
	return NewTracingWith(sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBatchTimeout(5*time.Second)), service), nil
}

// NewTracingWith records spans into processor (tests: a SimpleSpanProcessor over an in-memory exporter).
func NewTracingWith(processor sdktrace.SpanProcessor, service string) *Tracing {
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(processor),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))),
	)
	return &Tracing{Provider: tp, Propagator: Propagator(), shutdown: tp.Shutdown}
}
