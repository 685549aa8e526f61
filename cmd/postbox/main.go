// Command postbox runs the Postbox service: the API, the Temporal worker, schema migrations and the
// dataset importer.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/importer"
	"github.com/postbox/postbox/store/scaledata"
)

const usage = `usage: postbox <command> [flags]

commands:
  api            serve the REST API
  migrate        apply pending database migrations
  seed --file F  migrate, then import a dataset (see deploy/demo/README.md); idempotent
  worker         run the Temporal workers of the queue groups in POSTBOX_WORKER_QUEUES (form-task workflows,
                 validation and print, archiving, webhook deliveries)
  dev            migrate, import --file (default deploy/demo/demo.json), serve the API and run the workers of
                 every queue group, for local use
  token          mint a local bearer token: --pid SSN or --org ORGNR, --scope "...", [--acr Level3] [--ttl 1h]
  gen            migrate and add a large synthetic mailbox (COPY): [--messages 1000000] [--parties 1000]
                 [--services 200] [--owners 20] [--seed 1] [--submissions 0]; one person (scaledata.PersonSSN) represents
                 every generated organization with rights on about half of the services
  webhook-echo   a tiny local webhook receiver: answers the handshake, checks signatures with the secret in
                 --secret-file (read on every delivery; none: unchecked), prints each delivery;
                 [--addr 127.0.0.1:9999] [--secret-file /tmp/postbox-webhook-secret]
  submissions pull --dir DIR
                 drain a service owner's queue of submissions into DIR (one folder each, digests checked,
                 confirmed once synced to disk; resumes where it stopped): --api-key KEY --token-file F
                 [--url URL] [--service-code C]
  reseal         seal every stored webhook secret with the newest key of POSTBOX_WEBHOOK_SEAL_KEYS (after
                 putting a new key first, before dropping the old one)

Settings come from POSTBOX_* environment variables; see docs/operations.md.
`

func main() { os.Exit(command(os.Args[1:])) }

// command runs the command of args and returns the process's exit code.
func command(args []string) int {
	if len(args) < 1 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "postbox: configuration:", err)
		return 2
	}
	clock.SetZone(cfg.TimeZone)
	log := telemetry.NewLogger(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	slog.SetDefault(log)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd, args := args[0], args[1:]
	switch cmd {
	case "api":
		err = runAPI(ctx, cfg, log)
	case "migrate":
		err = runMigrate(ctx, cfg, log)
	case "seed":
		err = runSeed(ctx, cfg, log, args)
	case "worker":
		err = runWorker(ctx, cfg, log)
	case "dev":
		err = runDev(ctx, cfg, log, args)
	case "token":
		err = runToken(cfg, args)
	case "gen":
		err = runGen(ctx, cfg, log, args)
	case "webhook-echo":
		err = runWebhookEcho(ctx, cfg, log, args)
	case "reseal":
		err = runReseal(ctx, cfg, log)
	case "submissions":
		err = runSubmissions(ctx, cfg, args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "postbox: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case errors.Is(err, flag.ErrHelp): // the command printed its usage
		return 0
	case err != nil:
		log.Error("postbox "+cmd+" failed", "err", err)
		return 1
	}
	return 0
}

func runMigrate(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	pool, _, err := openMigrated(ctx, cfg, log)
	if err == nil {
		pool.Close()
	}
	return err
}

// runReseal seals every stored webhook secret with the newest key of POSTBOX_WEBHOOK_SEAL_KEYS: after a
// new key is put first, and before the old one is dropped.
func runReseal(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	webhooks, err := webhookOptions(cfg)
	if err != nil {
		return err
	}
	pool, err := newStartup(cfg, log).openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := webhook.Reseal(ctx, webhook.NewStore(store.New(pool)), webhooks.Sealer)
	if err == nil {
		log.Info("webhook secrets sealed with the newest key", "count", n, "key", cfg.WebhookSealKeys[0].ID)
	}
	return err
}

func runSeed(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	file := fs.String("file", "", "dataset to import (JSON, format in deploy/demo/README.md)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("seed: --file is required")
	}
	pool, objects, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := importer.FromFile(ctx, pool, objects, *file); err != nil {
		return err
	}
	slog.Info("dataset imported", "file", *file)
	return nil
}

// openMigrated opens the database and the object store and brings the schema up to date first (migrate,
// dev), moving file bytes that older versions kept in the database into the store on the way, so that
// `createdb; postbox seed` (or gen) works on a fresh database.
func openMigrated(ctx context.Context, cfg config.Config, log *slog.Logger) (*pgxpool.Pool, *files.Service, error) {
	start := newStartup(cfg, log)
	pool, err := start.openDatabase(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	fs, err := openFiles(ctx, cfg, log, pool, start)
	if err == nil {
		err = store.Migrate(ctx, pool, store.Step{Before: files.MoveOutBefore, Run: func(ctx context.Context, db store.DBTX) error {
			return files.MoveOut(ctx, db, fs, log)
		}})
	}
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, fs, nil
}

// openFiles waits for the object store and makes its bucket when it is missing.
func openFiles(ctx context.Context, cfg config.Config, log *slog.Logger, pool *pgxpool.Pool, start startup) (*files.Service, error) {
	objects, err := files.Connect(cfg.Files)
	if err != nil {
		return nil, fmt.Errorf("POSTBOX_S3_*: %w", err)
	}
	if err := start.waitFor(ctx, "the object store", objects.EnsureBucket); err != nil {
		return nil, err
	}
	return files.New(pool, objects, log), nil
}

func runGen(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	shape := scaledata.Full
	fs.IntVar(&shape.Messages, "messages", shape.Messages, "messages to add")
	fs.IntVar(&shape.Parties, "parties", shape.Parties, "organizations the person represents")
	fs.IntVar(&shape.Services, "services", shape.Services, "services (even ones form tasks, odd ones correspondence)")
	fs.IntVar(&shape.Owners, "owners", shape.Owners, "service owners")
	fs.Uint64Var(&shape.Seed, "seed", shape.Seed, "random seed: the same seed gives the same data")
	submissions := fs.Int("submissions", 0, "archived submissions (a form, an attachment and a print each) to add to the download queue of G00's first form-task service")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, objects, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer pool.Close()
	began := time.Now()
	res, err := scaledata.Generate(ctx, pool, shape)
	if err != nil {
		return err
	}
	queued, err := scaledata.Submissions(ctx, pool, objects, scaledata.Queue{Count: *submissions, Owner: "G00",
		ServiceCode: fmt.Sprint(res.FirstCode), ServiceEdition: 1, ReporteeID: res.FirstOrg, FirstSeq: scaledata.FirstSubmission})
	if err != nil {
		return err
	}
	slog.Info("dataset generated", "messages", shape.Messages, "organizations", shape.Parties, "services", shape.Services,
		"submissions", queued, "person", scaledata.PersonSSN, "first_reportee", fmt.Sprintf("r%d", res.FirstOrg),
		"took", time.Since(began).Round(time.Second))
	return nil
}

// services are what `api`, `worker` and `dev` run on: the database pool and the Temporal client, both
// traced and measured, and how long to wait for them at startup.
type services struct {
	cfg      config.Config
	log      *slog.Logger
	tracing  *telemetry.Tracing
	pool     *pgxpool.Pool
	listen   *pgx.ConnConfig // the LISTEN connections' (POSTBOX_DATABASE_LISTEN_URL)
	files    *files.Service
	temporal client.Client
	untrack  func()
	startup  startup
}

// openServices opens the pool (queries traced by otelpgx, statistics in the postbox_db_pool_* series)
// and a Temporal client (SDK metrics into the Prometheus registry, the OpenTelemetry interceptor on the
// client and so on every worker made from it, the SDK's log through slog). Both connect on first use:
// each part waits for what it needs (serveAPI, serveWorker).
func openServices(ctx context.Context, cfg config.Config, log *slog.Logger, tracing *telemetry.Tracing) (*services, error) {
	pool, err := store.Connect(ctx, cfg.DatabaseURL, store.WithTracer(otelpgx.NewTracer(otelpgx.WithTracerProvider(tracing.Provider))))
	if err != nil {
		return nil, err
	}
	listen, err := pgx.ParseConfig(cfg.DatabaseListenURL)
	if err != nil {
		pool.Close()
		return nil, errors.New("POSTBOX_DATABASE_LISTEN_URL: not a PostgreSQL URL")
	}
	objects, err := files.Connect(cfg.Files)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("POSTBOX_S3_*: %w", err)
	}
	tc, err := dialTemporal(cfg, log, tracing)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &services{cfg: cfg, log: log, tracing: tracing, pool: pool, listen: listen, files: files.New(pool, objects, log), temporal: tc,
		untrack: telemetry.TrackPool(pool), startup: newStartup(cfg, log)}, nil
}

func (s *services) Close() {
	s.temporal.Close()
	s.untrack()
	s.pool.Close()
}

// startTracing exports traces when POSTBOX_OTLP_ENDPOINT is set (and makes them the global provider);
// otherwise it returns the no-op provider. The returned func flushes what is left.
func startTracing(ctx context.Context, cfg config.Config, log *slog.Logger, service string) (*telemetry.Tracing, func(), error) {
	tracing, err := telemetry.NewTracing(ctx, cfg.OTLPEndpoint, service)
	if err != nil {
		return nil, nil, err
	}
	otel.SetTextMapPropagator(tracing.Propagator)
	if !tracing.Enabled() {
		return tracing, func() {}, nil
	}
	otel.SetTracerProvider(tracing.Provider)
	log.Info("tracing to OTLP endpoint", "endpoint", cfg.OTLPEndpoint, "service", service)
	return tracing, func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(flushCtx); err != nil {
			log.Warn("flushing traces failed", "err", err)
		}
	}, nil
}

// run starts tracing, opens the services and runs parts on them, with the admin listener (metrics,
// health) alongside, until ctx ends (a part waiting for a dependency then stops too) or a part fails.
func run(ctx context.Context, cfg config.Config, log *slog.Logger, service string, parts ...func(context.Context, *services) error) error {
	tracing, flush, err := startTracing(ctx, cfg, log, service)
	if err != nil {
		return err
	}
	defer flush()
	svc, err := openServices(ctx, cfg, log, tracing)
	if err != nil {
		return err
	}
	defer svc.Close()
	g, gctx := errgroup.WithContext(ctx)
	if cfg.AdminAddr != "" {
		g.Go(func() error { return serveAdmin(gctx, cfg, log) })
	}
	for _, part := range parts {
		g.Go(func() error { return part(gctx, svc) })
	}
	if err := g.Wait(); err != nil && (ctx.Err() == nil || !errors.Is(err, context.Canceled)) {
		return err
	}
	return nil
}

func runAPI(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	if err := cfg.RequirePublicURL(); err != nil {
		return err
	}
	return run(ctx, cfg, log, "postbox-api", serveAPI)
}

func runDev(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	file := fs.String("file", "deploy/demo/demo.json", "dataset to import before serving (empty: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, objects, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	if *file != "" {
		if err = importer.FromFile(ctx, pool, objects, *file); err == nil {
			log.Info("dataset imported", "file", *file)
		}
	}
	pool.Close()
	if err != nil {
		return err
	}
	cfg.WorkerQueues = config.QueueGroups // one process does everything
	return run(ctx, cfg, log, "postbox", serveWorker, serveAPI)
}

// runWebhookEcho serves webhook.Echo until ctx ends.
func runWebhookEcho(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("webhook-echo", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9999", "where to listen")
	secretFile := fs.String("secret-file", "/tmp/postbox-webhook-secret", "file holding the subscription's Secret")
	if err := fs.Parse(args); err != nil {
		return err
	}
	echo := &webhook.Echo{Out: os.Stdout, Secret: func() string {
		b, _ := os.ReadFile(*secretFile)
		return strings.TrimSpace(string(b))
	}}
	fmt.Printf("webhook-echo: deliveries to http://%s/ (secret from %s)\n", *addr, *secretFile)
	return httpServe(ctx, cfg, log, newHTTPServer(cfg, *addr, echo))
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
	if len(cfg.TokenIssuers) == 0 {
		return errors.New("POSTBOX_TOKEN_ISSUER names no issuer to mint for")
	}
	// Local tokens are minted as the first trusted issuer, whose key POSTBOX_TOKEN_SIGNING_KEY holds.
	m, err := identity.LoadMinter(cfg.TokenSigningKey, "demo-1", cfg.TokenIssuers[0].Issuer, cfg.TokenAudience)
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
