// Package worker runs the form-task workflows and their activities. A process polls the task queues of
// the queue groups it is configured for (POSTBOX_WORKER_QUEUES), one SDK worker per queue, so each group
// scales on its own: run as many processes of each as the load needs, Temporal spreads the tasks over them.
//
//	group           task queue                    registered
//	formtask        formtask.TaskQueue            the FormTask and TrashbinPurge workflows and their local
//	                                              activities: CheckAndProject, CheckAndArchive, DiscardRevision,
//	                                              ChangePlace, ReadTaskState
//	validation      formtask.TaskQueueValidation  RenderPrint, RenderFormPrint (PDF rendering)
//	archive         formtask.TaskQueueArchive     PurgeTrashbin; the Retention and FilesSweep workflows and
//	                                              their activities (KeepPartitions, SweepBlobs, SweepObjects)
//	events          webhook.TaskQueue             the webhook Subscription workflow and its activities
//	correspondence  correspondence.TaskQueue      the Shipment, ScheduledPrefill and FormTaskDue workflows and
//	                                              their activities (CreateBatch, MarkOverdue, PurgeBatch,
//	                                              MarkTaskOverdue, CheckPrefill, CreatePrefilled, DropPrefill)
//	notification    notification.TaskQueue        the NotificationOrder workflow and its activities (SendBatch,
//	                                              GiveUp): e-mail over SMTP, SMS through the gateway
//
// formtask.ActivitiesOn says which activities run on which queue.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nexus-rpc/sdk-go/nexus"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/retention"
	"github.com/postbox/postbox/store"
)

// Options tune a worker process; zero values take the SDK's defaults.
type Options struct {
	// Queues are the queue groups to poll (config.QueueGroups); empty polls all of them.
	Queues []string
	// MaxConcurrentActivities bounds the activity executions of each queue's worker at once (XSD and PDF
	// work is CPU-bound: about the CPUs of the process for validation).
	MaxConcurrentActivities int
	// MaxConcurrentWorkflowTasks bounds the workflow tasks of the formtask worker at once.
	MaxConcurrentWorkflowTasks int
	// StopTimeout is how long running activities may finish once the worker stops polling.
	StopTimeout time.Duration
	// Deliveries are the webhook deliveries of the events group; without them the events group is not
	// polled unless named in Queues, which then panics.
	Deliveries *webhook.Deliveries
	// Correspondence are the shipments' activities of the correspondence group; without them that group
	// is not polled unless named in Queues, which then panics.
	Correspondence *correspondence.Activities
	// Notification are the notification orders' activities of the notification group, with the worker's
	// mail server and SMS gateway; without them that group is not polled unless named in Queues, which
	// then panics.
	Notification *notification.Activities
	// SMTP and SMS are the channels Serve gives Notification.
	SMTP notification.SMTPConfig
	SMS  notification.SMSConfig
	// PublicURL is the base URL of the API (config.PublicURL), under which the events of the activities'
	// changes name their resources.
	PublicURL string
	// Files holds the bytes of attachments and prints (the object store).
	Files *files.Service
}

// TaskQueueOf is the task queue of a queue group, "" for an unknown group.
func TaskQueueOf(group string) string {
	switch group {
	case config.QueueFormTask:
		return formtask.TaskQueue
	case config.QueueValidation:
		return formtask.TaskQueueValidation
	case config.QueueArchive:
		return formtask.TaskQueueArchive
	case config.QueueEvents:
		return webhook.TaskQueue
	case config.QueueCorrespondence:
		return correspondence.TaskQueue
	case config.QueueNotification:
		return notification.TaskQueue
	}
	return ""
}

// Workers are the SDK workers of one process, one per queue group. Registering an activity registers it
// on every one of them (tests use this to replace activities); a workflow goes to the formtask worker.
type Workers struct {
	list []queueWorker
	// deliveries run beside an events worker (Run): the listener and the supervisor.
	deliveries *webhook.Deliveries
	client     client.Client
}

type queueWorker struct {
	group, taskQueue string
	w                worker.Worker
}

var _ worker.Registry = (*Workers)(nil)

// New returns the workers of opts.Queues with the workflow and the activities of each group registered.
func New(c client.Client, acts *formtask.Activities, opts Options) *Workers {
	groups := opts.Queues
	if len(groups) == 0 {
		for _, g := range config.QueueGroups {
			if (g != config.QueueEvents || opts.Deliveries != nil) && (g != config.QueueCorrespondence || opts.Correspondence != nil) &&
				(g != config.QueueNotification || opts.Notification != nil) {
				groups = append(groups, g)
			}
		}
	}
	ws := &Workers{client: c}
	for _, g := range groups {
		tq := TaskQueueOf(g)
		if tq == "" {
			panic(fmt.Sprintf("worker: unknown queue group %q", g))
		}
		if g == config.QueueEvents {
			if opts.Deliveries == nil {
				panic("worker: the events group needs Options.Deliveries")
			}
			ws.deliveries = opts.Deliveries
		}
		if g == config.QueueCorrespondence && opts.Correspondence == nil {
			panic("worker: the correspondence group needs Options.Correspondence")
		}
		if g == config.QueueNotification && opts.Notification == nil {
			panic("worker: the notification group needs Options.Notification")
		}
		w := worker.New(c, tq, worker.Options{
			MaxConcurrentActivityExecutionSize:     opts.MaxConcurrentActivities,
			MaxConcurrentWorkflowTaskExecutionSize: opts.MaxConcurrentWorkflowTasks,
			WorkerStopTimeout:                      opts.StopTimeout,
			// Heartbeats reach the server at least this often, well within formtask.HeartbeatTimeout
			// (the SDK's own throttle would leave a fifth of it).
			MaxHeartbeatThrottleInterval: formtask.HeartbeatTimeout / 5,
		})
		register(w, g, acts, opts)
		ws.list = append(ws.list, queueWorker{group: g, taskQueue: tq, w: w})
	}
	return ws
}

func register(r worker.Registry, group string, acts *formtask.Activities, opts Options) {
	switch group {
	case config.QueueEvents:
		opts.Deliveries.Register(r)
		return
	case config.QueueCorrespondence:
		r.RegisterWorkflowWithOptions(correspondence.ShipmentWorkflow, workflow.RegisterOptions{Name: correspondence.WorkflowName})
		r.RegisterWorkflowWithOptions(correspondence.TaskDueWorkflow, workflow.RegisterOptions{Name: correspondence.TaskDueWorkflowName})
		r.RegisterWorkflowWithOptions(correspondence.PrefillWorkflow, workflow.RegisterOptions{Name: correspondence.PrefillWorkflowName})
		for _, fn := range opts.Correspondence.Steps() {
			r.RegisterActivity(fn)
		}
		return
	case config.QueueNotification:
		r.RegisterWorkflowWithOptions(notification.OrderWorkflow, workflow.RegisterOptions{Name: notification.WorkflowName})
		for _, fn := range opts.Notification.Steps() {
			r.RegisterActivity(fn)
		}
		return
	}
	if group == config.QueueFormTask {
		r.RegisterWorkflowWithOptions(formtask.FormTask, workflow.RegisterOptions{Name: "FormTask"})
		r.RegisterWorkflowWithOptions(formtask.TrashbinPurge, workflow.RegisterOptions{Name: formtask.TrashbinPurgeWorkflow})
	}
	if group == config.QueueArchive {
		r.RegisterWorkflowWithOptions(retention.Retention, workflow.RegisterOptions{Name: retention.WorkflowName})
		for _, fn := range (&retention.Activities{Pool: acts.Pool}).Activities() {
			r.RegisterActivity(fn)
		}
	}
	if group == config.QueueArchive && acts.Files != nil {
		r.RegisterWorkflowWithOptions(files.Sweep, workflow.RegisterOptions{Name: files.SweepWorkflowName})
		for _, fn := range acts.Files.Sweeper(acts.Pool).Activities() {
			r.RegisterActivity(fn)
		}
	}
	for _, fn := range formtask.ActivitiesOn(acts, TaskQueueOf(group)) {
		r.RegisterActivity(fn)
	}
}

// TaskQueues are the task queues the workers poll.
func (ws *Workers) TaskQueues() []string {
	var out []string
	for _, q := range ws.list {
		out = append(out, q.taskQueue)
	}
	return out
}

// Start starts every worker; if one fails, those started are stopped again.
func (ws *Workers) Start() error {
	for i, q := range ws.list {
		if err := q.w.Start(); err != nil {
			for _, started := range ws.list[:i] {
				started.w.Stop()
			}
			return fmt.Errorf("start worker of %s: %w", q.taskQueue, err)
		}
	}
	return nil
}

// Stop stops every worker at once: each stops polling, lets its running activities finish within
// Options.StopTimeout (then cancels them; Temporal retries them elsewhere) and returns. So the whole stop
// takes at most about StopTimeout.
func (ws *Workers) Stop() {
	var wg sync.WaitGroup
	for _, q := range ws.list {
		wg.Go(q.w.Stop)
	}
	wg.Wait()
}

func (ws *Workers) each(fn func(w worker.Worker)) {
	for _, q := range ws.list {
		fn(q.w)
	}
}

func (ws *Workers) hasGroup(group string) bool {
	return slices.ContainsFunc(ws.list, func(q queueWorker) bool { return q.group == group })
}

func (ws *Workers) workflowWorkers(fn func(w worker.Worker)) {
	for _, q := range ws.list {
		if q.group == config.QueueFormTask {
			fn(q.w)
		}
	}
}

// RegisterWorkflow registers a workflow on the formtask worker.
func (ws *Workers) RegisterWorkflow(w any) {
	ws.workflowWorkers(func(x worker.Worker) { x.RegisterWorkflow(w) })
}

// RegisterWorkflowWithOptions registers a workflow on the formtask worker.
func (ws *Workers) RegisterWorkflowWithOptions(w any, o workflow.RegisterOptions) {
	ws.workflowWorkers(func(x worker.Worker) { x.RegisterWorkflowWithOptions(w, o) })
}

// RegisterDynamicWorkflow registers a dynamic workflow on the formtask worker.
func (ws *Workers) RegisterDynamicWorkflow(w any, o workflow.DynamicRegisterOptions) {
	ws.workflowWorkers(func(x worker.Worker) { x.RegisterDynamicWorkflow(w, o) })
}

// RegisterActivity registers an activity on every worker.
func (ws *Workers) RegisterActivity(a any) { ws.each(func(x worker.Worker) { x.RegisterActivity(a) }) }

// RegisterActivityWithOptions registers an activity on every worker.
func (ws *Workers) RegisterActivityWithOptions(a any, o activity.RegisterOptions) {
	ws.each(func(x worker.Worker) { x.RegisterActivityWithOptions(a, o) })
}

// RegisterDynamicActivity registers a dynamic activity on every worker.
func (ws *Workers) RegisterDynamicActivity(a any, o activity.DynamicRegisterOptions) {
	ws.each(func(x worker.Worker) { x.RegisterDynamicActivity(a, o) })
}

// RegisterNexusService registers a Nexus service on the formtask worker.
func (ws *Workers) RegisterNexusService(s *nexus.Service) {
	ws.workflowWorkers(func(x worker.Worker) { x.RegisterNexusService(s) })
}

// SearchAttributes are the custom search attributes of form-task workflows and their types.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	formtask.SearchReportee.GetName():       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	formtask.SearchServiceCode.GetName():    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	formtask.SearchServiceEdition.GetName(): enumspb.INDEXED_VALUE_TYPE_INT,
	formtask.SearchStatus.GetName():         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
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

// Serve runs the workers of opts.Queues until ctx ends: the workflow and the activities over pool. The
// search attributes must be registered (RegisterSearchAttributes; postbox worker waits for Temporal to do
// it). On stop it stops polling and lets running activities finish within opts.StopTimeout.
func Serve(ctx context.Context, c client.Client, pool *pgxpool.Pool, opts Options, webhooks webhook.Options, log *slog.Logger) error {
	acts, err := formtask.NewActivities(pool, opts.Files)
	if err != nil {
		return err
	}
	acts.Events, acts.PublicURL = events.NewBuilder(opts.PublicURL), opts.PublicURL
	defer acts.Schemas.Close()
	if slices.Contains(opts.Queues, config.QueueEvents) || len(opts.Queues) == 0 {
		opts.Deliveries = webhook.NewDeliveries(pool, webhooks, log)
	}
	acts.FormTasks = formtask.New(c, store.New(pool), formtask.Options{PublicURL: opts.PublicURL, Files: opts.Files})
	opts.Correspondence = &correspondence.Activities{Pool: pool, Events: acts.Events, Forms: acts, FormTasks: acts.FormTasks}
	if opts.Notification, err = notification.NewActivities(pool, opts.PublicURL, opts.SMTP, opts.SMS); err != nil {
		return err
	}
	if opts.Notification.Mailer != nil {
		defer opts.Notification.Mailer.Close()
	}
	return Run(ctx, New(c, acts, opts), pool, log)
}

// Revisions that no workflow promoted within StaleRevisionAge are deleted, when a worker starts and then
// every StaleRevisionSweep: their request died between storing them and its Update, or the Update was
// refused and its own deletion failed. So such a revision lingers at most StaleRevisionAge +
// StaleRevisionSweep while a worker runs. The sweep is a ticker in every worker process rather than a
// Temporal schedule: it is one idempotent DELETE in PostgreSQL, so processes sweeping at once do no harm,
// it needs no durable timer, and it goes on while Temporal is away.
const (
	StaleRevisionAge   = 24 * time.Hour
	StaleRevisionSweep = time.Hour
)

// Run runs ws until ctx ends, and meanwhile deletes stale revisions and expired idempotent answers; beside
// a formtask worker it confirms archives (ConfirmArchives), beside an events worker it runs the deliveries'
// listener and supervisor.
func Run(ctx context.Context, ws *Workers, pool *pgxpool.Pool, log *slog.Logger) error {
	if err := ws.Start(); err != nil {
		return err
	}
	log.Info("worker started", "task_queues", ws.TaskQueues())
	if ws.deliveries != nil {
		deliveriesCtx, stopDeliveries := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			ws.deliveries.Run(deliveriesCtx, ws.client, log)
		}()
		defer func() { stopDeliveries(); <-done }()
	}
	if ws.hasGroup(config.QueueFormTask) {
		confirmCtx, stopConfirming := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			formtask.SweepArchives(confirmCtx, ws.client, pool, log)
		}()
		defer func() { stopConfirming(); <-done }()
	}
	defer func() {
		log.Info("worker stopping: no new tasks; running activities may finish")
		ws.Stop()
		log.Info("worker stopped")
	}()
	tick := time.NewTicker(StaleRevisionSweep)
	defer tick.Stop()
	for {
		n, err := formtask.NewStore(store.New(pool)).DeleteStaleRevisions(ctx, StaleRevisionAge)
		if err != nil && ctx.Err() == nil {
			log.Warn("deleting stale revisions failed", "err", err)
		} else if n > 0 {
			log.Info("deleted stale revisions", "count", n)
		}
		// The answers kept for Idempotency-Keys expire too (the API also ignores an expired one).
		if n, err := store.New(pool).DeleteExpiredIdempotentResponses(ctx); err != nil && ctx.Err() == nil {
			log.Warn("deleting expired idempotent answers failed", "err", err)
		} else if n > 0 {
			log.Info("deleted expired idempotent answers", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
