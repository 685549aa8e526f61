package access

import (
	"context"
	"errors"

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

// ReceiverHolding is the receiver raw names (FindReceiver) and what it holds for the reportee through its
// roles and, with self, as the person the reportee is itself (the automatic base role). A receiver that
// holds no role for the reportee is store.ErrNotFound, like one that does not exist.
func (s *Service) ReceiverHolding(ctx context.Context, reporteeID int64, raw string, self bool) (identity.Party, Holding, error) {
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

// AttachmentAccess tells whether holding lets its holder read the attachments of message m of the
// reportee, by the mailbox's rule: its rights on m's service allow m in its status. The action that
// decides is Read, or ArchiveRead once m is archived.
func (s *Service) AttachmentAccess(ctx context.Context, holding Holding, m store.Message) (identity.Action, bool, error) {
	rights := identity.RightSet{All: holding.Self}
	if !holding.Self {
		var err error
		if rights, err = s.rights.ForSubject(ctx, holding.Holder, holding.ReporteeID); err != nil {
			return "", false, err
		}
	}
	action := identity.Read
	if store.ArchivedStatus(m.Status) {
		action = identity.ArchiveRead
	}
	return action, rights.Visibility().Allows(m.Service(), m.Status), nil
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
