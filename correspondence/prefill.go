package correspondence

import (
	"context"
	"errors"
	"log/slog"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
)

// Prefill is a form task a service owner puts into a party's mailbox, filled in as far as the owner
// knows: the party fills in the rest, signs and submits it like any other task, and its archive lands in
// the owner's queue. It is a PrefillRequest with its service edition read and its content made into
// forms and attachments; a scheduled one is stored so until it appears.
type Prefill struct {
	Reportee string // organization number or national identity number
	Service  store.ServiceDetail
	Subject  string // the service's name when empty
	DueAt    *time.Time
	// VisibleAt, when in the future, is when the task appears: until then it is not in the mailbox at all
	// (its forms are validated at once, the task is created then; see PrefillWorkflow).
	VisibleAt   *time.Time
	Forms       []formtask.RevisionForm
	Attachments []formtask.RevisionAttachment
	// Notification, when set, tells the party once the task is in its mailbox (package notification).
	Notification *notification.Order
}

// PrefillRequest asks for a Prefill: the service edition it is of, and its content as the owner sent it.
type PrefillRequest struct {
	Reportee         string // organization number or national identity number
	Service          store.ServiceKey
	Subject          string // the service's name when empty
	DueAt, VisibleAt *time.Time
	Content          formtask.Content
	Notification     *notification.Order
}

// Prefilled is a pre-filled task created, or scheduled to be created at VisibleAt: its message id and
// the notification order that came with it ("" for none).
type Prefilled struct {
	MessageID           string
	NotificationOrderID string
	VisibleAt           *time.Time // set when the task is scheduled
}

// TaskDueWorkflowIDPrefix starts the id of the workflow that waits for a pre-filled task's due date.
const TaskDueWorkflowIDPrefix = "formtask-due/"

// TaskDueWorkflowName is the registered name of TaskDueWorkflow.
const TaskDueWorkflowName = "FormTaskDue"

// ownerSecurityLevel is the security level a service owner's pre-fill is taken to have: it is not a login
// of the party's, and the owner's client is authenticated by its organization token or certificate.
const ownerSecurityLevel = 4

// Prefill creates the task r asks for in the reportee's mailbox as the owner of a, with its forms
// validated as any saved content is (a refusal names the field), and starts the timer of its due date. It
// returns the new task's message id and its notification order's.
func (s *Service) Prefill(ctx context.Context, a Actor, r PrefillRequest) (Prefilled, error) {
	svc, err := store.New(s.pool).GetService(ctx, r.Service.Code, r.Service.Edition)
	if errors.Is(err, store.ErrNotFound) {
		return Prefilled{}, refuse(BadInput, "there is no service %s edition %d", r.Service.Code, r.Service.Edition)
	}
	if err != nil {
		return Prefilled{}, err
	}
	p := Prefill{Reportee: r.Reportee, Service: svc, Subject: r.Subject, DueAt: r.DueAt, VisibleAt: r.VisibleAt, Notification: r.Notification}
	if p.Forms, p.Attachments, err = formtask.RevisionContent(svc, r.Content); err != nil {
		return Prefilled{}, err
	}
	now := clock.Now()
	switch {
	case p.Service.ServiceOwnerCode != a.ServiceOwner:
		return Prefilled{}, refuse(NotOwned, "service %s edition %d is not one of yours", p.Service.ServiceCode, p.Service.ServiceEdition)
	case p.Service.ServiceType != store.TypeFormTask:
		return Prefilled{}, refuse(BadInput, "service %s edition %d is a %s service; pre-fill a FormTask service",
			p.Service.ServiceCode, p.Service.ServiceEdition, p.Service.ServiceType)
	case utf8.RuneCountInString(p.Subject) > MaxSubject:
		return Prefilled{}, refuse(BadInput, "Subject is longer than %d characters", MaxSubject)
	case p.DueAt != nil && !p.DueAt.After(now):
		return Prefilled{}, refuse(BadInput, "DueDateTime must come after now")
	case p.DueAt != nil && p.VisibleAt != nil && !p.DueAt.After(*p.VisibleAt):
		return Prefilled{}, refuse(BadInput, "DueDateTime must come after VisibleDateTime")
	}
	if err := formtask.ServiceOpen(p.Service, now); err != nil {
		return Prefilled{}, err
	}
	outcome := screen([]string{p.Reportee})
	parties, err := lookUpParties(ctx, s.pool, outcome)
	if err != nil {
		return Prefilled{}, err
	}
	if outcome[0].Refused != "" {
		return Prefilled{}, refuse(BadInput, "Reportee %q cannot receive it: %s", p.Reportee, outcome[0].Refused)
	}
	if p.Notification != nil {
		order, err := s.notices.Check(*p.Notification, true)
		if err != nil {
			return Prefilled{}, err
		}
		p.Notification = &order
	}
	if s.tasks == nil || s.temporal == nil {
		return Prefilled{}, refuse(Unavailable, "form tasks cannot be sent right now; try again shortly")
	}
	if p.VisibleAt != nil && p.VisibleAt.After(now) {
		return s.schedulePrefill(ctx, a, parties[0], p)
	}
	id, err := createPrefilled(ctx, s.tasks, a, parties[0], p, "")
	if err != nil {
		return Prefilled{}, err
	}
	done := Prefilled{MessageID: id}
	if p.DueAt != nil {
		// The task exists: it is never answered as a failure. Temporal answered its content's update a
		// moment ago; should the start still fail, the task only misses its overdue event.
		_, err := s.temporal.ExecuteWorkflow(context.WithoutCancel(ctx), client.StartWorkflowOptions{ID: TaskDueWorkflowIDPrefix + id,
			TaskQueue: TaskQueue}, TaskDueWorkflowName, TaskDueInput{MessageID: id, DueAt: clock.Instant(*p.DueAt)})
		if err != nil {
			slog.ErrorContext(ctx, "starting the due timer of a pre-filled form task failed", "err", err, "message", id)
		}
	}
	if p.Notification != nil {
		// Checked above, so only an outage can refuse it now; the task stands, and the answer has no order.
		placed, err := s.notices.Order(context.WithoutCancel(ctx), a.ServiceOwner, a.name(), id, *p.Notification)
		if err != nil {
			slog.ErrorContext(ctx, "ordering the notification of a pre-filled form task failed", "err", err, "message", id)
		}
		done.NotificationOrderID = placed.OrderID
	}
	return done, nil
}

// ownerCaller is the service owner of a as the caller who creates its pre-filled tasks.
func ownerCaller(a Actor) formtask.Caller {
	return formtask.Caller{Name: a.ServiceOwnerName, ID: "serviceowner/" + a.ServiceOwner, Write: true, SecurityLevel: ownerSecurityLevel}
}

// createPrefilled creates p's task in the reportee's mailbox as the owner of a, under id ("" for the next
// message id), its forms validated by the task's workflow as any saved content is.
func createPrefilled(ctx context.Context, tasks *formtask.Service, a Actor, reporteeID int64, p Prefill, id string) (string, error) {
	id, _, err := tasks.CreateWith(ctx, reporteeID, p.Service, formtask.NewFormTask{ID: id, Subject: p.Subject, DueAt: p.DueAt},
		ownerCaller(a), formtask.Submission{Forms: p.Forms, Attachments: p.Attachments})
	return id, err
}

// TaskDueInput is what a pre-filled task's due timer starts with.
type TaskDueInput struct {
	MessageID string
	DueAt     time.Time
}
