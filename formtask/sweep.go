package formtask

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/internal/every"
	"github.com/postbox/postbox/store"
)

// A submission's archive commits in the workflow task of its update (CheckAndArchive), before Temporal has
// recorded the update; a Temporal restart in between loses the update, and the workflow would wait for
// good. Every archive is therefore noted as unconfirmed (store.UnconfirmedArchives), and a sweep in the
// formtask workers makes each workflow still running once its archive is ArchiveConfirmAge old take its
// state from the read model (UpdateResync): by then a workflow that recorded its update has
// ended (a worker dying in the archive costs the workflow task's timeout, 10 s). The sweep is a ticker in
// every formtask worker process, like the stale revisions': sweeps at once tell a workflow twice at worst,
// and the second is refused without a trace.
const (
	ArchiveConfirmAge   = 20 * time.Second
	ArchiveConfirmSweep = 10 * time.Second
	archiveConfirmBatch = 100
	// archiveTellTimeout bounds the wait for one workflow, so that one that cannot take its update now
	// does not hold up the others; it is told again at the next sweep.
	archiveTellTimeout = 10 * time.Second
)

// messageIDPattern is the form of a message id (the messages_id check), which the visibility query quotes.
var messageIDPattern = regexp.MustCompile(`^a[0-9]+$`)

// ConfirmArchives makes the workflows still running after their task's archive, committed at least minAge
// ago, take their state from the read model (UpdateResync), which ends them, and confirms each
// archive whose workflow now runs no more. It returns how many workflows it told. An archive whose workflow
// it cannot reach stays unconfirmed for the next sweep.
func ConfirmArchives(ctx context.Context, c client.Client, q Store, minAge time.Duration, log *slog.Logger) (told int, err error) {
	for {
		batch, err := q.UnconfirmedArchives(ctx, minAge, archiveConfirmBatch)
		if err != nil || len(batch) == 0 {
			return told, err
		}
		running, err := runningTasks(ctx, c, batch)
		if err != nil {
			return told, err
		}
		var confirmed []string
		for _, id := range batch {
			if running[id] {
				t, err := resync(ctx, c, id)
				if err != nil {
					log.Warn("telling a form task's workflow of its archive failed; it is told again at the next sweep",
						"message_id", id, "err", err)
					continue
				}
				if t {
					told++
				}
			}
			confirmed = append(confirmed, id)
		}
		if err := q.ConfirmArchives(ctx, confirmed); err != nil {
			return told, err
		}
		if len(confirmed) < len(batch) || len(batch) < archiveConfirmBatch {
			return told, nil
		}
	}
}

// runningTasks returns those of messageIDs whose workflows run, by one visibility query.
func runningTasks(ctx context.Context, c client.Client, messageIDs []string) (map[string]bool, error) {
	var ids []string
	for _, id := range messageIDs {
		if messageIDPattern.MatchString(id) {
			ids = append(ids, "'"+WorkflowID(id)+"'")
		}
	}
	running := map[string]bool{}
	if len(ids) == 0 {
		return running, nil
	}
	query := fmt.Sprintf("WorkflowId IN (%s) AND ExecutionStatus = 'Running'", strings.Join(ids, ", "))
	var next []byte
	for {
		res, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, PageSize: int32(len(ids)), NextPageToken: next})
		if err != nil {
			return nil, fmt.Errorf("list the running workflows of unconfirmed archives: %w", err)
		}
		for _, e := range res.Executions {
			running[strings.TrimPrefix(e.GetExecution().GetWorkflowId(), WorkflowIDPrefix)] = true
		}
		if next = res.NextPageToken; len(next) == 0 {
			return running, nil
		}
	}
}

// resync makes a running workflow take its task's state from the read model; it says whether the workflow
// learnt of its archive so. A workflow that ended meanwhile, or knows of its archive, needs no telling.
func resync(ctx context.Context, c client.Client, messageID string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, archiveTellTimeout)
	defer cancel()
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   WorkflowID(messageID),
		UpdateName:   UpdateResync,
		Args:         []any{ResyncInput{}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var res Result
	if err == nil {
		err = h.Get(ctx, &res)
	}
	var (
		notFound *serviceerror.NotFound
		app      *temporal.ApplicationError
	)
	switch {
	case err == nil:
		return res.Outcome == OutcomeResynced, nil
	case errors.As(err, &notFound):
		return false, nil
	case errors.As(err, &app) && (app.Type() == ErrTaskArchived || app.Type() == ErrPurged):
		return false, nil
	}
	return false, err
}

// SweepArchives confirms archives (ConfirmArchives) every ArchiveConfirmSweep until ctx ends; the formtask
// workers run it.
func SweepArchives(ctx context.Context, c client.Client, pool *pgxpool.Pool, log *slog.Logger) {
	every.Tick(ctx, ArchiveConfirmSweep, func() bool {
		told, err := ConfirmArchives(ctx, c, NewStore(store.New(pool)), ArchiveConfirmAge, log)
		if err != nil && ctx.Err() == nil {
			log.Warn("confirming archives failed; trying again at the next sweep", "err", err)
		}
		if told > 0 {
			log.Warn("told form-task workflows of archives their updates lost", "count", told)
		}
		return true
	})
}
