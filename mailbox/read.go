package mailbox

import (
	"context"
	"errors"
	"slices"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Reader is a caller reading a reportee's mailbox: the reportee, the caller's rights for it, and the
// caller's name, which a first read of a correspondence records.
type Reader struct {
	ReporteeID int64
	Rights     identity.RightSet
	Name       string
}

// Message is message id as Visible returns it, or NotFound.
func (m *Messages) Message(ctx context.Context, r Reader, id string) (store.Message, error) {
	msg, err := m.Visible(ctx, r.ReporteeID, r.Rights, id)
	if errors.Is(err, store.ErrNotFound) {
		return msg, refuse(NotFound, "there is no message %s in this mailbox", id)
	}
	return msg, err
}

// Open is Message and, with mark, the reader's first read of an unread correspondence, recorded with its
// event; it returns the message as it is then.
func (m *Messages) Open(ctx context.Context, r Reader, id string, mark bool) (store.Message, error) {
	msg, err := m.Message(ctx, r, id)
	if err != nil || !mark || msg.Type != store.TypeCorrespondence || msg.Status != store.StatusUnread {
		return msg, err
	}
	read := m.events.MessageEvent(events.CorrespondenceRead, events.Message{MessageID: msg.MessageID, ReporteeID: r.ReporteeID,
		Type: msg.Type, ServiceCode: msg.ServiceCode, ServiceEdition: msg.ServiceEdition, Status: store.StatusRead})
	if _, err := m.q.MarkCorrespondenceRead(ctx, r.ReporteeID, msg.MessageID, r.Name, clock.Now(), read); err != nil {
		return msg, err
	}
	return m.Message(ctx, r, id)
}

// Form is form formID of message id (0 names none), or NotFound.
func (m *Messages) Form(ctx context.Context, r Reader, id string, formID int64) (store.Form, error) {
	msg, err := m.Message(ctx, r, id)
	if err != nil {
		return store.Form{}, err
	}
	return m.FormOf(ctx, r.ReporteeID, msg, formID)
}

// FormOf is form formID (0 names none) of msg, a message of the reportee's that the caller has already
// loaded (Visible), or NotFound.
func (m *Messages) FormOf(ctx context.Context, reporteeID int64, msg store.Message, formID int64) (store.Form, error) {
	f, err := m.q.GetForm(ctx, reporteeID, msg.MessageID, formID)
	if errors.Is(err, store.ErrNotFound) {
		return f, refuse(NotFound, "there is no form %d on message %s", formID, msg.MessageID)
	}
	return f, err
}

// FormData is the data of form formID of message id, or NotFound.
func (m *Messages) FormData(ctx context.Context, r Reader, id string, formID int64) ([]byte, error) {
	if _, err := m.Form(ctx, r, id, formID); err != nil {
		return nil, err
	}
	return m.q.GetFormData(ctx, r.ReporteeID, id, formID)
}

// Attachment is attachment attachmentID of message id (0 names none) with the message, or NotFound.
func (m *Messages) Attachment(ctx context.Context, r Reader, id string, attachmentID int64) (store.Message, store.Attachment, error) {
	msg, err := m.Message(ctx, r, id)
	if err != nil {
		return msg, store.Attachment{}, err
	}
	if !slices.ContainsFunc(msg.Attachments, func(a store.Attachment) bool { return a.ID == attachmentID }) {
		return msg, store.Attachment{}, refuse(NotFound, "there is no attachment %d on message %s", attachmentID, id)
	}
	a, err := m.q.GetAttachment(ctx, r.ReporteeID, id, attachmentID)
	return msg, a, err
}
