// Command postbox runs the Postbox service: the API, the Temporal worker, schema migrations and the
// dataset importer.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/worker"
)

const usage = `usage: postbox <command> [flags]

commands:
  api            serve the REST API
  migrate        apply pending database migrations
  seed --file F  import a dataset (see deploy/demo/README.md); idempotent
  worker         run the Temporal worker of form tasks (workflows and activities)
  dev            migrate, import --file (default deploy/demo/demo.json), serve the API and run the worker, for local use
  token          mint a local bearer token: --pid SSN or --org ORGNR, --scope "...", [--acr Level3] [--ttl 1h]

Settings come from POSTBOX_* environment variables; see README.md.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "postbox: configuration:", err)
		os.Exit(2)
	}
	log := newLogger(cfg)
	slog.SetDefault(log)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd, args := os.Args[1], os.Args[2:]
	switch cmd {
	case "api":
		err = runAPI(ctx, cfg, log)
	case "migrate":
		err = runMigrate(ctx, cfg)
	case "seed":
		err = runSeed(ctx, cfg, args)
	case "worker":
		err = runWorker(ctx, cfg, log)
	case "dev":
		err = runDev(ctx, cfg, log, args)
	case "token":
		err = runToken(cfg, args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "postbox: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		log.Error("postbox "+cmd+" failed", "err", err)
		os.Exit(1)
	}
}

func newLogger(cfg config.Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func runMigrate(ctx context.Context, cfg config.Config) error {
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	return store.Migrate(ctx, pool)
}

func runSeed(ctx context.Context, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	file := fs.String("file", "", "dataset to import (JSON, format in deploy/demo/README.md)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("seed: --file is required")
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := store.SeedFile(ctx, pool, *file); err != nil {
		return err
	}
	slog.Info("dataset imported", "file", *file)
	return nil
}

func runAPI(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	tc, err := dialTemporal(cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	return serveAPI(ctx, cfg, log, pool, tc)
}

func runDev(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	file := fs.String("file", "deploy/demo/demo.json", "dataset to import before serving (empty: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool); err != nil {
		return err
	}
	if *file != "" {
		if err := store.SeedFile(ctx, pool, *file); err != nil {
			return err
		}
		log.Info("dataset imported", "file", *file)
	}
	tc, err := dialTemporal(cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return serveWorker(gctx, cfg, log, pool, tc) })
	g.Go(func() error { return serveAPI(gctx, cfg, log, pool, tc) })
	return g.Wait()
}

func runWorker(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	pool, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	tc, err := dialTemporal(cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	return serveWorker(ctx, cfg, log, pool, tc)
}

func serveWorker(ctx context.Context, cfg config.Config, log *slog.Logger, pool *pgxpool.Pool, tc client.Client) error {
	return worker.Serve(ctx, tc, pool, cfg.TemporalNamespace, worker.Options{
		MaxConcurrentActivities:    cfg.WorkerMaxActivities,
		MaxConcurrentWorkflowTasks: cfg.WorkerMaxWorkflowTasks,
		StopTimeout:                cfg.ShutdownTimeout,
	}, log)
}

// dialTemporal returns a client that connects on first use, so the API starts (and says it is not
// ready) while Temporal is still coming up.
func dialTemporal(cfg config.Config, log *slog.Logger) (client.Client, error) {
	c, err := client.NewLazyClient(client.Options{
		HostPort:  cfg.TemporalAddress,
		Namespace: cfg.TemporalNamespace,
		Logger:    log.With("component", "temporal"),
	})
	if err != nil {
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	return c, nil
}

func serveAPI(ctx context.Context, cfg config.Config, log *slog.Logger, pool *pgxpool.Pool, tc client.Client) error {
	var tokens *identity.TokenVerifier
	if cfg.TokenIssuer != "" {
		var err error
		if tokens, err = identity.NewTokenVerifier(ctx, cfg.TokenIssuer, cfg.TokenAudience, cfg.TokenJWKS); err != nil {
			return fmt.Errorf("POSTBOX_TOKEN_JWKS: %w", err)
		}
	}
	rights := identity.NewRights(store.New(pool), log)
	go rights.Listen(ctx, pool)
	srv, err := api.New(api.Options{
		Pool:         pool,
		Logger:       log,
		TrustProxy:   cfg.TrustProxy,
		MaxBodyBytes: cfg.MaxBodyBytes,
		Tokens:       tokens,
		Rights:       rights,
		Temporal:     tc,
		TemporalHealth: func(ctx context.Context) error {
			_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
	})
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return httpServe(gctx, cfg, log, &http.Server{Addr: cfg.HTTPAddr, Handler: srv}) })
	if cfg.TLSAddr != "" {
		tlsCfg, err := enterpriseTLS(cfg)
		if err != nil {
			return err
		}
		g.Go(func() error {
			return httpServe(gctx, cfg, log, &http.Server{Addr: cfg.TLSAddr, Handler: srv, TLSConfig: tlsCfg})
		})
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
	caPEM, err := os.ReadFile(cfg.TLSClientCA)
	if err != nil {
		return nil, fmt.Errorf("POSTBOX_TLS_CLIENT_CA: %w", err)
	}
	cas := x509.NewCertPool()
	if !cas.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("POSTBOX_TLS_CLIENT_CA: %s holds no certificate", cfg.TLSClientCA)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    cas,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// httpServe serves until ctx ends, then drains in-flight requests for the shutdown timeout.
func httpServe(ctx context.Context, cfg config.Config, log *slog.Logger, srv *http.Server) error {
	srv.ReadHeaderTimeout = 10 * time.Second
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

func runToken(cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	pid := fs.String("pid", "", "national identity number of a person")
	org := fs.String("org", "", "organization number, for an organization token")
	scope := fs.String("scope", "platform:enduser", "space-separated scopes")
	acr := fs.String("acr", "Level3", "security level of a person token")
	ttl := fs.Duration("ttl", time.Hour, "lifetime")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, err := identity.LoadMinter(cfg.TokenSigningKey, "demo-1", cfg.TokenIssuer, cfg.TokenAudience)
	if err != nil {
		return fmt.Errorf("POSTBOX_TOKEN_SIGNING_KEY: %w", err)
	}
	token, err := m.Mint(identity.TokenRequest{PID: *pid, Org: *org, Scope: *scope, ACR: *acr, TTL: *ttl})
	if err != nil {
		return err
	}
	fmt.Println(token)
	return nil
}
