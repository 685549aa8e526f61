package access

import (
	"context"
	"errors"
	"slices"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// FindReceiver finds the party raw names as a receiver of a reportee's delegations: a reportee id (r…) or
// an organization number, else store.ErrNotFound. A national identity number is refused, since the
// answers show persons by name and would tell whose number it is.
func (s *Service) FindReceiver(ctx context.Context, raw string) (identity.Party, error) {
	if !identity.ReporteeIDPattern.MatchString(raw) && !identity.OrganizationNumberPattern.MatchString(raw) {
		return identity.Party{}, refuse(BadInput, "receiverId must be a reportee id (r followed by digits) or an organization number (9 digits)")
	}
	return s.parties.Find(ctx, raw)
}

// ReceiverHolding is the receiver raw names (FindReceiver) and what it holds for the caller's reportee
// through its roles and, with self, as the person the reportee is itself (the automatic base role). A
// receiver that holds no role for the reportee is refused as not found, like one that does not exist.
func (s *Service) ReceiverHolding(ctx context.Context, c Caller, raw string, self bool) (identity.Party, Holding, error) {
	receiver, holding, err := s.receiverHolding(ctx, c.Actor.ReporteeID, raw, self)
	if errors.Is(err, store.ErrNotFound) {
		err = refuse(NotFound, "%q holds no role for %q", raw, c.Who)
	}
	return receiver, holding, err
}

// receiverHolding is ReceiverHolding with store.ErrNotFound for a receiver that holds nothing.
func (s *Service) receiverHolding(ctx context.Context, reporteeID int64, raw string, self bool) (identity.Party, Holding, error) {
	receiver, err := s.FindReceiver(ctx, raw)
	if err != nil {
		return receiver, Holding{}, err
	}
	holding := Holding{Holder: store.Subject{PartyID: receiver.ID}, ReporteeID: reporteeID,
		Self: self && receiver.Kind == "Person" && receiver.ID == reporteeID}
	if holding.Self {
		return receiver, holding, nil
	}
	holds, err := identity.NewStore(store.New(s.pool)).HoldsRoleFor(ctx, holding.Holder, reporteeID)
	if err == nil && !holds {
		err = store.ErrNotFound
	}
	return receiver, holding, err
}

// ReceiverView is a receiver with the roles it holds for the reportee and the rights they give.
type ReceiverView struct {
	Party  identity.Party
	Roles  []HeldRole
	Rights []Right
}

// Receiver is the receiver raw names with all it holds for the reportee (ReceiverHolding): its roles, and
// with self the base role first, and their rights.
func (s *Service) Receiver(ctx context.Context, c Caller, raw string, self bool) (ReceiverView, error) {
	receiver, holding, err := s.ReceiverHolding(ctx, c, raw, self)
	if err != nil {
		return ReceiverView{}, err
	}
	q := NewStore(store.New(s.pool))
	v := ReceiverView{Party: receiver}
	if v.Roles, _, err = q.ListHeldRoles(ctx, holding, store.Unpaged, -1); err != nil {
		return v, err
	}
	v.Rights, _, err = q.ListHeldRights(ctx, holding, store.Unpaged)
	return v, err
}

// AttachmentQuery asks whether a receiver of the reportee's delegations may read an attachment of one of
// its messages: receiverId (FindReceiver) and messageId as the client wrote them, and the attachment's id.
type AttachmentQuery struct {
	Receiver     string
	MessageID    string
	AttachmentID int64
}

// AttachmentAnswer says whether the receiver may read the attachment, and by which action on which
// message.
type AttachmentAnswer struct {
	Receiver   identity.Party
	Message    store.Message
	Action     identity.Action
	Authorized bool
}

// AttachmentAccess tells whether the receiver q names may read an attachment of a message of the caller's
// reportee, by the mailbox's rule: what it holds (its roles, or itself as the reportee's person) gives
// rights on the message's service that allow the message in its status. The action that decides is Read,
// or ArchiveRead once the message is archived. A receiver that holds nothing for the reportee, a message
// the caller does not see itself and an attachment that is not on it are each not found.
func (s *Service) AttachmentAccess(ctx context.Context, c Caller, q AttachmentQuery) (AttachmentAnswer, error) {
	reportee := c.Actor.ReporteeID
	receiver, holding, err := s.ReceiverHolding(ctx, c, q.Receiver, true)
	if err != nil {
		return AttachmentAnswer{}, err
	}
	m, err := s.messages.Visible(ctx, reportee, c.Rights, q.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		return AttachmentAnswer{}, refuse(NotFound, "there is no message %s for %q", q.MessageID, c.Who)
	}
	if err != nil {
		return AttachmentAnswer{}, err
	}
	if !slices.ContainsFunc(m.Attachments, func(a store.Attachment) bool { return a.ID == q.AttachmentID }) {
		return AttachmentAnswer{}, refuse(NotFound, "there is no attachment %d on message %s", q.AttachmentID, q.MessageID)
	}
	rights := identity.RightSet{All: holding.Self}
	if !holding.Self {
		if rights, err = s.rights.ForSubject(ctx, holding.Holder, reportee); err != nil {
			return AttachmentAnswer{}, err
		}
	}
	a := AttachmentAnswer{Receiver: receiver, Message: m, Action: identity.Read,
		Authorized: rights.Visibility().Allows(m.Service(), m.Status)}
	if store.ArchivedStatus(m.Status) {
		a.Action = identity.ArchiveRead
	}
	return a, nil
}

// ListDelegations lists every role held by anyone for the reportee, newest first. A receiver that does
// not exist holds nothing: it narrows the list to nothing.
func (s *Service) ListDelegations(ctx context.Context, reporteeID int64, f DelegationFilter, lq store.ListQuery) ([]DelegatedRole, bool, error) {
	var receiverID int64
	if f.Receiver != nil {
		p, err := s.FindReceiver(ctx, *f.Receiver)
		switch {
		case errors.Is(err, store.ErrNotFound):
			receiverID = -1 // no party has this id: the list still checks its query
		case err != nil:
			return nil, false, err
		default:
			receiverID = p.ID
		}
	}
	return NewStore(store.New(s.pool)).listDelegations(ctx, reporteeID, f.Service, receiverID, lq)
}
