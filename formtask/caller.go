package formtask

import (
	"context"
	"fmt"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// CallerOf is what a task's workflow needs to know about principal p sending a change of a task of
// service svc, for which p has rights.
func CallerOf(p identity.Principal, rights identity.RightSet, svc store.ServiceKey) Caller {
	id := fmt.Sprintf("party:%d", p.PersonID)
	switch {
	case p.LoginID != 0:
		id = fmt.Sprintf("login:%d", p.LoginID)
	case p.PersonID == 0:
		id = "org:" + p.OrganizationNumber
	}
	return Caller{Name: p.Name, ID: id, Write: rights.Has(identity.Write, svc), Sign: rights.Has(identity.Sign, svc),
		Delete: rights.Has(identity.Delete, svc), SecurityLevel: p.SecurityLevel}
}

// PersonSigner is p as the signer of a task with signing steps: a person signs as themselves (for the
// task's party in its Role and Right steps); any other login has no signer.
func PersonSigner(p identity.Principal) Signer {
	if p.PersonID == 0 || p.Method == identity.MethodEnterpriseUser {
		return Signer{}
	}
	return Signer{PartyID: p.PersonID, Name: p.Name, SecurityLevel: p.SecurityLevel}
}

// TrashedTask refuses a change of message id of the reportee when it is a form task in the trashbin,
// which the mailbox no longer shows: InTrashbin, with the status it keeps, rather than the NotFound of a
// message that does not exist (which its reads still answer: they belong to the mailbox). It returns
// store.ErrNotFound for any other message.
func (s *Service) TrashedTask(ctx context.Context, reporteeID int64, rights identity.RightSet, id string) error {
	m, err := s.store.GetTrashedMessage(ctx, reporteeID, id)
	if err != nil {
		return err
	}
	if m.Type != store.TypeFormTask || !rights.Visibility().Allows(m.Service(), m.Status) {
		return store.ErrNotFound
	}
	e := refuse(InTrashbin, "form task %s is in the trashbin; restore it (PUT …/messages/%s/restore) before changing it", id, id)
	e.Status = m.Status
	return e
}
