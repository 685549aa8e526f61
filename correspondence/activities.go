package correspondence

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

// Activities are the steps of the shipment and scheduled pre-fill workflows, over the database.
type Activities struct {
	Pool   *pgxpool.Pool
	Events events.Builder
	// Forms validates a scheduled pre-fill's forms against their schemas (CheckPrefill).
	Forms *formtask.Activities
	// FormTasks creates a scheduled pre-fill's task at its VisibleDateTime (CreatePrefilled).
	FormTasks *formtask.Service
}

// Steps are the activities to register, each under its method's name.
func (a *Activities) Steps() []any {
	return []any{a.CreateBatch, a.MarkOverdue, a.PurgeBatch, a.MarkTaskOverdue, a.CheckPrefill, a.CreatePrefilled, a.DropPrefill}
}

// BatchInput names the shipment of a CreateBatch, the recipient after which it goes on (the Last of the
// batch before), and when its workflow started.
type BatchInput struct {
	ShipmentID string
	After      int
	StartedAt  time.Time
}

// BatchResult is how many messages a CreateBatch made, and the ordinal of the last recipient it took.
type BatchResult struct{ Created, Last int }

// noShipmentPatience is how long CreateBatch waits for the shipment's row after its workflow started:
// the request commits it moments after the start, so a row missing for longer was never committed.
const noShipmentPatience = time.Minute

// noShipmentType is the type of the error that ends a workflow whose shipment was never stored.
const noShipmentType = "NoShipment"

func isNoShipment(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == noShipmentType
}

// CreateBatch makes the messages of up to BatchSize recipients of the shipment that have none yet, each
// with its CorrespondencePublished event, in one transaction.
func (a *Activities) CreateBatch(ctx context.Context, in BatchInput) (BatchResult, error) {
	var res BatchResult
	err := store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		list, last, err := createBatch(ctx, tx, in.ShipmentID, in.After, BatchSize, clock.Now())
		if err != nil {
			return err
		}
		res = BatchResult{Created: len(list), Last: last}
		evs := make([]store.Event, len(list))
		for i, m := range list {
			evs[i] = a.Events.MessageEvent(events.CorrespondencePublished, eventMessage(m))
		}
		return store.New(tx).AppendEvents(ctx, evs...)
	})
	if errors.Is(err, errNoShipment) && time.Since(in.StartedAt) > noShipmentPatience {
		return BatchResult{}, temporal.NewNonRetryableApplicationError("the shipment was never stored", noShipmentType, err)
	}
	return res, err
}

// MarkOverdue writes CorrespondenceOverdue for every message of the shipment that still waits for its
// confirmation, once: each message records it in the same transaction.
func (a *Activities) MarkOverdue(ctx context.Context, shipmentID string) error {
	return store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		list, err := markUnconfirmedOverdue(ctx, tx, shipmentID, clock.Now())
		if err != nil {
			return err
		}
		evs := make([]store.Event, len(list))
		for i, m := range list {
			evs[i] = a.Events.MessageEvent(events.CorrespondenceOverdue, eventMessage(m))
		}
		return store.New(tx).AppendEvents(ctx, evs...)
	})
}

// PurgeBatch deletes for good up to BatchSize messages of the shipment at its AllowSystemDeleteDateTime,
// each with its audit line and MessagePurged event, and returns how many.
func (a *Activities) PurgeBatch(ctx context.Context, shipmentID string) (int, error) {
	var n int
	err := store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		list, err := purgeBatch(ctx, tx, shipmentID, BatchSize, clock.Now(), "Postbox")
		if err != nil {
			return err
		}
		n = len(list)
		evs := make([]store.Event, len(list))
		for i, m := range list {
			evs[i] = a.Events.MessageEvent(events.MessagePurged, eventMessage(m))
		}
		return store.New(tx).AppendEvents(ctx, evs...)
	})
	return n, err
}

// MarkTaskOverdue writes FormTaskOverdue for a pre-filled form task that has not been submitted by its due
// date, once: the message records it in the same transaction.
func (a *Activities) MarkTaskOverdue(ctx context.Context, messageID string) error {
	return store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		m, found, err := markTaskOverdue(ctx, tx, messageID, clock.Now())
		if err != nil || !found {
			return err
		}
		return store.New(tx).AppendEvents(ctx, a.Events.MessageEvent(events.FormTaskOverdue, events.Message{MessageID: m.ID,
			ReporteeID: m.ReporteeID, Type: store.TypeFormTask, ServiceCode: m.Service.Code, ServiceEdition: m.Service.Edition, Status: m.Status}))
	})
}
