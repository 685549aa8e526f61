package notification

import (
	"context"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/store"
)

// MaxPage is the most recipients a page of an order's status holds.
const MaxPage = 1_000

// Service takes notification orders from the service owners.
type Service struct {
	pool       *pgxpool.Pool
	temporal   client.Client // nil: orders answer Unavailable
	configured Configured
}

// New returns the service over pool, starting orders' workflows with tc; conf says which channels the
// workers send on.
func New(pool *pgxpool.Pool, tc client.Client, conf Configured) *Service {
	return &Service{pool: pool, temporal: tc, configured: conf}
}

// Check returns o with its defaults and settled channel, or the refusal naming its first fault; single
// tells whether it is for one message. A sender checks an order before it stores anything.
func (s *Service) Check(o Order, single bool) (Order, error) {
	return check(o, s.configured, clock.Now(), single)
}

// Input is the workflow input of checked order id for messages: its first round at SendAt (or at once).
func Input(id string, o Order, messages int) WorkflowInput {
	in := WorkflowInput{OrderID: id, Recipients: messages, Reminders: o.Reminders,
		ReminderEvery: time.Duration(o.ReminderDays) * 24 * time.Hour}
	if o.SendAt != nil {
		in.SendAt = clock.Instant(*o.SendAt)
	}
	return in
}

// PlaceTx stores checked order o of owner for t in tx, without starting its workflow: the sender starts
// it (a shipment's, as a child, once its messages exist). It returns the order's id.
func PlaceTx(ctx context.Context, tx pgx.Tx, owner, createdBy string, o Order, t Target) (string, error) {
	id := uuid.NewString()
	at := clock.Now()
	sendAt := at
	if o.SendAt != nil && o.SendAt.After(at) {
		sendAt = *o.SendAt
	}
	return id, insertOrder(ctx, tx, id, owner, createdBy, o, sendAt, at, t)
}

// Order places order o of owner for message id of one of its services and starts its workflow.
func (s *Service) Order(ctx context.Context, owner, createdBy, messageID string, o Order) (Placed, error) {
	if !messageIDPattern.MatchString(messageID) {
		return Placed{}, ErrNotFound
	}
	m, err := messageOf(ctx, s.pool, owner, messageID)
	if err != nil {
		return Placed{}, err
	}
	if o, err = s.Check(o, true); err != nil {
		return Placed{}, err
	}
	if s.temporal == nil {
		return Placed{}, refuse(Unavailable, "notifications cannot be ordered right now; try again shortly")
	}
	var id string
	// The workflow starts inside the transaction: if it cannot start nothing is stored, and if the commit
	// then fails its batches find no order and end.
	err = store.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if id, err = PlaceTx(ctx, tx, owner, createdBy, o, Target{Messages: []TargetMessage{m}}); err != nil {
			return err
		}
		_, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowID(id), TaskQueue: TaskQueue,
			Memo: map[string]any{"ServiceOwner": owner, "Message": messageID}}, WorkflowName, Input(id, o, 1))
		if err != nil && ctx.Err() == nil {
			return &Error{Kind: Unavailable, Detail: "notifications cannot be ordered right now; try again shortly", Err: err}
		}
		return err
	})
	if err != nil {
		return Placed{}, err
	}
	return Placed{OrderID: id, Recipients: 1}, nil
}

var (
	messageIDPattern = regexp.MustCompile(`^a[0-9]{1,18}$`)
	orderIDPattern   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// Status returns order id of owner with up to limit (at most MaxPage) of its recipients after the
// ordinal after, and whether more follow.
func (s *Service) Status(ctx context.Context, owner, id string, after, limit int) (OrderStatus, []RecipientStatus, bool, error) {
	if !orderIDPattern.MatchString(id) {
		return OrderStatus{}, nil, false, ErrNotFound
	}
	o, err := getOrder(ctx, s.pool, owner, id)
	if err != nil {
		return o, nil, false, err
	}
	list, more, err := listRecipients(ctx, s.pool, id, after, min(max(limit, 1), MaxPage))
	return o, list, more, err
}

// OrdersOf returns owner's orders for message id, newest first, each with the message's sends. A message
// that is not of the owner's services, and one without orders, answer an empty list alike.
func (s *Service) OrdersOf(ctx context.Context, owner, id string) ([]MessageOrder, error) {
	if !messageIDPattern.MatchString(id) {
		return nil, ErrNotFound
	}
	return ordersOf(ctx, s.pool, owner, id)
}
