package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/store/storetest"
)

// logRecords keeps what a process under test logs, one "LEVEL message key=value…" line per record,
// readable while it runs.
type logRecords struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	return nil
}

// count is the number of records whose line begins with prefix.
func (l *logRecords) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

func (l *logRecords) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// downDatabase is a database of the test server behind an address where nothing listens until up is
// called: PostgreSQL is down, connections are refused, until it comes up.
type downDatabase struct {
	url  string // of the database, at the address
	addr string
}

func newDownDatabase(t *testing.T) *downDatabase {
	t.Helper()
	dbURL, _ := storetest.NewDatabase(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	addr := storetest.UnusedAddr(t)
	u.Host = addr
	return &downDatabase{url: u.String(), addr: addr}
}

// up starts forwarding the address to the test server.
func (d *downDatabase) up(t *testing.T) {
	t.Helper()
	server, err := url.Parse(storetest.ServerURL())
	require.NoError(t, err)
	l, err := net.Listen("tcp", d.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", server.Host)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(s, c); _ = s.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c, s)
			}()
		}
	}()
}

// startupConfig is the configuration of a process started on db and on Temporal at temporalAddr, with the
// demo's token issuer, no admin listener and the API on a free port.
func startupConfig(t *testing.T, db, temporalAddr string, timeout time.Duration) config.Config {
	t.Helper()
	cfg, err := config.Load()
	require.NoError(t, err)
	cfg.DatabaseURL, cfg.TemporalAddress, cfg.TemporalNamespace = db, temporalAddr, "default"
	dbConfig, err := pgx.ParseConfig(db)
	require.NoError(t, err)
	cfg.Files = storetest.FilesConfig(t, dbConfig.Database)
	cfg.HTTPAddr, cfg.AdminAddr, cfg.OTLPEndpoint, cfg.TLSAddr = storetest.UnusedAddr(t), "", "", ""
	cfg.TokenAudience, cfg.PublicURL = "mailbox-api", "https://postbox.test"
	cfg.TokenIssuers = []config.TokenIssuer{{Issuer: "https://test-issuer.demo.local",
		JWKS: filepath.Join(filepath.Dir(storetest.DemoDataset()), "certs", "jwks.json")}}
	cfg.WorkerQueues = config.QueueGroups
	cfg.ShutdownTimeout = 2 * time.Second
	cfg.StartupTimeout = timeout
	return cfg
}

// running runs a command's function in the background; its error arrives on the channel when it ends.
func running(t *testing.T, run func(ctx context.Context) error) (stop func() error, exited <-chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(cancel)
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("the process did not stop")
			return nil
		}
	}, done
}

func getURL(t *testing.T, u string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("ApiKey", demoKey)
	req.Header.Set("Authorization", "Bearer "+token(t))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

// The API started while PostgreSQL is down listens at once: /healthz is 200, /readyz a 503 that names the
// database, a request a 503 with Retry-After; it waits (a warning per attempt) instead of exiting, and
// serves as soon as the database is there.
func TestAPIWaitsForTheDatabase(t *testing.T) {
	db := newDownDatabase(t)
	cfg := startupConfig(t, db.url, storetest.UnusedAddr(t), 0)
	logs := &logRecords{}
	log := slog.New(logs)
	stop, exited := running(t, func(ctx context.Context) error { return runAPI(ctx, cfg, log) })
	base := "http://" + cfg.HTTPAddr

	require.Eventually(t, func() bool { code, _ := getURL(t, base+"/healthz"); return code == http.StatusOK },
		30*time.Second, 50*time.Millisecond, "the API listens while the database is down")
	code, ready := getURL(t, base+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, map[string]any{"database": "unreachable", "temporal": "unreachable"}, ready["checks"])
	code, p := getURL(t, base+"/api/"+orgO1+"/messages/a3101102")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "urn:postbox:problem:database-unavailable", p["type"])
	require.Eventually(t, func() bool { return logs.count("WARN waiting for the database") >= 2 },
		30*time.Second, 50*time.Millisecond, "every attempt is a warning")
	select {
	case err := <-exited:
		t.Fatalf("the API exited while the database was down: %v", err)
	default:
	}

	db.up(t)
	require.Eventually(t, func() bool {
		_, ready := getURL(t, base+"/readyz")
		return ready["checks"].(map[string]any)["database"] == "ok"
	}, 60*time.Second, 100*time.Millisecond)
	code, m := getURL(t, base+"/api/"+orgO1+"/messages/a3101102")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "a3101102", m["MessageId"])
	assert.Eventually(t, func() bool { return logs.count("INFO the database answers; starting") == 1 },
		30*time.Second, 50*time.Millisecond)
	require.NoError(t, stop())
}

// The worker started while PostgreSQL and Temporal are down waits for the one, then the other, and starts.
func TestWorkerWaitsForTheDatabaseAndTemporal(t *testing.T) {
	db := newDownDatabase(t)
	temporalAddr := storetest.UnusedAddr(t)
	cfg := startupConfig(t, db.url, temporalAddr, 0)
	logs := &logRecords{}
	log := slog.New(logs)
	stop, exited := running(t, func(ctx context.Context) error { return runWorker(ctx, cfg, log) })
	waitLog := func(what string) {
		t.Helper()
		require.Eventually(t, func() bool { return logs.count(what) >= 2 }, 60*time.Second, 50*time.Millisecond,
			"%q twice in:\n%s", what, logs)
	}

	waitLog("WARN waiting for the database")
	db.up(t)
	waitLog("WARN waiting for temporal")
	select {
	case err := <-exited:
		t.Fatalf("the worker exited while Temporal was down: %v", err)
	default:
	}
	dev, err := temporaltest.StartDevServer(context.Background(), temporalAddr, "")
	require.NoError(t, err)
	defer func() { _ = dev.Stop() }()
	require.Eventually(t, func() bool { return logs.count("INFO worker started") == 1 }, 60*time.Second, 100*time.Millisecond,
		"started once Temporal answers:\n%s", logs)
	require.NoError(t, stop())
}

// A process that does not get a dependency within POSTBOX_STARTUP_TIMEOUT exits with an error that names
// it.
func TestStartupTimeout(t *testing.T) {
	for name, run := range map[string]func(context.Context, config.Config, *slog.Logger) error{
		"api": runAPI, "worker": runWorker, "migrate": runMigrate,
		"seed": func(ctx context.Context, cfg config.Config, log *slog.Logger) error {
			return runSeed(ctx, cfg, log, []string{"--file", storetest.DemoDataset()})
		},
		"gen": func(ctx context.Context, cfg config.Config, log *slog.Logger) error {
			return runGen(ctx, cfg, log, nil)
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := startupConfig(t, newDownDatabase(t).url, storetest.UnusedAddr(t), 300*time.Millisecond)
			logs := &logRecords{}
			err := run(context.Background(), cfg, slog.New(logs))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the database did not answer within POSTBOX_STARTUP_TIMEOUT (300ms)")
			assert.Positive(t, logs.count("WARN waiting for the database"))
		})
	}
}
