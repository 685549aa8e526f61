package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// The test binary runs as a formtask worker of its own when these are set (see TestMain), so that a test
// can kill it with SIGKILL like a crashed process: no stop, no last report, no closed connections.
const (
	victimWorkerDB       = "POSTBOX_TEST_VICTIM_WORKER_DATABASE_URL"
	victimWorkerTemporal = "POSTBOX_TEST_VICTIM_WORKER_TEMPORAL"
	victimWorkerNS       = "POSTBOX_TEST_VICTIM_WORKER_NAMESPACE"
	victimWorkerApp      = "postbox-test-victim-worker" // its PostgreSQL application_name
)

// runVictimWorker polls the formtask queue (the workflows and their local activities, the archive among
// them) until the process is killed; it says "ready" once it polls.
func runVictimWorker() int {
	ctx := context.Background()
	url := os.Getenv(victimWorkerDB)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	pool, err := store.Open(ctx, url+sep+"application_name="+victimWorkerApp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := client.Dial(client.Options{HostPort: os.Getenv(victimWorkerTemporal), Namespace: os.Getenv(victimWorkerNS), Logger: quietLogger()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	acts, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := worker.New(c, acts, worker.Options{Queues: []string{config.QueueFormTask}}).Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	select {}
}

// startVictimWorkerProcess starts the test binary as a formtask worker and returns it once it polls.
func startVictimWorkerProcess(t *testing.T, databaseURL, namespace string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), victimWorkerDB+"="+databaseURL, victimWorkerTemporal+"="+devServer.FrontendHostPort(),
		victimWorkerNS+"="+namespace)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the worker process did not start")
	require.Equal(t, "ready\n", line)
	return cmd
}

// A worker killed (SIGKILL) in the middle of a submission's archive (the local activity CheckAndArchive),
// with the archive's transaction open: its workflow task times out, and another worker runs it again and
// archives the task, once.
func TestArchiveMovesToAnotherWorkerWhenOneIsKilled(t *testing.T) {
	ctx := context.Background()
	url, _ := storetest.NewDatabase(t)
	pool, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	c := dial(t, devServer.FrontendHostPort(), nsTakeover)

	// The task's row is held (FOR NO KEY UPDATE: revisions may still be stored), so the killed worker's archive
	// waits inside its transaction.
	const id = "a3101284"
	hold, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer hold.Rollback(ctx) //nolint:errcheck
	_, err = hold.Exec(ctx, `SELECT 1 FROM messages WHERE id = $1 FOR NO KEY UPDATE`, id)
	require.NoError(t, err)
	// At first the workflows run only in the process that is killed.
	victim := startVictimWorkerProcess(t, url, nsTakeover)

	ft := formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)})
	type outcome struct {
		res formtask.Result
		err error
	}
	done := make(chan outcome, 1)
	task, sub := load(t, ft, id), submission(t, pool, id, true, true)
	go func() {
		res, err := ft.Submit(ctx, task, signer, sub)
		done <- outcome{res, err}
	}()
	require.Eventually(t, func() bool {
		var waiting int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1
			AND wait_event_type = 'Lock'`,
			victimWorkerApp).Scan(&waiting)
		return err == nil && waiting == 1
	}, 30*time.Second, 50*time.Millisecond, "the archive did not start in the worker process")

	require.NoError(t, victim.Process.Kill())
	_ = victim.Wait()
	killed := time.Now()
	require.NoError(t, hold.Rollback(ctx))

	var archivedHere atomic.Int32
	other, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	require.NoError(t, err)
	t.Cleanup(other.Schemas.Close)
	takeover := worker.New(c, other, worker.Options{Queues: []string{config.QueueFormTask}, StopTimeout: 200 * time.Millisecond})
	takeover.RegisterActivityWithOptions(func(ctx context.Context, in formtask.CheckAndArchiveInput) (formtask.CheckAndArchiveResult, error) {
		res, err := other.CheckAndArchive(ctx, in)
		if err == nil {
			archivedHere.Add(1)
		}
		return res, err
	}, activity.RegisterOptions{Name: "CheckAndArchive", DisableAlreadyRegisteredCheck: true})
	require.NoError(t, takeover.Start())
	t.Cleanup(takeover.Stop)

	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the archive did not move to the other worker")
	}
	t.Logf("archived %s after the worker was killed (at the workflow task's timeout)", time.Since(killed).Round(100*time.Millisecond))
	require.NoError(t, o.err)
	assert.Equal(t, formtask.OutcomeArchived, o.res.Outcome)
	assert.Equal(t, int32(1), archivedHere.Load(), "the other worker archived it")

	var archives, prints int
	var ref string
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM archives), (SELECT count(*) FROM prints),
		(SELECT archive_reference FROM messages WHERE id = $1)`, id).Scan(&archives, &prints, &ref))
	assert.Equal(t, 1, archives)
	assert.Equal(t, 1, prints)
	assert.Equal(t, o.res.ArchiveReference, ref)
}
