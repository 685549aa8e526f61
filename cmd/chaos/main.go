// Command chaos is the chaos suite of `make chaos`. It starts its own PostgreSQL cluster, object store,
// Temporal dev server, `postbox api` and `postbox worker` as separate processes on free ports, has
// concurrent clients submit form tasks as integrators do (retrying on 503, timeouts and broken
// connections), crashes every
// component at random — and each once while an Archive transaction is open — and then checks every task:
// archived exactly once, one print, the stored form data byte-equal to what was sent, no workflow failed
// or still running, and every 5xx answer a 503 with Retry-After. Meanwhile a webhook subscription of the
// integrator gets the reportee's events (a producer commits one every 100 ms) at a receiver in this
// process: every event must arrive at least once, repeats with the same body (webhooks.go). And the
// owner of the service drains its download queue throughout: every archive received byte-exact and
// confirmed exactly once (agency.go); and it sends one correspondence to 2,000 organizations, retried
// with its IdempotentKey until answered: one shipment, every recipient with exactly one message
// (sender.go). It exits non-zero on any loss, double or other 5xx.
//
// Settings (environment): CHAOS_SEED (default: the clock; printed), CHAOS_TASKS (300), CHAOS_CLIENTS (8),
// CHAOS_LIMIT (the whole run, 10m at most), CHAOS_POSTBOX (the postbox binary, default bin/postbox),
// POSTBOX_TEMPORAL_CLI (default bin/temporal), CHAOS_PG_BIN, CHAOS_KEEP=1 (keep the work directory and
// its logs even when the run passes).
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/internal/temporaltest"
)

func main() {
	os.Exit(run())
}

type settings struct {
	seed           uint64
	tasks, clients int
	limit          time.Duration
	keep           bool
	postbox        string
	temporal       string
}

func readSettings() (settings, error) {
	s := settings{seed: uint64(time.Now().UnixNano() % 1_000_000), tasks: 300, clients: 8, limit: 10 * time.Minute,
		postbox: "bin/postbox", temporal: temporaltest.CLIPath(), keep: os.Getenv("CHAOS_KEEP") == "1"}
	var err error
	num := func(name string, into *int) {
		if v := os.Getenv(name); v != "" && err == nil {
			if *into, err = strconv.Atoi(v); err == nil && *into <= 0 {
				err = fmt.Errorf("%s must be positive", name)
			}
		}
	}
	num("CHAOS_TASKS", &s.tasks)
	num("CHAOS_CLIENTS", &s.clients)
	if v := os.Getenv("CHAOS_SEED"); v != "" && err == nil {
		s.seed, err = strconv.ParseUint(v, 10, 64)
	}
	if v := os.Getenv("CHAOS_LIMIT"); v != "" && err == nil {
		s.limit, err = time.ParseDuration(v)
	}
	if s.limit > 10*time.Minute || s.limit < 2*time.Minute {
		s.limit = min(max(s.limit, 2*time.Minute), 10*time.Minute)
	}
	if v := os.Getenv("CHAOS_POSTBOX"); v != "" {
		s.postbox = v
	}
	if s.postbox, err = filepath.Abs(s.postbox); err != nil {
		return s, err
	}
	return s, err
}

func run() int {
	cfg, err := readSettings()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	started := time.Now()
	hard := started.Add(cfg.limit)
	ctx, cancelRun := context.WithDeadline(ctx, hard)
	defer cancelRun()

	dir, err := os.MkdirTemp("", "postbox-chaos-")
	if err == nil {
		err = os.Chmod(dir, 0o755) // the postgres user must reach its cluster inside
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 2
	}
	fmt.Printf("chaos: seed %d, %d tasks, %d clients, at most %s; logs in %s\n", cfg.seed, cfg.tasks, cfg.clients, cfg.limit, dir)
	st, err := startStack(ctx, cfg, dir)
	if st != nil {
		defer st.stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos: starting the stack:", err)
		return 2
	}
	fmt.Printf("chaos: stack up in %s (api %s, temporal %s, postgres :%d)\n", time.Since(started).Round(time.Second), st.apiURL, st.temporalAddr, st.pg.port)

	rep, err := campaign(ctx, cfg, st, started, hard)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 2
	}
	rep.print(os.Stdout, st)
	if !rep.passed() {
		fmt.Printf("chaos: FAILED (seed %d); logs kept in %s\n", cfg.seed, dir)
		return 1
	}
	fmt.Printf("chaos: passed in %s\n", time.Since(started).Round(time.Second))
	if !cfg.keep {
		st.stop()
		_ = os.RemoveAll(dir)
	}
	return 0
}

// campaign runs the clients, the events' producer and the crashes, then the checks.
func campaign(ctx context.Context, cfg settings, st *stack, started, hard time.Time) (*report, error) {
	token, err := exec.CommandContext(ctx, cfg.postbox, "token", "--pid", integratorPID, "--scope", "platform:enduser").Output()
	if err != nil {
		return nil, fmt.Errorf("postbox token: %w", err)
	}
	hooks, err := startHooks(ctx, st, strings.TrimSpace(string(token)))
	if hooks != nil {
		defer hooks.stop()
	}
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	agencyToken, err := exec.CommandContext(ctx, cfg.postbox, "token", "--org", agencyOrg, "--scope", agencyScope).Output()
	if err != nil {
		return nil, fmt.Errorf("postbox token: %w", err)
	}
	db, err := pgx.Connect(ctx, st.pg.url("postbox"))
	if err != nil {
		return nil, err
	}
	// Clients give up in time for the checks to run within the limit.
	giveUp := hard.Add(-90 * time.Second)
	stats := newStats()
	var printsBefore int
	err = db.QueryRow(ctx, `SELECT count(*) FROM prints`).Scan(&printsBefore)
	if err == nil {
		err = addRecipients(ctx, db)
	}
	var sg *signers
	if err == nil {
		var tokens []string
		for _, p := range signees {
			tok, terr := exec.CommandContext(ctx, cfg.postbox, "token", "--pid", p.pid, "--scope", "platform:enduser").Output()
			if terr != nil {
				err = fmt.Errorf("postbox token: %w", terr)
				break
			}
			tokens = append(tokens, strings.TrimSpace(string(tok)))
		}
		filler := integrator{base: st.apiURL, token: strings.TrimSpace(string(token)), stats: stats, giveUp: giveUp,
			http: &http.Client{Timeout: 30 * time.Second}, rng: rand.New(rand.NewPCG(cfg.seed, 3_000_000))}
		if err == nil {
			sg, err = newSigners(ctx, db, filler, tokens, cfg.seed)
		}
	}
	db.Close(ctx)
	if err != nil {
		return nil, err
	}
	senderToken, err := exec.CommandContext(ctx, cfg.postbox, "token", "--org", agencyOrg, "--scope", senderScope).Output()
	if err != nil {
		return nil, fmt.Errorf("postbox token: %w", err)
	}

	tasks := make([]*task, cfg.tasks)
	queue := make(chan *task, cfg.tasks)
	for i := range tasks {
		tasks[i] = &task{index: i, formData: formData(rand.New(rand.NewPCG(cfg.seed, uint64(i))), i)}
		queue <- tasks[i]
	}
	close(queue)
	var wg sync.WaitGroup
	for c := range cfg.clients {
		in := &integrator{base: st.apiURL, token: strings.TrimSpace(string(token)), stats: stats, giveUp: giveUp,
			http: &http.Client{Timeout: 30 * time.Second}, rng: rand.New(rand.NewPCG(cfg.seed, uint64(1_000_000+c))), readsFirst: c%2 == 1}
		wg.Go(func() {
			for t := range queue {
				in.run(ctx, t)
			}
		})
	}
	clientsDone := make(chan struct{})
	go func() { wg.Wait(); close(clientsDone) }()
	producerDone := make(chan struct{})
	go func() { hooks.produce(ctx, st, clientsDone); close(producerDone) }()
	ag := &agency{base: st.apiURL, token: strings.TrimSpace(string(agencyToken)), http: &http.Client{Timeout: 30 * time.Second},
		stats: stats, formSHA: map[string]string{}}
	agencyDone := make(chan struct{})
	go func() { ag.loop(ctx, clientsDone); close(agencyDone) }()
	k := newKiller(st, rand.New(rand.NewPCG(cfg.seed, 42)))
	snd := &sender{base: st.apiURL, token: strings.TrimSpace(string(senderToken)), key: fmt.Sprintf("chaos-%d", cfg.seed), dbURL: st.pg.url("postbox"),
		mailpit:     st.mailpit,
		crashWorker: func() bool { return k.crashNow(st.wrk) },
		http:        &http.Client{Timeout: 60 * time.Second}, stats: stats}
	senderDone := make(chan struct{})
	go func() { snd.run(ctx, giveUp); close(senderDone) }()
	signersDone := make(chan struct{})
	go func() { sg.run(ctx); close(signersDone) }()

	killerDone := make(chan struct{})
	go func() { k.loop(ctx, clientsDone); close(killerDone) }()
	<-clientsDone
	<-killerDone
	<-producerDone
	<-agencyDone
	<-senderDone
	<-signersDone
	clientsEnded := time.Now()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, errors.New("interrupted; no checks")
	}

	// Everything runs again; the workflows finish what they had begun.
	checkCtx, cancel := context.WithDeadline(context.Background(), hard.Add(30*time.Second))
	defer cancel()
	if err := st.waitReady(checkCtx, hard); err != nil {
		return nil, err
	}
	tc, err := client.Dial(client.Options{HostPort: st.temporalAddr, Logger: temporaltest.QuietLogger()})
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	settle := time.Now().Add(90 * time.Second)
	if settle.After(hard) {
		settle = hard
	}
	db, err = pgx.Connect(checkCtx, st.pg.url("postbox"))
	if err != nil {
		return nil, err
	}
	defer db.Close(checkCtx)
	waitForWorkflows(checkCtx, tc, db, settle)
	ag.drain(checkCtx, hard)

	v := &verdict{}
	jointIDs, jointArchives, err := sg.check(checkCtx, db, v)
	if err != nil {
		return nil, err
	}
	if err := checkDatabase(checkCtx, db, tasks, jointIDs, jointArchives, started, printsBefore, v); err != nil {
		return nil, err
	}
	waiting, err := callOrders(checkCtx, db)
	if err != nil {
		return nil, err
	}
	if err := checkWorkflows(checkCtx, tc, tasks, waiting, v); err != nil {
		return nil, err
	}
	if err := hooks.check(checkCtx, db, v, hard); err != nil {
		return nil, err
	}
	if err := ag.check(checkCtx, db, tasks, v); err != nil {
		return nil, err
	}
	if err := snd.check(checkCtx, db, v); err != nil {
		return nil, err
	}
	if err := checkFiles(checkCtx, db, filepath.Join(st.objectsDir, "postbox"), v); err != nil {
		return nil, err
	}
	return &report{cfg: cfg, tasks: tasks, stats: stats, killer: k, sender: snd, verdict: v,
		clients: clientsEnded.Sub(started)}, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[K int | string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
