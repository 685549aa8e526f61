// Command postbox runs the Postbox service: the API, the Temporal worker, schema migrations and the
// dataset importer.
package main

import (
	"context"
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
	"github.com/postbox/postbox/store"
)

const usage = `usage: postbox <command> [flags]

commands:
  api            serve the REST API
  migrate        apply pending database migrations
  seed --file F  import a dataset (see deploy/demo/README.md); idempotent
  dev            migrate, import --file (default deploy/demo/demo.json) and serve the API, for local use

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
	case "dev":
		err = runDev(ctx, cfg, log, args)
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
	return serveAPI(ctx, cfg, log, pool, tc)
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
	srv := api.New(api.Options{
		Pool:         pool,
		Logger:       log,
		TrustProxy:   cfg.TrustProxy,
		MaxBodyBytes: cfg.MaxBodyBytes,
		TemporalHealth: func(ctx context.Context) error {
			_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
	})
	return httpServe(ctx, cfg, log, cfg.HTTPAddr, srv)
}

// httpServe serves h on addr until ctx ends, then drains in-flight requests for the shutdown timeout.
func httpServe(ctx context.Context, cfg config.Config, log *slog.Logger, addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		log.Info("serving HTTP", "addr", addr)
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	})
	return g.Wait()
}
