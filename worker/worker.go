// Package worker runs form-task workflows and their activities on the form-task queue. Run as many as the
// load needs: Temporal spreads the tasks over them.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/activities"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/workflows"
)

// Options tune a worker; zero values take the SDK's defaults.
type Options struct {
	MaxConcurrentActivities    int           // activity executions at once (XSD and PDF work is CPU-bound)
	MaxConcurrentWorkflowTasks int           // workflow tasks at once
	StopTimeout                time.Duration // how long running activities may finish on stop
}

// New returns a worker on workflows.TaskQueue with the form-task workflow and acts registered.
func New(c client.Client, acts *activities.Activities, opts Options) worker.Worker {
	w := worker.New(c, workflows.TaskQueue, worker.Options{
		MaxConcurrentActivityExecutionSize:     opts.MaxConcurrentActivities,
		MaxConcurrentWorkflowTaskExecutionSize: opts.MaxConcurrentWorkflowTasks,
		WorkerStopTimeout:                      opts.StopTimeout,
	})
	Register(w, acts)
	return w
}

// Register registers the workflow and the activities on r.
func Register(r worker.Registry, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.FormTask, workflow.RegisterOptions{Name: "FormTask"})
	r.RegisterActivity(acts)
}

// SearchAttributes are the custom search attributes of form-task workflows and their types.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	workflows.SearchReportee.GetName():       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	workflows.SearchServiceCode.GetName():    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	workflows.SearchServiceEdition.GetName(): enumspb.INDEXED_VALUE_TYPE_INT,
	workflows.SearchStatus.GetName():         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}

// RegisterSearchAttributes adds the custom search attributes the namespace lacks. Workers starting
// together may race; whoever loses finds them there.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	ops := c.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range SearchAttributes {
		if _, ok := have.GetCustomAttributes()[name]; !ok {
			missing[name] = typ
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

// Serve runs a form-task worker until ctx ends: it registers the search attributes (waiting for Temporal
// to answer, so it can start before Temporal does), then runs the workflow and the activities over pool.
func Serve(ctx context.Context, c client.Client, pool *pgxpool.Pool, namespace string, opts Options, log *slog.Logger) error {
	for {
		err := RegisterSearchAttributes(ctx, c, namespace)
		if err == nil {
			break
		}
		log.Warn("temporal not ready; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
	acts, err := activities.New(pool)
	if err != nil {
		return err
	}
	defer acts.Schemas.Close()
	return Run(ctx, New(c, acts, opts), pool, log)
}

// Revisions that no workflow promoted within this age are deleted: their update was refused or never
// arrived.
const (
	staleRevisionAge   = 24 * time.Hour
	staleRevisionSweep = time.Hour
)

// Run runs w until ctx ends, and meanwhile deletes stale revisions.
func Run(ctx context.Context, w worker.Worker, pool *pgxpool.Pool, log *slog.Logger) error {
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop()
	log.Info("worker started", "task_queue", workflows.TaskQueue)
	tick := time.NewTicker(staleRevisionSweep)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			n, err := store.New(pool).DeleteStaleRevisions(ctx, staleRevisionAge)
			if err != nil {
				log.Warn("deleting stale revisions failed", "err", err)
			} else if n > 0 {
				log.Info("deleted stale revisions", "count", n)
			}
		}
	}
}
