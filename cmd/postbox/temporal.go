package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/internal/telemetry"
)

// dialTemporal returns a client that connects on first use, so the API starts (and says it is not
// ready) while Temporal is still coming up.
func dialTemporal(cfg config.Config, log *slog.Logger, tracing *telemetry.Tracing) (client.Client, error) {
	tracer, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            tracing.Provider.Tracer("go.temporal.io/sdk"),
		TextMapPropagator: tracing.Propagator,
	})
	if err != nil {
		return nil, fmt.Errorf("temporal tracing: %w", err)
	}
	opts, err := temporalOptions(cfg)
	if err != nil {
		return nil, err
	}
	opts.Logger = tlog.NewStructuredLogger(log.With("component", "temporal"))
	opts.MetricsHandler = telemetry.TemporalMetrics(log)
	// A client interceptor that is also a worker interceptor is used by the workers of the client.
	opts.Interceptors = []interceptor.ClientInterceptor{tracer}
	c, err := client.NewLazyClient(opts)
	if err != nil {
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	return c, nil
}

// temporalOptions are the address, namespace and security of the Temporal frontend: plain text to a local
// dev server, or TLS with the configured CA, a client certificate (mTLS) and an API key for a secured
// cluster or Temporal Cloud.
func temporalOptions(cfg config.Config) (client.Options, error) {
	opts := client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace}
	t := cfg.TemporalTLS
	if !t.Enabled {
		return opts, nil
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return opts, fmt.Errorf("POSTBOX_TEMPORAL_TLS_CA: %w", err)
		}
		tlsCfg.RootCAs = x509.NewCertPool()
		if !tlsCfg.RootCAs.AppendCertsFromPEM(pem) {
			return opts, errors.New("POSTBOX_TEMPORAL_TLS_CA: no PEM certificate in the file")
		}
	}
	if t.Cert != "" {
		// Checked once now, so a wrong path fails the start, then read at each handshake: a certificate
		// rotated on disk (cert-manager, a mounted Secret) is used by the next connection.
		if _, err := tls.LoadX509KeyPair(t.Cert, t.Key); err != nil {
			return opts, fmt.Errorf("POSTBOX_TEMPORAL_TLS_CERT/POSTBOX_TEMPORAL_TLS_KEY: %w", err)
		}
		tlsCfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
			if err != nil {
				return nil, fmt.Errorf("POSTBOX_TEMPORAL_TLS_CERT/POSTBOX_TEMPORAL_TLS_KEY: %w", err)
			}
			return &cert, nil
		}
	}
	opts.ConnectionOptions.TLS = tlsCfg
	if cfg.TemporalAPIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(cfg.TemporalAPIKey)
	}
	return opts, nil
}
