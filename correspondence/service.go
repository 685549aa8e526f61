package correspondence

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
)

// MaxPage is the most recipients a page of a shipment's status holds.
const MaxPage = 1_000

// Service sends correspondence for the service owners.
type Service struct {
	pool     *pgxpool.Pool
	files    *files.Service
	temporal client.Client // nil: sending answers Unavailable
	events   events.Builder
	tasks    *formtask.Service // creates pre-filled form tasks
	notices  *notification.Service
	// MaxRecipients is the most recipients one Send takes (MaxRecipients unless changed before use).
	MaxRecipients int
}

// New returns the service over pool, starting shipments' workflows with tc, creating pre-filled form
// tasks with tasks and taking the notification orders that come with either with notices; events are
// written with eb.
func New(pool *pgxpool.Pool, fs *files.Service, tc client.Client, eb events.Builder, tasks *formtask.Service, notices *notification.Service) *Service {
	return &Service{pool: pool, files: fs, temporal: tc, events: eb, tasks: tasks, notices: notices, MaxRecipients: MaxRecipients}
}

// name is how the actor appears as a message's LastChangedBy: the service owner's name.
func (a Actor) name() string { return a.ServiceOwnerName }

// Send accepts s from the service owner of a: it checks every field, refuses the recipients that cannot
// receive it (reported in the answer; nothing is made for them), and starts the shipment's workflow,
// which makes the messages of the others. It returns a refusal when the request breaks a rule or no
// recipient is left.
func (s *Service) Send(ctx context.Context, a Actor, req Send) (Accepted, error) {
	now := clock.Now()
	req, err := check(req, now, s.MaxRecipients)
	if err != nil {
		return Accepted{}, err
	}
	owner, serviceType, err := serviceOwnerOf(ctx, s.pool, req.ServiceCode, req.ServiceEdition)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Accepted{}, refuse(BadInput, "there is no service %s edition %d", req.ServiceCode, req.ServiceEdition)
	case err != nil:
		return Accepted{}, err
	case owner != a.ServiceOwner:
		return Accepted{}, refuse(NotOwned, "service %s edition %d is not one of yours", req.ServiceCode, req.ServiceEdition)
	case serviceType != store.TypeCorrespondence:
		return Accepted{}, refuse(BadInput, "service %s edition %d is a %s service; send correspondence of a Correspondence service",
			req.ServiceCode, req.ServiceEdition, serviceType)
	}
	if req.IdempotentKey != "" {
		if first, err := sentBefore(ctx, s.pool, a.ServiceOwner, req.IdempotentKey); !errors.Is(err, pgx.ErrNoRows) {
			return first, err
		}
	}
	if err := resolveUploads(ctx, s.pool, a.ServiceOwner, req.Attachments); err != nil {
		return Accepted{}, err
	}
	outcomes := screen(req.Recipients)
	parties, err := lookUpParties(ctx, s.pool, outcomes)
	if err != nil {
		return Accepted{}, err
	}
	refused := refusals(outcomes)
	if refused == len(outcomes) {
		return Accepted{}, refuse(NoRecipient, "none of the %d recipients can receive it (%s)", len(outcomes), countReasons(outcomes))
	}
	if req.Notification != nil {
		order, err := s.notices.Check(*req.Notification, len(outcomes)-refused == 1)
		if err != nil {
			return Accepted{}, err
		}
		req.Notification = &order
	}
	if s.temporal == nil {
		return Accepted{}, refuse(Unavailable, "correspondence cannot be sent right now; try again shortly")
	}
	if err := s.saveInline(ctx, req.Attachments); err != nil {
		return Accepted{}, err
	}
	id, orderID := uuid.NewString(), ""
	in := WorkflowInput{ShipmentID: id, ConfirmationNeeded: req.IsConfirmationNeeded}
	if req.VisibleAt != nil {
		in.VisibleAt = clock.Instant(*req.VisibleAt)
	}
	if req.DueAt != nil {
		in.DueAt = clock.Instant(*req.DueAt)
	}
	if req.AllowSystemDeleteAt != nil {
		in.AllowSystemDeleteAt = clock.Instant(*req.AllowSystemDeleteAt)
	}
	// The workflow starts inside the transaction: if it cannot start nothing is stored, and if the commit
	// then fails the workflow finds no shipment and ends (CreateBatch).
	err = store.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := insertShipment(ctx, tx, id, req, a, now, outcomes, parties); err != nil {
			return err
		}
		if req.Notification != nil {
			target := notification.Target{ShipmentID: id}
			for i, o := range outcomes {
				if o.Refused == "" {
					target.Messages = append(target.Messages, notification.TargetMessage{MessageID: o.MessageID, PartyID: parties[i]})
				}
			}
			var err error
			if orderID, err = notification.PlaceTx(ctx, tx, a.ServiceOwner, a.name(), *req.Notification, target); err != nil {
				return err
			}
			order := notification.Input(orderID, *req.Notification, len(target.Messages))
			in.Notification = &order
		}
		_, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowID(id), TaskQueue: TaskQueue,
			Memo: map[string]any{"ServiceOwner": a.ServiceOwner, "Service": fmt.Sprintf("%s/%d", req.ServiceCode, req.ServiceEdition)}},
			WorkflowName, in)
		if err != nil && ctx.Err() == nil {
			return &Error{Kind: Unavailable, Detail: "correspondence cannot be sent right now; try again shortly", Err: err}
		}
		return err
	})
	if isDuplicateKey(err) { // the same key sent at the same time: the other send won
		return sentBefore(ctx, s.pool, a.ServiceOwner, req.IdempotentKey)
	}
	if err != nil {
		return Accepted{}, err
	}
	return Accepted{ShipmentID: id, Outcomes: outcomes, NotificationOrderID: orderID}, nil
}

func isDuplicateKey(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "shipments_idempotent_key"
}

func refusals(outcomes []Outcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Refused != "" {
			n++
		}
	}
	return n
}

// countReasons says how many recipients were refused for each reason, e.g. "2 unknown, 1 malformed".
func countReasons(outcomes []Outcome) string {
	counts := map[string]int{}
	for _, o := range outcomes {
		counts[o.Refused]++
	}
	var out []byte
	for _, r := range []string{RefusedMalformed, RefusedUnknown, RefusedDeleted, RefusedDuplicate} {
		if counts[r] > 0 {
			if len(out) > 0 {
				out = append(out, ", "...)
			}
			out = fmt.Appendf(out, "%d %s", counts[r], r)
		}
	}
	return string(out)
}

var shipmentIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Shipment returns shipment id of owner with its counts.
func (s *Service) Shipment(ctx context.Context, owner, id string) (Shipment, error) {
	if !shipmentIDPattern.MatchString(id) {
		return Shipment{}, ErrNotFound
	}
	return getShipment(ctx, s.pool, owner, id)
}

// Recipients returns shipment id of owner with up to limit (at most MaxPage) of its recipients in state
// ("" for all) after the ordinal after, and whether more follow.
func (s *Service) Recipients(ctx context.Context, owner, id, state string, after, limit int) (Shipment, []RecipientStatus, bool, error) {
	if _, known := stateSQL[state]; state != "" && !known {
		return Shipment{}, nil, false, refuse(BadInput, "state is one of %v", States)
	}
	sh, err := s.Shipment(ctx, owner, id)
	if err != nil {
		return sh, nil, false, err
	}
	list, more, err := listRecipients(ctx, s.pool, sh.ID, state, after, min(max(limit, 1), MaxPage))
	return sh, list, more, err
}

var messageIDPattern = regexp.MustCompile(`^a[0-9]{1,18}$`)

// Retract takes back message id of one of the owner's shipments that its recipient has not opened: a
// message still waiting for its VisibleDateTime is never made; one in the mailbox is deleted for good,
// with its audit line and the CorrespondenceRetracted event. A message once read is refused AlreadyRead.
func (s *Service) Retract(ctx context.Context, a Actor, id string) error {
	if !messageIDPattern.MatchString(id) {
		return ErrNotFound
	}
	at := clock.Now()
	return store.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		m, err := lockSent(ctx, tx, a.ServiceOwner, id)
		switch {
		case err != nil:
			return err
		case !m.Created:
			return markRetracted(ctx, tx, id, at)
		case m.Read:
			return refuse(AlreadyRead, "message %s has been opened by its recipient; a message once read cannot be retracted", id)
		}
		q := store.New(tx)
		if err := q.PurgeMessage(ctx, id, at); err != nil {
			return err
		}
		entry := audit.Entry{At: at, ReporteeID: m.ReporteeID, ActorName: a.ServiceOwnerName, ActorMethod: a.AuthMethod,
			APIKeyName: a.APIKeyName, RequestID: a.RequestID, Action: store.AuditRetract,
			Summary: fmt.Sprintf("Retracted by its sender %s before it was read", a.ServiceOwnerName)}
		if err := q.AppendMessageAudit(ctx, store.MessageAuditEntry{Entry: entry, MessageID: id}); err != nil {
			return err
		}
		if err := markRetracted(ctx, tx, id, at); err != nil {
			return err
		}
		return q.AppendEvents(ctx, s.events.MessageEvent(events.CorrespondenceRetracted, eventMessage(m.made)))
	})
}

// eventMessage is the data of the events of message m.
func eventMessage(m made) events.Message {
	return events.Message{MessageID: m.ID, ReporteeID: m.ReporteeID, Type: store.TypeCorrespondence,
		ServiceCode: m.Service.Code, ServiceEdition: m.Service.Edition, Status: m.Status}
}
