package worker_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// One dev server for the package (the restart test starts its own). Namespaces keep tests that need a
// worker of their own apart from the shared worker of "default".
const (
	nsDurability = "durability"
	nsBench      = "bench"
	nsShutdown   = "shutdown"
	nsTakeover   = "takeover"
	nsWebhooks   = "webhooks"
)

var (
	devServer *testsuite.DevServer
	shared    struct {
		pool  *pgxpool.Pool
		tasks *formtask.Service
		log   *recorder
	}
)

func TestMain(m *testing.M) {
	if os.Getenv(victimWorkerDB) != "" { // this binary started as the worker a test kills
		os.Exit(runVictimWorker())
	}
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	ctx := context.Background()
	var err error
	devServer, err = startDevServer(ctx, "", "", nsDurability, nsBench, nsShutdown, nsTakeover, nsWebhooks)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the Temporal dev server:", err)
		return 1
	}
	defer devServer.Stop() //nolint:errcheck
	url, _, drop, err := storetest.Create(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "the tests need PostgreSQL:", err)
		return 1
	}
	defer drop()
	pool, err := store.Open(ctx, url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pool.Close()

	c := devServer.Client()
	if err := worker.RegisterSearchAttributes(ctx, c, "default"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	acts, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer acts.Schemas.Close()
	acts.FormTasks = formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)})
	w := worker.New(c, acts, worker.Options{MaxConcurrentActivities: 16, MaxConcurrentWorkflowTasks: 8})
	shared.log = &recorder{}
	shared.log.wrap(w, acts)
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Stop()
	shared.pool, shared.tasks = pool, formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)})
	return m.Run()
}

func quietLogger() tlog.Logger { return temporaltest.QuietLogger() }

// startDevServer starts the dev server on hostPort (a free port when empty), persisted to dbFile when set,
// with the "default" namespace and more.
func startDevServer(ctx context.Context, hostPort, dbFile string, namespaces ...string) (*testsuite.DevServer, error) {
	return temporaltest.StartDevServer(ctx, hostPort, dbFile, namespaces...)
}

func freeHostPort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// dial returns a client of the shared dev server for a namespace, with its search attributes registered.
func dial(t testing.TB, hostPort, namespace string) client.Client {
	c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace, Logger: quietLogger()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.NoError(t, worker.RegisterSearchAttributes(context.Background(), c, namespace))
	return c
}

// startWorker runs a worker of c on pool until the test ends or stop is called; override may replace
// activities before it starts.
func startWorker(t testing.TB, c client.Client, pool *pgxpool.Pool, override func(sdkworker.Registry, *formtask.Activities)) (stop func()) {
	acts, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	require.NoError(t, err)
	w := worker.New(c, acts, worker.Options{StopTimeout: 200 * time.Millisecond})
	if override != nil {
		override(w, acts)
	}
	require.NoError(t, w.Start())
	var once sync.Once
	stop = func() {
		once.Do(func() {
			w.Stop()
			acts.Schemas.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// event is an activity starting or ending, for checking that updates of one task never interleave.
type event struct {
	messageID string
	revision  int64
	what      string
}

// recorder wraps the activities that see revisions and logs when each starts and ends.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) of(messageID string) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event
	for _, e := range r.events {
		if e.messageID == messageID {
			out = append(out, e)
		}
	}
	return out
}

func recorded[T, R any](r *recorder, name string, fn func(context.Context, T) (R, error), key func(T) formtask.ContentRef) func(context.Context, T) (R, error) {
	return func(ctx context.Context, in T) (R, error) {
		k := key(in)
		r.add(event{k.MessageID, k.Revision.ID, name + " start"})
		defer r.add(event{k.MessageID, k.Revision.ID, name + " end"})
		time.Sleep(5 * time.Millisecond) // widen the window in which another update could slip in
		return fn(ctx, in)
	}
}

func (r *recorder) wrap(w sdkworker.Registry, a *formtask.Activities) {
	opts := func(name string) activity.RegisterOptions {
		return activity.RegisterOptions{Name: name, DisableAlreadyRegisteredCheck: true}
	}
	w.RegisterActivityWithOptions(recorded(r, "check and project", a.CheckAndProject, func(in formtask.CheckAndProjectInput) formtask.ContentRef { return in.Content }),
		opts("CheckAndProject"))
}
