// Command benchload measures the mailbox API under load over real HTTP (make bench-load): it starts
// `postbox api` (the binary, on a loopback TCP port) on a database filled by `postbox gen` beside the demo
// dataset, drives each endpoint with a load generator (wrk, the Debian package, by default; vegeta as a
// library; or both in turn) at a fixed number of concurrent clients, runs the bare SQL the endpoint runs
// at the same concurrency in the same run, and prints requests per second, p50 and p99 of both, their
// ratio, the database round trips per request (connections the API took from its pool, from its
// /metrics), the CPU per request of the API, of the generator and of the bare loop's client, and the API
// process's peak resident memory; --cpuprofile keeps a CPU profile of the API for each endpoint.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/scaledata"
)

// demoMailboxKey is the demo dataset's API key of the mailbox area.
const demoMailboxKey = "9D4E2680-50AB-47FB-A1E6-6AB8106A0FB6"

func main() {
	database := flag.String("database", os.Getenv("POSTBOX_DATABASE_URL"), "database filled by `postbox seed` and `postbox gen`")
	binary := flag.String("postbox", "bin/postbox", "the postbox binary to serve the API with")
	clients := flag.Int("clients", 32, "concurrent clients")
	duration := flag.Duration("duration", 10*time.Second, "how long each endpoint and each bare query is driven")
	only := flag.String("only", "", "drive only the endpoints whose name contains this (e.g. \"one message\")")
	words := flag.String("search", "fiskerikvote", "the words of the search= endpoints")
	explain := flag.Bool("explain", false, "print EXPLAIN (ANALYZE, BUFFERS) of each list statement instead of driving the API")
	generators := flag.String("generator", "wrk", "the load generator: wrk (the Debian package, driven as a tool), vegeta (as a library), or both (each in turn, against the same bare run)")
	cpuProfile := flag.String("cpuprofile", "", "write the API's CPU profile while each endpoint is driven to `prefix`-<endpoint>.pprof, and its allocations to prefix-<endpoint>-allocs.pprof")
	flag.Parse()
	gens := strings.Split(*generators, ",")
	if *generators == "both" {
		gens = []string{"vegeta", "wrk"}
	}
	for _, g := range gens {
		if g != "vegeta" && g != "wrk" {
			fmt.Fprintf(os.Stderr, "benchload: --generator %s: give wrk, vegeta or both\n", g)
			os.Exit(2)
		}
	}
	if err := run(context.Background(), *database, *binary, *words, *only, *cpuProfile, gens, *explain, *clients, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "benchload:", err)
		os.Exit(1)
	}
}

// benchRateLimit is the API's rate limit per key and minute under load: far above what the run sends, so
// every request is admitted while the limiter still does its work (a lease per 64 requests).
const benchRateLimit = 1_000_000_000

// roundTrips is the API's count of connections taken from its database pool: each is one statement or one
// batch of them, a round trip.
const roundTrips = "postbox_db_pool_acquires_total"

// messageBatches counts the statements (_count) of the API's single-message reads and the reads they
// answered (_sum): the API coalesces concurrent reads of a message into one statement.
const messageBatches = "postbox_db_message_read_batch_size"

// target is one endpoint and the statement it runs (sql and args for the list statements, for --explain).
type target struct {
	name, path string
	sql        string
	args       []any
	bare       func(ctx context.Context, pool *pgxpool.Pool) error
	// coalesced, for one message, is the bare read coalesced as the API coalesces it (store.MessageReader,
	// at most inFlight statements at once): what the endpoint's statements cost without the API around them.
	coalesced func(inFlight int) func(ctx context.Context, pool *pgxpool.Pool) error
}

func run(ctx context.Context, database, binary, words, only, cpuProfile string, generators []string, explain bool, clients int, duration time.Duration) error {
	if database == "" {
		return errors.New("give --database or POSTBOX_DATABASE_URL: a database filled by postbox seed and postbox gen")
	}
	// This pool finds the targets; the bare loop gets its own below, as large as the API's.
	pool, err := store.Open(ctx, database)
	if err != nil {
		return err
	}
	defer pool.Close()
	// The API's settings from the same environment: the bare lists run under its list timeout.
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	targets, token, err := targetsOf(ctx, pool, words, cfg.ListTimeout)
	if err != nil {
		return err
	}
	if explain {
		return explainAll(ctx, pool, targets, only)
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	adminAddr, err := freeAddr()
	if err != nil {
		return err
	}
	api := exec.Command(binary, "api")
	// The API keeps its own pool, as configured (pgx's default is four connections, or one per core where
	// there are more): its requests wait for a connection in the API rather than as 32 backends sharing the cores.
	api.Env = append(os.Environ(), "POSTBOX_DATABASE_URL="+database, "POSTBOX_HTTP_ADDR="+addr, "POSTBOX_PUBLIC_URL=http://"+addr,
		"POSTBOX_ADMIN_ADDR="+adminAddr, fmt.Sprintf("POSTBOX_ADMIN_PPROF=%t", cpuProfile != ""),
		"POSTBOX_LOG_LEVEL=warn", fmt.Sprintf("POSTBOX_RATE_LIMIT=%d", benchRateLimit))
	api.Stdout, api.Stderr = os.Stderr, os.Stderr
	if err := api.Start(); err != nil {
		return fmt.Errorf("start %s api: %w", binary, err)
	}
	defer func() { _ = api.Process.Signal(os.Interrupt); _ = api.Wait() }()
	base, admin := "http://"+addr, "http://"+adminAddr
	if err := waitHealthy(base); err != nil {
		return err
	}

	apiConns, err := apiMetric(admin, "postbox_db_pool_max_conns")
	if err != nil {
		return err
	}
	// The bare loop runs with the API's pool size, so neither side has more database connections.
	bare, err := store.Open(ctx, withPoolSize(database, int(apiConns)))
	if err != nil {
		return err
	}
	defer bare.Close()
	fmt.Printf("%d clients, %s per run; API: postbox api (pid %d) on %s\n", clients, duration, api.Process.Pid, addr)
	fmt.Printf("pool sizes: API %.0f database connections, bare loop %d (the same)\n", apiConns, bare.Config().MaxConns)
	fmt.Println("baseline (SQL columns, ratio = API req/s ÷ SQL req/s): the same statements the endpoint runs, sent by")
	fmt.Println("  the same number of clients straight through pgx over the bare loop's pool; for one message, the same")
	fmt.Println("  reads coalesced as the API coalesces them (store.MessageReader), the uncoalesced reads on the line below")
	fmt.Println()
	fmt.Printf("%-34s %10s %9s %9s %6s | %10s %9s %9s | %6s %6s\n", "endpoint", "API req/s", "p50", "p99", "DB/req", "SQL req/s", "p50", "p99", "ratio", "p99×")
	for _, t := range targets {
		if !strings.Contains(t.name, only) {
			continue
		}
		// Each generator in turn drives the API; the bare statement runs once after them, and every row
		// gives its ratio to that run.
		type driven struct {
			generator      string
			web            result
			apiCPU, genCPU time.Duration
			acquiresPerReq float64
			// statements and reads of the API's coalesced single-message reads
			statements, reads float64
		}
		var runs []driven
		for _, g := range generators {
			// Round trips, and the statements and reads of coalesced single-message reads, in one look.
			before, err := apiMetrics(admin, roundTrips, messageBatches+"_count", messageBatches+"_sum")
			if err != nil {
				return err
			}
			profiled := make(chan error, 1)
			if cpuProfile != "" {
				prefix := cpuProfile + "-" + slug(t.name)
				if len(generators) > 1 {
					prefix += "-" + g
				}
				go func() {
					allocs := make(chan error, 1)
					go func() { allocs <- saveProfile(admin, "allocs", prefix+"-allocs.pprof", duration) }()
					profiled <- errors.Join(saveProfile(admin, "profile", prefix+".pprof", duration), <-allocs)
				}()
			} else {
				profiled <- nil
			}
			apiBefore := processCPU(api.Process.Pid)
			var (
				web    result
				genCPU time.Duration
			)
			if g == "wrk" {
				web, genCPU, err = wrk(ctx, base+t.path, token, clients, duration)
			} else {
				clientBefore := ownCPU()
				web, err = attack(base+t.path, token, clients, duration)
				genCPU = ownCPU() - clientBefore
			}
			if err != nil {
				return fmt.Errorf("%s (%s): %w", t.name, g, err)
			}
			apiCPU := processCPU(api.Process.Pid) - apiBefore
			if err := <-profiled; err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			after, err := apiMetrics(admin, roundTrips, messageBatches+"_count", messageBatches+"_sum")
			if err != nil {
				return err
			}
			runs = append(runs, driven{g, web, apiCPU, genCPU, (after[0] - before[0]) / float64(web.requests),
				after[1] - before[1], after[2] - before[2]})
		}
		clientBefore := ownCPU()
		sql, err := hammer(ctx, bare, t.bare, clients, duration)
		if err != nil {
			return fmt.Errorf("%s, bare: %w", t.name, err)
		}
		bareCPU := ownCPU() - clientBefore
		var coalesced result
		if t.coalesced != nil {
			if coalesced, err = hammer(ctx, bare, t.coalesced(int(apiConns)), clients, duration); err != nil {
				return fmt.Errorf("%s, bare coalesced: %w", t.name, err)
			}
		}
		for _, r := range runs {
			name := t.name
			if len(generators) > 1 {
				name += " (" + r.generator + ")"
			}
			// The row leads with the baseline that does the same work: for one message, the reads coalesced.
			lead := sql
			if t.coalesced != nil {
				lead = coalesced
			}
			fmt.Printf("%-34s %10.0f %9s %9s %6.2f | %10.0f %9s %9s | %6.2f %6.2f\n", name,
				r.web.rate, ms(r.web.p50), ms(r.web.p99), r.acquiresPerReq, lead.rate, ms(lead.p50), ms(lead.p99),
				r.web.rate/lead.rate, float64(r.web.p99)/float64(lead.p99))
			fmt.Printf("%-34s CPU per request: API %s, %s %s | bare loop's client %s\n", "",
				perCall(r.apiCPU, r.web.requests), r.generator, perCall(r.genCPU, r.web.requests), perCall(bareCPU, sql.calls))
			if r.reads > 0 {
				// The bare loop runs the single-row statement a request would otherwise run; the API
				// answers concurrent requests with one statement for several.
				fmt.Printf("%-34s coalesced: %.0f reads in %.0f statements, %.1f reads per statement, %.2f statements per request\n", "",
					r.reads, r.statements, r.reads/r.statements, r.statements/float64(r.web.requests))
				fmt.Printf("%-34s bare loop uncoalesced (one statement per read): %.0f req/s, p50 %s, p99 %s; API ÷ that %.2f, p99× %.2f\n", "",
					sql.rate, ms(sql.p50), ms(sql.p99), r.web.rate/sql.rate, float64(r.web.p99)/float64(sql.p99))
			}
		}
	}
	fmt.Printf("\nAPI peak RSS: %s\n", peakRSS(api.Process.Pid))
	return nil
}

// targetsOf builds the endpoints for the generated person: one organization's list with a filter, the
// list of all parties, search in one party and in all, and one message.
func targetsOf(ctx context.Context, pool *pgxpool.Pool, words string, listTimeout time.Duration) ([]target, string, error) {
	q := store.New(pool)
	var person, org int64
	var messageID string
	if err := pool.QueryRow(ctx, `SELECT id FROM parties WHERE ssn = $1`, scaledata.PersonSSN).Scan(&person); err != nil {
		return nil, "", fmt.Errorf("no generated person %s (run postbox gen): %w", scaledata.PersonSSN, err)
	}
	if err := pool.QueryRow(ctx, `SELECT reportee_id FROM messages WHERE id LIKE 'a8%' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`).Scan(&org); err != nil {
		return nil, "", err
	}
	p := identity.Principal{Method: identity.MethodPersonToken, PersonID: person}
	rights, err := identity.NewRights(q, slog.New(slog.DiscardHandler)).For(ctx, p, org)
	if err != nil {
		return nil, "", err
	}
	vis := rights.Visibility()
	// A form task the person may read, so that reading it writes nothing (unread correspondence is marked read).
	if err := pool.QueryRow(ctx, `SELECT m.id FROM messages m WHERE m.reportee_id = $1 AND m.type = 'FormTask'
		AND m.service_code = ANY ($2) ORDER BY m.created_date DESC LIMIT 1`, org, codes(vis.Read)).Scan(&messageID); err != nil {
		return nil, "", err
	}
	who := fmt.Sprintf("r%d", org)
	filter := "Status eq 'Sendt og arkivert' and CreatedDate gt DateTime'2024-01-01T00:00:00'"
	list := func(f string) store.ListQuery {
		lq := store.ListQuery{Page: store.Page{Limit: 50}}
		if f != "" {
			lq.Filter, _ = odata.ParseFilter(f)
		}
		return lq
	}
	search, err := mailbox.ParseSearch(words)
	if err != nil {
		return nil, "", err
	}
	// The API looks the words up in the lexicon first, a statement of its own, so the bare loop of a search
	// runs both: the lookup, then the list built from its answer. Resolved once here for --explain.
	resolved, err := mailbox.ResolveSearch(ctx, pool, search)
	if err != nil {
		return nil, "", err
	}
	subject := p.Subject()
	// listTarget is an endpoint whose bare statement is a list statement as a ...SQL function builds it,
	// in the batch the store runs it in (store.ListBatch: planned for its parameters, under the API's list
	// timeout).
	sendList := func(ctx context.Context, pool *pgxpool.Pool, sql string, args []any, err error) error {
		if err != nil {
			return err
		}
		return pool.SendBatch(ctx, store.ListBatch(listTimeout, sql, args)).Close()
	}
	listTarget := func(name, path string, build func() (string, []any, error)) target {
		sql, args, err := build()
		return target{name: name, path: path, sql: sql, args: args, bare: func(ctx context.Context, pool *pgxpool.Pool) error {
			return sendList(ctx, pool, sql, args, err)
		}}
	}
	// searchTarget makes t's bare loop look the words up on every call, as the API does, before its list.
	searchTarget := func(t target, build func(mailbox.Search) func() (string, []any, error)) target {
		t.bare = func(ctx context.Context, pool *pgxpool.Pool) error {
			s, err := mailbox.ResolveSearch(ctx, pool, search)
			if err != nil {
				return err
			}
			sql, args, err := build(s)()
			return sendList(ctx, pool, sql, args, err)
		}
		return t
	}
	oneSQL := func(f string, s mailbox.Search) func() (string, []any, error) {
		return func() (string, []any, error) { return mailbox.ListMessagesSQL(org, vis, list(f), s) }
	}
	allSQL := func(s mailbox.Search) func() (string, []any, error) {
		return func() (string, []any, error) { return mailbox.ListAllMessagesSQL(subject, person, list(""), s) }
	}
	targets := []target{
		listTarget("one party, $filter", "/api/"+who+"/messages?$filter="+url.QueryEscape(filter), oneSQL(filter, mailbox.Search{})),
		listTarget("all parties", "/api/all/messages", allSQL(mailbox.Search{})),
		searchTarget(listTarget("search in one party", "/api/"+who+"/messages?search="+url.QueryEscape(words), oneSQL("", resolved)),
			func(s mailbox.Search) func() (string, []any, error) { return oneSQL("", s) }),
		searchTarget(listTarget("search in all parties", "/api/all/messages?search="+url.QueryEscape(words), allSQL(resolved)), allSQL),
		{name: "one message", path: "/api/" + who + "/messages/" + messageID, bare: func(ctx context.Context, pool *pgxpool.Pool) error {
			_, err := store.New(pool).GetMessage(ctx, org, messageID)
			return err
		}, coalesced: func(inFlight int) func(context.Context, *pgxpool.Pool) error {
			reader := store.NewMessageReader(pool, inFlight, nil)
			return func(ctx context.Context, _ *pgxpool.Pool) error {
				_, err := reader.GetMessage(ctx, org, messageID)
				return err
			}
		}},
	}
	out, err := exec.Command("bin/postbox", "token", "--pid", scaledata.PersonSSN, "--scope", "platform:enduser").Output()
	if err != nil {
		return nil, "", fmt.Errorf("mint a token: %w", err)
	}
	return targets, strings.TrimSpace(string(out)), nil
}

// explainAll prints the plan of each list statement as PostgreSQL runs it, with the buffers it touched.
func explainAll(ctx context.Context, pool *pgxpool.Pool, targets []target, only string) error {
	for _, t := range targets {
		if t.sql == "" || !strings.Contains(t.name, only) {
			continue
		}
		rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+t.sql, t.args...)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		fmt.Printf("%s (%s)\n  %s\n\n", t.name, t.path, strings.Join(plan, "\n  "))
	}
	return nil
}

func codes(keys []store.ServiceKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Code
	}
	return out
}

// withPoolSize asks for a pool of conns connections.
func withPoolSize(database string, conns int) string {
	sep := "?"
	if strings.Contains(database, "?") {
		sep = "&"
	}
	return fmt.Sprintf("%s%spool_max_conns=%d", database, sep, conns)
}
