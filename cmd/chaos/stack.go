package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/internal/freeport"
	"github.com/postbox/postbox/internal/mailpittest"
	"github.com/postbox/postbox/internal/s3test"
	"github.com/postbox/postbox/internal/temporaltest"
)

// The system under test: PostgreSQL, the object store, Temporal, postbox api and postbox worker, each a
// process the killer crashes and brings back.

// stack is the running system under test.
type stack struct {
	dir                         string
	pg                          *postgres
	mailpit                     *mailpittest.Server // the mail server, outside the crashes
	temporal, api, wrk, objects *proc
	objectsDir                  string // the folder the object store serves (one subfolder per bucket)
	apiURL, temporalAddr        string
	env                         []string
	stopOnce                    sync.Once
	cancel                      context.CancelFunc
}

func startStack(ctx context.Context, cfg settings, dir string) (*stack, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	pg, err := newPostgres(dir)
	if err != nil {
		return nil, err
	}
	if err := pg.restart(); err != nil {
		return nil, err
	}
	st := &stack{dir: dir, pg: pg}
	if err := exec1(ctx, pg.url("postgres"), "CREATE DATABASE postbox"); err != nil {
		return st, err
	}
	apiPort, err := freeport.Loopback()
	if err != nil {
		return st, err
	}
	temporalPort, err := freeport.Loopback()
	if err != nil {
		return st, err
	}
	if st.mailpit, err = mailpittest.Start(ctx, mailpittest.Options{IgnoreDuplicateIDs: true}); err != nil {
		return st, err
	}
	// The object store is one of the crashed components: versitygw over a folder of the run's.
	objectsPort, err := freeport.Loopback()
	if err != nil {
		return st, err
	}
	objectsAddr := fmt.Sprintf("127.0.0.1:%d", objectsPort)
	st.objectsDir = filepath.Join(dir, "objects", "data")
	meta := filepath.Join(dir, "objects", "meta")
	for _, d := range []string{st.objectsDir, meta} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return st, err
		}
	}
	if st.objects, err = newProc("objects", repo, dir, s3test.BinaryPath(),
		append(os.Environ(), "ROOT_ACCESS_KEY="+s3test.AccessKey, "ROOT_SECRET_KEY="+s3test.SecretKey),
		"--port", objectsAddr, "--health", "/health", "--quiet", "posix", "--sidecar", meta, st.objectsDir); err != nil {
		return st, err
	}
	st.apiURL = fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	st.temporalAddr = fmt.Sprintf("127.0.0.1:%d", temporalPort)
	st.env = postboxEnv(map[string]string{
		"POSTBOX_DATABASE_URL":     pg.url("postbox"),
		"POSTBOX_HTTP_ADDR":        fmt.Sprintf("127.0.0.1:%d", apiPort),
		"POSTBOX_PUBLIC_URL":       fmt.Sprintf("http://127.0.0.1:%d", apiPort),
		"POSTBOX_TEMPORAL_ADDRESS": st.temporalAddr,
		"POSTBOX_ADMIN_ADDR":       "",
		"POSTBOX_TLS_ADDR":         "",
		"POSTBOX_LOG_LEVEL":        "info",
		// The events part delivers to a receiver in this process.
		"POSTBOX_WEBHOOK_ALLOW_PRIVATE": "true",
		"POSTBOX_WEBHOOK_TIMEOUT":       "5s",
		"POSTBOX_SMTP_ADDR":             st.mailpit.SMTPAddr,
		"POSTBOX_SMTP_TLS":              "none",
		"POSTBOX_S3_ENDPOINT":           objectsAddr,
		"POSTBOX_S3_ACCESS_KEY":         s3test.AccessKey,
		"POSTBOX_S3_SECRET_KEY":         s3test.SecretKey,
		// The smallest parts S3 takes: the run's files are small, and an upload holds one part.
		"POSTBOX_S3_PART_SIZE": strconv.Itoa(5 << 20),
	})
	sctx, cancel := context.WithCancel(context.Background())
	st.cancel = cancel
	go st.objects.supervise(sctx)
	st.objects.start()
	for _, args := range [][]string{{"migrate"}, {"seed", "--file", "deploy/demo/demo.json"}} {
		cmd := exec.CommandContext(ctx, cfg.postbox, args...)
		cmd.Env, cmd.Dir = st.env, repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return st, fmt.Errorf("postbox %s: %v: %s", args[0], err, out)
		}
	}

	temporalArgs := append([]string{"server", "start-dev",
		"--ip", "127.0.0.1", "--port", strconv.Itoa(temporalPort), "--headless", "--log-level", "warn",
		"--db-filename", filepath.Join(dir, "temporal.db"),
		"--search-attribute", "Reportee=Keyword", "--search-attribute", "ServiceCode=Keyword",
		"--search-attribute", "ServiceEdition=Int", "--search-attribute", "FormTaskStatus=Keyword"}, temporaltest.DevServerFlags...)
	if st.temporal, err = newProc("temporal", repo, dir, cfg.temporal, os.Environ(), temporalArgs...); err != nil {
		return st, err
	}
	if st.api, err = newProc("api", repo, dir, cfg.postbox, st.env, "api"); err != nil {
		return st, err
	}
	if st.wrk, err = newProc("worker", repo, dir, cfg.postbox, st.env, "worker"); err != nil {
		return st, err
	}
	for _, p := range []*proc{st.temporal, st.api, st.wrk} {
		go p.supervise(sctx)
		p.start()
	}
	if err := st.waitReady(ctx, time.Now().Add(90*time.Second)); err != nil {
		return st, err
	}
	return st, nil
}

// postboxEnv is the environment of the postbox processes: ours, without any POSTBOX_ setting of the
// caller's, plus set.
func postboxEnv(set map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "POSTBOX_") {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// waitReady waits until the API says it is ready: PostgreSQL and Temporal both answer it.
func (st *stack) waitReady(ctx context.Context, deadline time.Time) error {
	c := &http.Client{Timeout: 3 * time.Second}
	for {
		res, err := c.Get(st.apiURL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the API was not ready in time (last: %v)", err)
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

func (st *stack) stop() {
	st.stopOnce.Do(func() {
		for _, p := range []*proc{st.api, st.wrk, st.temporal, st.objects} {
			if p != nil {
				p.stop()
			}
		}
		if st.cancel != nil {
			st.cancel()
		}
		if st.mailpit != nil {
			st.mailpit.Stop()
		}
		st.pg.stop()
	})
}

func (st *stack) components() []component {
	return []component{st.api, st.wrk, st.temporal, st.pg, st.objects}
}

func exec1(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
