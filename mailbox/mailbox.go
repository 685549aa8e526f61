// Package mailbox is the room of the mailbox's messages as their reportee's callers see them. It starts
// with the one rule every read and change of a message keeps: a message the caller's rights do not let it
// see is answered like one that does not exist. It reads a message, its forms and attachments and records
// a first read (read.go), and owns archive, confirm and the trashbin (lifecycle.go). The lists and search
// are single statements in store/, called from api/ (docs/architecture.md, "Where the cut goes next").
package mailbox

import (
	"context"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Messages loads single messages for callers, through the coalescing reader.
type Messages struct {
	reader *store.MessageReader
	q      *store.Queries
	events events.Builder
}

// New returns the messages over reader, with q for their parts and first reads, eb making their events.
func New(reader *store.MessageReader, q *store.Queries, eb events.Builder) *Messages {
	return &Messages{reader: reader, q: q, events: eb}
}

// Visible returns message id of the reportee when rights let the caller see it (Read on its service, and
// ArchiveRead when it is archived); store.ErrNotFound for one it may not see, as for one that does not
// exist or is in the trashbin.
func (m *Messages) Visible(ctx context.Context, reporteeID int64, rights identity.RightSet, id string) (store.Message, error) {
	msg, err := m.reader.GetMessage(ctx, reporteeID, id)
	return visible(msg, err, rights)
}

// VisibleInTrashbin is Visible for a message in the reportee's trashbin.
func (m *Messages) VisibleInTrashbin(ctx context.Context, reporteeID int64, rights identity.RightSet, id string) (store.Message, error) {
	msg, err := m.reader.GetTrashedMessage(ctx, reporteeID, id)
	return visible(msg, err, rights)
}

func visible(msg store.Message, err error, rights identity.RightSet) (store.Message, error) {
	if err == nil && !rights.Visibility().Allows(msg.Service(), msg.Status) {
		return store.Message{}, store.ErrNotFound
	}
	return msg, err
}
