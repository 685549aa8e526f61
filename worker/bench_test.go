package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// bareTask is the baseline: a workflow whose one update runs one no-op local activity, as a submission's
// update runs its checks and archive as one local activity.
func bareTask(ctx workflow.Context) error {
	done := false
	if err := workflow.SetUpdateHandler(ctx, "run", func(ctx workflow.Context) error {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
		err := workflow.ExecuteLocalActivity(ctx, "Noop").Get(ctx, nil)
		done = true
		return err
	}); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return done && workflow.AllHandlersFinished(ctx) })
}

func noop(context.Context) error { return nil }

// benchSetup gives a benchmark a database, a client of the bench namespace, a worker there that also runs
// the bare workflow, the form-task service and the forms of a3101102; the client's RPCs and the pool's
// statements are counted in the calls it returns.
func benchSetup(b *testing.B) (*pgxpool.Pool, client.Client, *formtask.Service, []formtask.RevisionForm, *calls) {
	counted := newCalls()
	url, _ := storetest.NewDatabase(b)
	pool, err := store.Open(context.Background(), url, store.WithTracer(counted))
	require.NoError(b, err)
	b.Cleanup(pool.Close)
	c, err := client.Dial(client.Options{HostPort: devServer.FrontendHostPort(), Namespace: nsBench, Logger: quietLogger(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(counted.interceptor)}}})
	require.NoError(b, err)
	b.Cleanup(c.Close)
	require.NoError(b, worker.RegisterSearchAttributes(context.Background(), c, nsBench))
	startWorker(b, c, pool, func(w sdkworker.Registry, _ *formtask.Activities) {
		w.RegisterWorkflowWithOptions(bareTask, workflow.RegisterOptions{Name: "BareTask"})
		w.RegisterActivityWithOptions(noop, activity.RegisterOptions{Name: "Noop"})
	})
	return pool, c, formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool)}), formsOf(b, pool, "a3101102"), counted
}

// bareDefinition says what the baseline of these benchmarks is, printed beside their ratios.
const bareDefinition = "a bare workflow whose one Update runs one no-op local activity"

// runBare sends the bare workflow of id its update, starting it as form tasks are started, and waits for it.
func runBare(ctx context.Context, c client.Client, id string) error {
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: "bare/" + id, TaskQueue: formtask.TaskQueue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, "BareTask")
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions:          client.UpdateWorkflowOptions{UpdateName: "run", WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

// copyMessages makes n copies of a3101102 (4711/2, valid data, Utfylling) and returns their ids.
func copyMessages(b testing.TB, pool *pgxpool.Pool, batch, n int) []string {
	ctx := context.Background()
	ids := make([]string, n)
	err := store.InTx(ctx, pool, func(tx pgx.Tx) error {
		for i := range ids {
			ids[i] = fmt.Sprintf("a9%03d%04d", batch, i)
			if _, err := tx.Exec(ctx, `INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status,
					created_date, last_changed, last_changed_by)
				SELECT $1, reportee_id, type, service_code, service_edition, subject, status, created_date, last_changed, last_changed_by
				FROM messages WHERE id = 'a3101102'`, ids[i]); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO forms (message_id, ordinal, type, data_format_id, data_format_version, name, form_data)
				SELECT $1, ordinal, type, data_format_id, data_format_version, name, form_data FROM forms WHERE message_id = 'a3101102'`, ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(b, err)
	return ids
}

// drive runs do for every id with clients goroutines and returns the wall time and each call's latency.
func drive(b *testing.B, ids []string, clients int, do func(id string) error) (time.Duration, []time.Duration) {
	work := make(chan string)
	lat := make([]time.Duration, 0, len(ids))
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		fail error
	)
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for id := range work {
				t0 := time.Now()
				err := do(id)
				mu.Lock()
				lat = append(lat, time.Since(t0))
				if err != nil && fail == nil {
					fail = fmt.Errorf("%s: %w", id, err)
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	require.NoError(b, fail)
	return time.Since(start), lat
}

// cpuUse is the CPU time (user and system) used so far by the processes a benchmark drives: this one (the
// clients and the worker), its children (the Temporal dev server) and the PostgreSQL backends of pool's
// database. It reads /proc (Linux, clock ticks of 10 ms); what it cannot read, such as a database on
// another machine, counts zero.
type cpuUse struct{ process, devServer, postgres time.Duration }

func cpuNow(b *testing.B, pool *pgxpool.Pool) cpuUse {
	u := cpuUse{process: cpuOf(os.Getpid())}
	children, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	for _, f := range children {
		list, _ := os.ReadFile(f)
		for _, pid := range strings.Fields(string(list)) {
			n, _ := strconv.Atoi(pid)
			u.devServer += cpuOf(n)
		}
	}
	rows, err := pool.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
	require.NoError(b, err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(b, err)
	for _, pid := range pids {
		u.postgres += cpuOf(int(pid))
	}
	return u
}

// cpuOf is the CPU time of a process, 0 when /proc does not tell.
func cpuOf(pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	end := strings.LastIndexByte(string(stat), ')') // the command name may hold spaces
	if err != nil || end < 0 {
		return 0
	}
	fields := strings.Fields(string(stat[end+1:])) // from the state, field 3
	if len(fields) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(fields[11], 10, 64)
	system, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(user+system) * 10 * time.Millisecond
}

func (u cpuUse) add(v cpuUse) cpuUse {
	return cpuUse{u.process + v.process, u.devServer + v.devServer, u.postgres + v.postgres}
}

func (u cpuUse) since(before cpuUse) cpuUse {
	return cpuUse{u.process - before.process, u.devServer - before.devServer, u.postgres - before.postgres}
}

// perTask is u spread over n tasks, in milliseconds: in total, then for each part.
func (u cpuUse) perTask(n float64) (total, process, devServer, postgres float64) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	return ms(u.process + u.devServer + u.postgres), ms(u.process), ms(u.devServer), ms(u.postgres)
}

func p99(lat []time.Duration) time.Duration {
	slices.Sort(lat)
	return lat[(len(lat)*99+99)/100-1]
}

// BenchmarkSubmitEndToEnd drives 200 form tasks per iteration from Utfylling to Sendt og arkivert with 16
// concurrent clients (Update with start: XSD validation, attachment rules, read model, archive with PDF,
// and the sweep that confirms the archives), and in the same run 200 bare workflows whose update runs one no-op
// local activity, as the submission's runs its checks and archive in one. The ratio of the two
// throughputs is what the form-task logic costs over Temporal's own round trips. Beside it, the CPU time
// each costs per task (cpuUse): once the machine's CPUs are the limit, the ratio is about the inverse of
// theirs.
func BenchmarkSubmitEndToEnd(b *testing.B) {
	const tasks, clients = 200, 16
	ctx := context.Background()
	pool, c, ft, forms, counted := benchSetup(b)

	var (
		submitWall, bareWall     time.Duration
		submitLat, bareLat       []time.Duration
		submitCPU, bareCPU       cpuUse
		submitCalls, bareCalls   [2]callCount // before and after
		submitEvents, bareEvents float64
	)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		ids := copyMessages(b, pool, i, tasks)
		before := cpuNow(b, pool)
		callsBefore := counted.now()
		b.StartTimer()
		wall, lat := drive(b, ids, clients, func(id string) error {
			task, err := ft.Load(ctx, id)
			if err != nil {
				return err
			}
			res, err := ft.Submit(ctx, task, signer, formtask.Submission{Complete: true, Sign: true, Forms: forms})
			if err == nil && res.Outcome != formtask.OutcomeArchived {
				err = fmt.Errorf("outcome %s", res.Outcome)
			}
			return err
		})
		// The sweep that confirms each archive to its workflow (ConfirmArchives) is part of a submission's
		// cost: here all of them at once, in the time and CPU measured.
		sweep := time.Now()
		told, err := formtask.ConfirmArchives(ctx, c, formtask.NewStore(store.New(pool)), 0, slog.New(slog.DiscardHandler))
		require.NoError(b, err)
		require.Zero(b, told, "every workflow recorded its archive")
		wall += time.Since(sweep)
		submitWall += wall
		submitLat = append(submitLat, lat...)
		b.StopTimer()
		if i == 0 {
			submitCalls = [2]callCount{callsBefore, counted.now()}
		}
		submitCPU = submitCPU.add(cpuNow(b, pool).since(before))

		before = cpuNow(b, pool)
		callsBefore = counted.now()
		wall, lat = drive(b, ids, clients, func(id string) error { return runBare(ctx, c, id) })
		if i == 0 {
			bareCalls = [2]callCount{callsBefore, counted.now()}
		}
		bareWall += wall
		bareLat = append(bareLat, lat...)
		bareCPU = bareCPU.add(cpuNow(b, pool).since(before))
		if i == 0 { // outside the CPU measured
			workflowIDs, bareIDs := make([]string, len(ids)), make([]string, len(ids))
			for j, id := range ids {
				workflowIDs[j], bareIDs[j] = formtask.WorkflowID(id), "bare/"+id
			}
			submitEvents, bareEvents = historyEvents(b, c, workflowIDs), historyEvents(b, c, bareIDs)
		}
		b.StartTimer()
	}
	b.StopTimer()

	n := float64(b.N * tasks)
	submitRate, bareRate := n/submitWall.Seconds(), n/bareWall.Seconds()
	b.ReportMetric(submitRate, "tasks/s")
	b.ReportMetric(float64(p99(submitLat).Milliseconds()), "p99-ms")
	b.ReportMetric(bareRate, "bare-tasks/s")
	b.ReportMetric(float64(p99(bareLat).Milliseconds()), "bare-p99-ms")
	b.ReportMetric(submitRate/bareRate, "ratio")
	cpu, process, devServer, postgres := submitCPU.perTask(n)
	bareCPUTotal, bareProcess, bareDevServer, barePostgres := bareCPU.perTask(n)
	b.ReportMetric(cpu, "cpu-ms/task")
	b.ReportMetric(bareCPUTotal, "bare-cpu-ms/task")
	b.Logf("baseline: %s, started and updated as form tasks are (UpdateWithStart), 16 clients, the same worker", bareDefinition)
	b.Logf("submit %.1f tasks/s (p99 %v), bare workflow %.1f tasks/s (p99 %v), ratio %.2f (target ≥ 0.8)",
		submitRate, p99(submitLat), bareRate, p99(bareLat), submitRate/bareRate)
	b.Logf("CPU per task: submit %.1f ms (this process %.1f, dev server %.1f, PostgreSQL %.1f), bare workflow %.1f ms (%.1f, %.1f, %.1f)",
		cpu, process, devServer, postgres, bareCPUTotal, bareProcess, bareDevServer, barePostgres)
	queries, rpcs, perMethod := submitCalls[1].since(submitCalls[0], tasks)
	bareQueries, bareRPCs, barePerMethod := bareCalls[1].since(bareCalls[0], tasks)
	b.ReportMetric(rpcs, "rpcs/task")
	b.ReportMetric(bareRPCs, "bare-rpcs/task")
	b.Logf("per task: submit %.1f history events, %.1f PostgreSQL round trips, %.1f Temporal RPCs (%s); bare workflow %.1f events, %.1f round trips, %.1f RPCs (%s)",
		submitEvents, queries, rpcs, perMethod, bareEvents, bareQueries, bareRPCs, barePerMethod)
}

func p50(lat []time.Duration) time.Duration {
	slices.Sort(lat)
	return lat[(len(lat)-1)/2]
}

// BenchmarkFormTaskLatency is one client on an idle worker: per task a validation, a save (complete=false)
// and a submission to Sendt og arkivert, one after the other, and in the same run a bare workflow's update
// (one no-op local activity) per task; it prints the p50 of each and the archive's ratio to the bare update. What a user waits for, without queueing.
func BenchmarkFormTaskLatency(b *testing.B) {
	const tasks = 30
	ctx := context.Background()
	pool, c, ft, forms, _ := benchSetup(b)
	timed := func(lat *[]time.Duration, do func() error) {
		t0 := time.Now()
		require.NoError(b, do())
		*lat = append(*lat, time.Since(t0))
	}
	var validate, save, archive, bare []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		ids := copyMessages(b, pool, 500+i, tasks)
		b.StartTimer()
		for _, id := range ids {
			task, err := ft.Load(ctx, id)
			require.NoError(b, err)
			timed(&validate, func() error {
				v, err := ft.Validate(ctx, task, signer)
				if err == nil && !v.Success {
					err = fmt.Errorf("validation failed: %+v", v)
				}
				return err
			})
			timed(&save, func() error {
				_, err := ft.Submit(ctx, task, signer, formtask.Submission{Complete: false, Sign: true, Forms: forms})
				return err
			})
			timed(&archive, func() error {
				res, err := ft.Submit(ctx, task, signer, formtask.Submission{Complete: true, Sign: true, Forms: forms})
				if err == nil && res.Outcome != formtask.OutcomeArchived {
					err = fmt.Errorf("outcome %s", res.Outcome)
				}
				return err
			})
			timed(&bare, func() error { return runBare(ctx, c, id) })
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(p50(validate)), "validate-p50-ms")
	b.ReportMetric(ms(p50(save)), "save-p50-ms")
	b.ReportMetric(ms(p50(archive)), "archive-p50-ms")
	b.ReportMetric(ms(p50(bare)), "bare-p50-ms")
	b.ReportMetric(ms(p50(archive))/ms(p50(bare)), "archive-to-bare")
	b.Logf("baseline: %s, one client, the same worker", bareDefinition)
	b.Logf("p50: validate %v, save %v, submit to archive %v; a bare workflow's update %v (targets: validate ≤ 40 ms, archive ≤ 80 ms)",
		p50(validate), p50(save), p50(archive), p50(bare))
}
