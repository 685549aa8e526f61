package correspondence

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
)

// A pre-fill with a VisibleDateTime in the future is not in the mailbox until then. The request stores it
// under a reserved message id (scheduled_prefills, with its notification order placed but not started)
// and starts its PrefillWorkflow with an Update that validates its forms (CheckPrefill), so the owner
// hears at once whether they pass; refused forms leave nothing. The workflow then sleeps until
// VisibleDateTime, creates the task under the reserved id (CreatePrefilled), and starts the task's
// notification order and due timer.

// PrefillWorkflowIDPrefix starts the id of a scheduled pre-fill's workflow; the message id follows.
const PrefillWorkflowIDPrefix = "prefill/"

// PrefillWorkflowName is the registered name of PrefillWorkflow.
const PrefillWorkflowName = "ScheduledPrefill"

// UpdateCheckPrefill is the Update that validates a scheduled pre-fill's forms; it answers formtask.Findings.
const UpdateCheckPrefill = "check"

// PrefillInput is what a scheduled pre-fill's workflow starts with: ids and instants, never content.
type PrefillInput struct {
	MessageID string
	VisibleAt time.Time
	DueAt     time.Time // zero: no due date
	// Notification is the workflow input of the task's notification order, started once the task exists.
	Notification *notification.WorkflowInput
}

// PrefillOutcome is what CreatePrefilled did: created the task (or found it created by an attempt before
// a crash), or nothing, Failure saying why when the task could not be created.
type PrefillOutcome struct {
	Created bool
	Failure string
}

// noPrefillType is the type of the error CheckPrefill answers for a pre-fill that is not stored.
const noPrefillType = "NoPrefill"

// schedulePrefill stores p, checked, for creation at p.VisibleAt under a message id reserved for it, and
// validates its forms before it answers: refused forms answer a formtask Invalid refusal and leave nothing.
func (s *Service) schedulePrefill(ctx context.Context, a Actor, reporteeID int64, p Prefill) (Prefilled, error) {
	forms, err := json.Marshal(p.Forms)
	if err != nil {
		return Prefilled{}, err
	}
	attachments, err := json.Marshal(p.Attachments)
	if err != nil {
		return Prefilled{}, err
	}
	in := PrefillInput{VisibleAt: clock.Instant(*p.VisibleAt)}
	if p.DueAt != nil {
		in.DueAt = clock.Instant(*p.DueAt)
	}
	var orderID *string
	err = store.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT 'a' || nextval('message_id_seq')`).Scan(&in.MessageID); err != nil {
			return err
		}
		if p.Notification != nil {
			o := *p.Notification
			if o.SendAt == nil || o.SendAt.Before(*p.VisibleAt) { // no notice about a task not yet there
				o.SendAt = p.VisibleAt
			}
			id, err := notification.PlaceTx(ctx, tx, a.ServiceOwner, a.name(), o,
				notification.Target{Messages: []notification.TargetMessage{{MessageID: in.MessageID, PartyID: reporteeID}}})
			if err != nil {
				return err
			}
			w := notification.Input(id, o, 1)
			in.Notification, orderID = &w, &id
		}
		_, err := tx.Exec(ctx, `INSERT INTO scheduled_prefills (message_id, service_owner_code, service_owner_name, reportee_id,
				service_code, service_edition, subject, due_at, visible_at, forms, attachments, notification_order, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			in.MessageID, a.ServiceOwner, a.ServiceOwnerName, reporteeID, p.Service.ServiceCode, p.Service.ServiceEdition,
			p.Subject, p.DueAt, *p.VisibleAt, forms, attachments, orderID, clock.Now())
		return err
	})
	if err != nil {
		return Prefilled{}, err
	}
	findings, err := s.checkPrefill(ctx, a, in)
	if err != nil {
		// The workflow, if it started, finds nothing to create and ends.
		if dropErr := dropPrefill(context.WithoutCancel(ctx), s.pool, in.MessageID); dropErr != nil {
			err = errors.Join(err, dropErr)
		}
		return Prefilled{}, &Error{Kind: Unavailable, Detail: "form tasks cannot be scheduled right now; try again shortly", Err: err}
	}
	if len(findings.Errors) > 0 { // CheckPrefill dropped it
		result := findings.Result()
		return Prefilled{}, &formtask.Error{Kind: formtask.Invalid, Detail: "the pre-filled forms did not pass validation; nothing was stored",
			Validation: &result}
	}
	done := Prefilled{MessageID: in.MessageID, VisibleAt: p.VisibleAt}
	if orderID != nil {
		done.NotificationOrderID = *orderID
	}
	return done, nil
}

// checkPrefill starts the workflow of scheduled pre-fill in with the Update that validates its forms, and
// waits for the findings.
func (s *Service) checkPrefill(ctx context.Context, a Actor, in PrefillInput) (formtask.Findings, error) {
	start := s.temporal.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: PrefillWorkflowIDPrefix + in.MessageID,
		TaskQueue: TaskQueue, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		Memo: map[string]any{"ServiceOwner": a.ServiceOwner, "Message": in.MessageID}}, PrefillWorkflowName, in)
	h, err := s.temporal.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateID: in.MessageID, UpdateName: UpdateCheckPrefill,
			WaitForStage: client.WorkflowUpdateStageCompleted}})
	var findings formtask.Findings
	if err == nil {
		err = h.Get(ctx, &findings)
	}
	return findings, err
}

// CheckPrefill validates the forms of scheduled pre-fill messageID as a submission's are validated. Forms
// that fail drop the pre-fill before the findings are answered, so the refused request leaves nothing.
func (a *Activities) CheckPrefill(ctx context.Context, messageID string) (formtask.Findings, error) {
	sp, err := loadScheduledPrefill(ctx, a.Pool, messageID)
	if errors.Is(err, pgx.ErrNoRows) {
		return formtask.Findings{}, temporal.NewNonRetryableApplicationError("the pre-fill is not stored", noPrefillType, err)
	}
	if err != nil {
		return formtask.Findings{}, err
	}
	svc, err := store.New(a.Pool).GetService(ctx, sp.serviceCode, sp.serviceEdition)
	if err != nil {
		return formtask.Findings{}, err
	}
	findings, err := a.Forms.CheckForms(ctx, svc, sp.prefill.Forms)
	if err == nil && len(findings.Errors) > 0 {
		err = dropPrefill(ctx, a.Pool, messageID)
	}
	return findings, err
}

// CreatePrefilled creates the task of scheduled pre-fill messageID under its reserved id. A task the
// service no longer takes, or whose content is refused now, is not created: the pre-fill keeps why, and
// its notification order goes.
func (a *Activities) CreatePrefilled(ctx context.Context, messageID string) (PrefillOutcome, error) {
	sp, err := loadScheduledPrefill(ctx, a.Pool, messageID)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // created by an attempt before this one, or dropped
		exists, err := messageExists(ctx, a.Pool, messageID)
		return PrefillOutcome{Created: exists}, err
	case err != nil:
		return PrefillOutcome{}, err
	case sp.failure != "":
		return PrefillOutcome{Failure: sp.failure}, nil
	}
	err = a.createScheduled(ctx, sp)
	var refused *formtask.Error
	if errors.As(err, &refused) && refused.Kind != formtask.Unavailable {
		return PrefillOutcome{Failure: refused.Detail}, failPrefill(ctx, a.Pool, messageID, refused.Detail)
	}
	if err != nil {
		return PrefillOutcome{}, err
	}
	_, err = a.Pool.Exec(ctx, `DELETE FROM scheduled_prefills WHERE message_id = $1`, messageID)
	return PrefillOutcome{Created: true}, err
}

// createScheduled creates sp's task; an attempt before this one may have created it (then its content is
// submitted if it is not there yet).
func (a *Activities) createScheduled(ctx context.Context, sp scheduledPrefill) error {
	svc, err := store.New(a.Pool).GetService(ctx, sp.serviceCode, sp.serviceEdition)
	if errors.Is(err, store.ErrNotFound) {
		return &formtask.Error{Kind: formtask.BadInput, Detail: "the service edition is gone"}
	}
	if err != nil {
		return err
	}
	if err := formtask.ServiceOpen(svc, clock.Now()); err != nil {
		return err
	}
	sp.prefill.Service = svc
	task, err := a.FormTasks.Load(ctx, sp.messageID)
	if missing := (*formtask.Error)(nil); errors.As(err, &missing) && missing.Kind == formtask.NotFound {
		_, err = createPrefilled(ctx, a.FormTasks, sp.actor, sp.reporteeID, sp.prefill, sp.messageID)
		return err
	}
	if err != nil {
		return err
	}
	var hasForms bool
	if err := a.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM forms WHERE message_id = $1)`, sp.messageID).Scan(&hasForms); err != nil || hasForms {
		return err
	}
	_, err = a.FormTasks.Submit(ctx, task, ownerCaller(sp.actor), formtask.Submission{Forms: sp.prefill.Forms, Attachments: sp.prefill.Attachments})
	return err
}

// DropPrefill removes scheduled pre-fill messageID and its notification order, if they are still there.
func (a *Activities) DropPrefill(ctx context.Context, messageID string) error {
	return dropPrefill(ctx, a.Pool, messageID)
}

// scheduledPrefill is a row of scheduled_prefills.
type scheduledPrefill struct {
	messageID      string
	actor          Actor
	reporteeID     int64
	serviceCode    string
	serviceEdition int
	prefill        Prefill // without its Service, Reportee and Notification
	failure        string
}

func loadScheduledPrefill(ctx context.Context, db store.DBTX, messageID string) (scheduledPrefill, error) {
	sp := scheduledPrefill{messageID: messageID}
	var forms, attachments []byte
	err := db.QueryRow(ctx, `SELECT service_owner_code, service_owner_name, reportee_id, service_code, service_edition, subject,
			due_at, forms, attachments, COALESCE(failure, '')
		FROM scheduled_prefills WHERE message_id = $1`, messageID).Scan(&sp.actor.ServiceOwner, &sp.actor.ServiceOwnerName,
		&sp.reporteeID, &sp.serviceCode, &sp.serviceEdition, &sp.prefill.Subject, &sp.prefill.DueAt, &forms, &attachments, &sp.failure)
	if err != nil {
		return sp, err
	}
	if err := json.Unmarshal(forms, &sp.prefill.Forms); err != nil {
		return sp, err
	}
	return sp, json.Unmarshal(attachments, &sp.prefill.Attachments)
}

// dropPrefill deletes scheduled pre-fill messageID with its notification order, in one transaction.
func dropPrefill(ctx context.Context, db *pgxpool.Pool, messageID string) error {
	return store.InTx(ctx, db, func(tx pgx.Tx) error {
		var order *string
		err := tx.QueryRow(ctx, `DELETE FROM scheduled_prefills WHERE message_id = $1 RETURNING notification_order`, messageID).Scan(&order)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && order == nil) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM notification_orders WHERE id = $1`, *order)
		return err
	})
}

// failPrefill records why scheduled pre-fill messageID could not be created, and deletes its notification
// order (never started), in one transaction.
func failPrefill(ctx context.Context, db *pgxpool.Pool, messageID, why string) error {
	return store.InTx(ctx, db, func(tx pgx.Tx) error {
		var order *string
		err := tx.QueryRow(ctx, `UPDATE scheduled_prefills p SET failure = $2, notification_order = NULL
			FROM scheduled_prefills old WHERE p.message_id = $1 AND old.message_id = p.message_id
			RETURNING old.notification_order`, messageID, why).Scan(&order)
		if err != nil || order == nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM notification_orders WHERE id = $1`, *order)
		return err
	})
}

func messageExists(ctx context.Context, db store.DBTX, messageID string) (bool, error) {
	var exists bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT FROM messages WHERE id = $1)`, messageID).Scan(&exists)
	return exists, err
}
