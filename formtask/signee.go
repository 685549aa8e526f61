package formtask

import (
	"context"
	"errors"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Signee is a caller as the signee of a party: a person signs as themselves, or for an organization as
// its main administrator or as someone who holds the Sign right on a task's service for it (SignsFor
// decides each task's service).
type Signee struct {
	Signer Signer
	Party  int64 // the party it signs as
	Who    string
	rights identity.RightSet
}

// SigneeOf is principal p as the signee of party, for which it has rights; who names the party as the
// client did. It is refused (NotSignee) when p cannot sign for party at all.
func SigneeOf(p identity.Principal, party int64, rights identity.RightSet, who string) (Signee, error) {
	if p.PersonID == 0 || p.Method == identity.MethodEnterpriseUser {
		return Signee{}, refuse(NotSignee, "only a person signs; this login is not one")
	}
	s := Signee{Signer: Signer{PartyID: p.PersonID, Name: p.Name, SecurityLevel: p.SecurityLevel}, Party: party, Who: who, rights: rights}
	if party == p.PersonID {
		return s, nil
	}
	if !rights.MainAdministrator() && len(rights.Services(identity.Sign)) == 0 {
		return Signee{}, refuse(NotSignee, "an organization's signature is given by its main administrator or by someone who holds "+
			"the Sign right for it; you are neither for %q", who)
	}
	s.Signer.OnBehalfOf = party
	return s, nil
}

// SignsFor tells whether the signee signs tasks of service svc: a person for themselves always, for an
// organization as its main administrator or with the Sign right on svc for it.
func (s Signee) SignsFor(svc store.ServiceKey) bool {
	return s.Signer.OnBehalfOf == 0 || s.rights.MainAdministrator() || s.rights.Has(identity.Sign, svc)
}

// TasksToSign lists the tasks in Signering that name the signee's party and that it signs for.
func (s *Service) TasksToSign(ctx context.Context, signee Signee) ([]SigningTask, error) {
	list, err := s.store.SigningTasksOf(ctx, signee.Party)
	if err != nil {
		return nil, err
	}
	mine := list[:0]
	for _, t := range list {
		if signee.SignsFor(store.ServiceKey{Code: t.ServiceCode, Edition: t.ServiceEdition}) {
			mine = append(mine, t)
		}
	}
	return mine, nil
}

// TaskToSign loads task id for its signee. A task that does not name the signee's party, whose service
// the signee does not sign for, or that is in the trashbin is not there (NotFound, as for no task); so is
// one not in Signering when reading. A signature of one sent back to Utfylling is a Conflict; of one
// archived, Sign decides (a repeat answers as the archive did).
func (s *Service) TaskToSign(ctx context.Context, signee Signee, id string, reading bool) (Task, error) {
	notThere := refuse(NotFound, "there is no task %s for %q to sign", id, signee.Who)
	task, err := s.Load(ctx, id)
	var missing *Error
	if errors.As(err, &missing) && missing.Kind == NotFound {
		return task, notThere
	}
	if err != nil {
		return task, err
	}
	named, err := s.store.NamesSignee(ctx, task.MessageID, signee.Party)
	if err != nil {
		return task, err
	}
	named = named && signee.SignsFor(store.ServiceKey{Code: task.ServiceCode, Edition: task.ServiceEdition})
	switch {
	case !named || task.InTrashbin || (reading && task.Status != taskstatus.Signing):
		return task, notThere
	case task.Status == taskstatus.Filling:
		e := refuse(Conflict, "task %s is in %s, not awaiting signatures: it was sent back, and its earlier signatures are void",
			task.MessageID, taskstatus.Filling)
		e.Status = task.Status
		return task, e
	}
	return task, nil
}

// SigningView is a task as its signee reads it: its signing, its forms (what a signature signs) and the
// name of its party.
type SigningView struct {
	Task         Task
	Signing      SigningState
	Forms        []FormContent
	ReporteeName string
}

// ReadToSign is task id as its signee reads it (TaskToSign's terms).
func (s *Service) ReadToSign(ctx context.Context, signee Signee, id string) (SigningView, error) {
	task, err := s.TaskToSign(ctx, signee, id, true)
	if err != nil {
		return SigningView{}, err
	}
	v := SigningView{Task: task}
	if v.Signing, err = s.Signing(ctx, task); err != nil {
		return v, err
	}
	if v.Forms, _, err = s.store.MessageContent(ctx, task.MessageID); err != nil {
		return v, err
	}
	partyID, _ := identity.ParseReporteeID(task.ReporteeID)
	owner, err := identity.NewStore(s.store.Queries).GetParty(ctx, partyID)
	v.ReporteeName = owner.Name
	return v, err
}
