package formtask

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
)

// callToSignOrder notifies a signee of a call to sign: by e-mail, else by SMS, with a reminder after three
// days while the call is unread. $link$ is the call in the signee's mailbox, which links to the task.
var callToSignOrder = notification.Order{
	Channel:      notification.EmailPreferred,
	EmailSubject: "Til signering i Postbox: " + notification.PlaceholderSubject,
	EmailBody: "Hei " + notification.PlaceholderName + ",\n\ndu er bedt om å signere: " + notification.PlaceholderSubject +
		".\nLes og signer: " + notification.PlaceholderLink + "\n",
	SmsText:      "Til signering i Postbox: " + notification.PlaceholderSubject + ". " + notification.PlaceholderLink,
	ReminderDays: 3,
	Reminders:    1,
}

// callSignees puts a call to sign in the mailbox of each signee of a task entering Signering, each with
// its correspondence.created event, and orders their notification (an order of the service's owner, made
// by Postbox), all in the transaction of the status. It returns the order's workflow input for the task's
// run to start, nil for a task that names no signees.
func (a *Activities) callSignees(ctx context.Context, tx pgx.Tx, q Store, messageID string, at time.Time) (*notification.WorkflowInput, error) {
	calls, err := q.CreateCallsToSign(ctx, messageID, a.PublicURL, at)
	if err != nil || len(calls.Calls) == 0 {
		return nil, err
	}
	var target notification.Target
	evs := make([]store.Event, 0, len(calls.Calls))
	for _, c := range calls.Calls {
		target.Messages = append(target.Messages, notification.TargetMessage{MessageID: c.MessageID, PartyID: c.PartyID})
		evs = append(evs, a.Events.MessageEvent(events.CorrespondenceCreated, events.Message{MessageID: c.MessageID,
			ReporteeID: c.PartyID, Type: store.TypeCorrespondence, ServiceCode: calls.Service.Code,
			ServiceEdition: calls.Service.Edition, Status: store.StatusUnread}))
	}
	if err := q.AppendEvents(ctx, evs...); err != nil {
		return nil, err
	}
	id, err := notification.PlaceTx(ctx, tx, calls.ServiceOwner, "Postbox", callToSignOrder, target)
	if err != nil {
		return nil, err
	}
	if err := q.KeepCallOrder(ctx, messageID, id); err != nil {
		return nil, err
	}
	in := notification.Input(id, callToSignOrder, len(target.Messages))
	return &in, nil
}

// callOrder is the workflow input of the order of a task's calls to sign, nil for a task that called no
// one: what a run taking Signering from the read model starts (StartOrder counts a started one as started).
func callOrder(ctx context.Context, q Store, messageID string) (*notification.WorkflowInput, error) {
	order, recipients, found, err := q.CallOrder(ctx, messageID)
	if err != nil || !found {
		return nil, err
	}
	in := notification.Input(order, callToSignOrder, recipients)
	return &in, nil
}
