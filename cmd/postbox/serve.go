// The API's serving: the admin listener, the API over the services, TLS with enterprise certificates, and
// HTTP servers that stop gracefully.

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"

	"golang.org/x/sync/errgroup"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
)

// serveAdmin serves /metrics and /healthz on POSTBOX_ADMIN_ADDR, for Prometheus and probes (and the
// profiles with POSTBOX_ADMIN_PPROF).
func serveAdmin(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	return httpServe(ctx, cfg, log, newHTTPServer(cfg, cfg.AdminAddr, telemetry.AdminHandler(cfg.AdminPprof)))
}

// newAPI builds the API over the services, and what keeps its rights cache in step with the database
// (identity.Rights.Listen), to run once the database answers.
func newAPI(ctx context.Context, svc *services) (*api.Server, func(context.Context), error) {
	cfg, log, pool, tc := svc.cfg, svc.log, svc.pool, svc.temporal
	issuers := make([]identity.TrustedIssuer, len(cfg.TokenIssuers))
	for i, is := range cfg.TokenIssuers {
		issuers[i] = identity.TrustedIssuer{Issuer: is.Issuer, JWKS: is.JWKS}
	}
	tokens, err := identity.NewTokenVerifier(ctx, cfg.TokenAudience, issuers...)
	if err != nil {
		return nil, nil, fmt.Errorf("POSTBOX_TOKEN_JWKS: %w", err)
	}
	webhooks, err := webhookOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	tasks := formtask.New(tc, store.New(pool), formtask.Options{ConnectTimeout: cfg.TemporalConnectTimeout, PublicURL: cfg.PublicURL,
		Files: svc.files})
	notices := notification.New(pool, tc, notificationChannels(cfg))
	opts := api.Options{
		Pool:                  pool,
		Files:                 svc.files,
		PresignFrom:           cfg.FilesPresignFrom,
		PresignExpiry:         cfg.FilesPresignExpiry,
		Logger:                log,
		TrustProxy:            cfg.TrustProxy,
		MaxBodyBytes:          cfg.MaxBodyBytes,
		Limits:                clientLimits(cfg),
		RateLimit:             api.RateLimit{Limit: cfg.RateLimit, Window: cfg.RateWindow},
		Tokens:                tokens,
		FormTasks:             tasks,
		Correspondence:        correspondence.New(pool, svc.files, tc, events.NewBuilder(cfg.PublicURL), tasks, notices),
		Notifications:         notices,
		TracerProvider:        svc.tracing.Provider,
		Propagator:            svc.tracing.Propagator,
		TrustClientCertHeader: cfg.TrustClientCertHeader,
		ListTimeout:           cfg.ListTimeout,
		Webhooks:              webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate},
		MaxSubscriptions:      cfg.WebhookMaxSubscriptions,
		WebhookSealer:         webhooks.Sealer,
		WebhookSecretOverlap:  cfg.WebhookSecretOverlap,
		PublicURL:             cfg.PublicURL,
	}
	if cfg.TrustClientCertHeader {
		cas, err := clientCAs(cfg)
		if err != nil {
			return nil, nil, err
		}
		opts.ClientCAs = cas
	}
	rights := identity.NewRights(store.New(pool), log).WithCacheTTL(cfg.RightsCacheTTL)
	opts.Rights = rights
	srv, err := api.New(opts)
	return srv, func(ctx context.Context) { rights.Listen(ctx, svc.listen) }, err
}

// serveAPI listens at once and meanwhile waits for the database: until it answers, /healthz is 200,
// /readyz a 503 naming it and every other request that needs it a 503 with Retry-After. Temporal is not
// waited for: the API serves without it, form-task changes answer 503 while it is away.
func serveAPI(ctx context.Context, svc *services) error {
	cfg, log := svc.cfg, svc.log
	if cfg.APIGCPercent > 0 {
		debug.SetGCPercent(cfg.APIGCPercent)
	}
	srv, listenRights, err := newAPI(ctx, svc)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return httpServe(gctx, cfg, log, newHTTPServer(cfg, cfg.HTTPAddr, srv)) })
	g.Go(func() error {
		if err := svc.startup.waitForDatabase(gctx, svc.pool); err != nil {
			return err
		}
		listenRights(gctx)
		return nil
	})
	if cfg.TLSAddr != "" {
		tlsCfg, err := enterpriseTLS(cfg)
		if err != nil {
			return err
		}
		tlsSrv := newHTTPServer(cfg, cfg.TLSAddr, srv)
		tlsSrv.TLSConfig = tlsCfg
		g.Go(func() error { return httpServe(gctx, cfg, log, tlsSrv) })
	}
	return g.Wait()
}

// enterpriseTLS serves the fixture's (or the configured) server certificate and asks for, but does not
// require, a client certificate verified against the client CA: calls that need an enterprise
// certificate refuse requests without one.
func enterpriseTLS(cfg config.Config) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("POSTBOX_TLS_CERT/POSTBOX_TLS_KEY: %w", err)
	}
	cas, err := clientCAs(cfg)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    cas,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// clientCAs is the bundle enterprise certificates are verified against, on the TLS listener and in a
// trusted proxy's Client-Cert header.
func clientCAs(cfg config.Config) (*x509.CertPool, error) {
	caPEM, err := os.ReadFile(cfg.TLSClientCA)
	if err != nil {
		return nil, fmt.Errorf("POSTBOX_TLS_CLIENT_CA: %w", err)
	}
	cas := x509.NewCertPool()
	if !cas.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("POSTBOX_TLS_CLIENT_CA: %s holds no certificate", cfg.TLSClientCA)
	}
	return cas, nil
}

// newHTTPServer is the http.Server of every listener: the header and idle timeouts and the header limit
// of the configuration. It sets no ReadTimeout or WriteTimeout: those bound a whole request, which would
// cut off a large attachment streamed at a fair pace; bodies and responses are held to a pace instead
// (api.ClientLimits, which the API applies).
func newHTTPServer(cfg config.Config, addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    clientLimits(cfg).ServerMaxHeaderBytes(),
	}
}

// clientLimits are the API's limits on slow clients and large headers.
func clientLimits(cfg config.Config) api.ClientLimits {
	return api.ClientLimits{ProgressWindow: cfg.ProgressWindow, ProgressMinBytes: cfg.ProgressMinBytes, MaxHeaderBytes: cfg.MaxHeaderBytes}
}

// httpServe serves until ctx ends, then drains in-flight requests for the shutdown timeout.
func httpServe(ctx context.Context, cfg config.Config, log *slog.Logger, srv *http.Server) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		if srv.TLSConfig != nil {
			log.Info("serving HTTPS with enterprise certificates", "addr", srv.Addr)
			err = srv.ListenAndServeTLS("", "")
		} else {
			log.Info("serving HTTP", "addr", srv.Addr)
			err = srv.ListenAndServe()
		}
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	})
	g.Go(func() error {
		<-gctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	})
	return g.Wait()
}
