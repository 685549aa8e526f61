// Package temporaltest starts a real Temporal dev server for tests, from the pinned CLI the Makefile
// builds into ./bin (or $POSTBOX_TEMPORAL_CLI).
package temporaltest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/postbox/postbox/internal/testserver"
)

// CLIPath is the Temporal CLI the tests run.
func CLIPath() string { return testserver.BinaryPath("POSTBOX_TEMPORAL_CLI", "temporal") }

// QuietLogger logs only the SDK's errors.
func QuietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// DevServerFlags are the dynamic configuration of every dev server Postbox starts (the tests, make chaos;
// scripts/run.sh passes the same for make run). The dev server has one history shard, whose transfer queue
// (a new run's first workflow task, every activity task, the workflow task after an activity completed)
// is read at most history.transferProcessorMaxPollRPS times a second: at the default 20 each such step
// waited up to 50 ms for the next read, most of a form task's validation and of its archiving. One process
// serves every task queue, so partitions (default 4) only forward tasks and polls between themselves, at
// most 10 a second each, which held a bare workflow at 16 clients to a few a second.
var DevServerFlags = []string{
	"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
	"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
	"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
}

// StartDevServer starts a dev server on hostPort (a free port when empty), persisted to dbFile when set,
// with the "default" namespace and the extra namespaces.
func StartDevServer(ctx context.Context, hostPort, dbFile string, namespaces ...string) (*testsuite.DevServer, error) {
	extra := slices.Clone(DevServerFlags)
	for _, ns := range namespaces {
		extra = append(extra, "--namespace", ns)
	}
	return testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  CLIPath(),
		ClientOptions: &client.Options{HostPort: hostPort, Logger: QuietLogger()},
		DBFilename:    dbFile,
		LogLevel:      "error",
		ExtraArgs:     extra,
		Stdout:        io.Discard,
	})
}

// Unhurried gives a test workflow environment room for a busy machine: with the SDK's defaults a workflow
// goroutine that does not yield within 1 s is called a deadlock and a test's activities get 3 s of wall
// time, which sound workflows overrun when CI shares two cores with the rest of the suite.
func Unhurried(env *testsuite.TestWorkflowEnvironment) *testsuite.TestWorkflowEnvironment {
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.SetTestTimeout(time.Minute)
	return env
}

// RecordHistory writes the history of workflow id to the file POSTBOX_RECORD_HISTORY names, when it is
// set: how a package's replay baseline (testdata/*-baseline.json) is recorded from a test's real run.
func RecordHistory(ctx context.Context, c client.Client, id string) error {
	file := os.Getenv("POSTBOX_RECORD_HISTORY")
	if file == "" {
		return nil
	}
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return err
		}
		events = append(events, e)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: events})
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}
