// Package access is the room of who may do what for whom. It is begun with the local role definitions a
// reportee makes (create, change, delete with every delegation of it), the delegation of roles, and the
// one way every access change is written: one transaction with its audit entries and events, after which
// the rights cache is emptied; the terms of delegating and taking away roles and rights; and their
// deletion.
package access

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/store"
)

// Service writes access changes.
type Service struct {
	pool    *pgxpool.Pool
	rights  Rights
	parties *identity.Parties // who a delegation names
	events  events.Builder
	// messages finds the messages of a reportee the caller sees (mailbox.Messages), whose attachments a
	// receiver may be asked about.
	messages VisibleMessages
}

// VisibleMessages finds a message of a reportee when rights let the caller see it, else
// store.ErrNotFound (mailbox.Messages).
type VisibleMessages interface {
	Visible(ctx context.Context, reporteeID int64, rights identity.RightSet, id string) (store.Message, error)
}

// New returns the service over pool; rights are looked up in rights, which is emptied after each change
// (this replica's cache, once the change has committed: the others hear of it through the database's
// change notification); parties finds the right holders delegations name; eb makes its events; messages
// finds the messages a receiver may be asked about.
func New(pool *pgxpool.Pool, rights Rights, parties *identity.Parties, eb events.Builder, messages VisibleMessages) *Service {
	return &Service{pool: pool, rights: rights, parties: parties, events: eb, messages: messages}
}

// Change runs fn, a change with its audit entries and events, in one transaction and, once it has
// committed, empties the rights cache so that the next request sees it.
func (s *Service) Change(ctx context.Context, fn func(q Store) error) error {
	err := store.InTx(ctx, s.pool, func(tx pgx.Tx) error { return fn(NewStore(store.New(tx))) })
	if err == nil {
		s.rights.Invalidate()
	}
	return err
}

// Kind is a kind of refused access change.
type Kind int

const (
	// Gone: what the change is about was deleted meanwhile.
	Gone Kind = iota + 1
	// NameTaken: the reportee has a local role of that name already.
	NameTaken
	// AlreadyHeld: the right holder holds a role being delegated already.
	AlreadyHeld
	// NotFound: no such role or right for the reportee, as far as the caller may know.
	NotFound
	// BadInput: the request names something that cannot be delegated.
	BadInput
	// NotAccessManager: the caller may not change this access.
	NotAccessManager
	// FromRegister: the role comes from the business register and is not deleted here.
	FromRegister
	// NotDelegable: the role comes from the business register and is not delegated.
	NotDelegable
	// PlatformRole: the right belongs to a platform role, which cannot be changed.
	PlatformRole
	// RightComesWithRole: the right comes with a role that gives other rights too.
	RightComesWithRole
	// RoleNotHeld: the caller does not hold the role it would delegate or take away.
	RoleNotHeld
	// RightsNotHeld: the caller lacks rights of the role as delegatable rights (Items names them).
	RightsNotHeld
	// HolderMismatch: the identifier and name of a right holder do not identify one together.
	HolderMismatch
)

// Error is a refused access change; Detail says why, for the caller.
type Error = refusal.Error[Kind]

func refuse(kind Kind, format string, args ...any) *Error { return refusal.New(kind, format, args...) }

// RoleLabel names a role definition in details and the audit log: "12 REGNA (Regnskapsmedarbeider)".
func RoleLabel(id int, code, name string) string {
	if code != "" {
		return fmt.Sprintf("%d %s (%s)", id, code, name)
	}
	return fmt.Sprintf("%d (%s)", id, name)
}

// RightLabel names a right in details and the audit log: "Read on 4711/2".
func RightLabel(r Right) string {
	return fmt.Sprintf("%s on %s/%d", r.Action, r.ServiceCode, r.ServiceEdition)
}

// RoleDeleted is the event of deleting role r.
func RoleDeleted(eb events.Builder, r DelegatedRole) store.Event {
	return eb.RoleEvent(events.RoleDeleted, events.Role{RoleID: r.RoleID, RoleDefinitionID: r.RoleDefinitionID,
		ReporteeID: r.ReporteeID, HolderPartyID: r.HolderPartyID, HolderUserName: r.HolderUserName})
}

// LocalRole is a local role definition as it is stored, checked (localRoleOf).
type LocalRole struct {
	Name        string
	Description string
	Rights      []RightSpec
}

func (l LocalRole) summary() string {
	parts := make([]string, len(l.Rights))
	for i, r := range l.Rights {
		parts[i] = fmt.Sprintf("%s on %s/%d", r.Action, r.ServiceCode, r.ServiceEdition)
	}
	return fmt.Sprintf("%q with rights %s", l.Name, strings.Join(parts, ", "))
}

// Precondition checks a role definition as it is, locked, before it is changed (the caller's If-Match);
// nil when the caller set none.
type Precondition func(RoleDefinition) error

// CreateLocalRole checks local role r (every problem found in one BadInput refusal) and makes it a local
// role of the reportee, audited as actor (an entry without action), and
// returns its id.
func (s *Service) CreateLocalRole(ctx context.Context, actor audit.Entry, reporteeID int64, r LocalRoleRequest) (int, error) {
	l, err := localRoleOf(ctx, NewStore(store.New(s.pool)), r)
	if err != nil {
		return 0, err
	}
	var id int
	err = s.saveLocalRole(ctx, actor, reporteeID, AuditCreateRoleDefinition, events.RoleDefinitionCreated, l, func(q Store) (string, error) {
		var err error
		id, err = q.CreateLocalRole(ctx, reporteeID, l.Name, l.Description, l.Rights)
		return "created local role " + l.summary(), err
	}, &id)
	return id, err
}

// localOnly refuses a change of role definition d unless it is a local role: platform roles are not
// changed or deleted.
func localOnly(d RoleDefinition) error {
	if d.Local() {
		return nil
	}
	return refuse(PlatformRole, "role definition %s is a platform role; only local roles can be changed or deleted", RoleLabel(d.ID, d.Code, d.Name))
}

// UpdateLocalRole checks local role r as CreateLocalRole does and replaces local role d of the reportee
// with it, once pre holds.
func (s *Service) UpdateLocalRole(ctx context.Context, actor audit.Entry, reporteeID int64, d RoleDefinition, r LocalRoleRequest, pre Precondition) error {
	if err := localOnly(d); err != nil {
		return err
	}
	id := d.ID
	l, err := localRoleOf(ctx, NewStore(store.New(s.pool)), r)
	if err != nil {
		return err
	}
	return s.saveLocalRole(ctx, actor, reporteeID, AuditUpdateRoleDefinition, events.RoleDefinitionChanged, l, func(q Store) (string, error) {
		if err := check(ctx, q, id, pre); err != nil {
			return "", err
		}
		return fmt.Sprintf("changed local role %d to %s", id, l.summary()), q.UpdateLocalRole(ctx, id, l.Name, l.Description, l.Rights)
	}, &id)
}

// saveLocalRole runs save, which writes local role *id and says what it did, with its audit entry and
// event, in one change.
func (s *Service) saveLocalRole(ctx context.Context, actor audit.Entry, reporteeID int64, action, eventType string, l LocalRole,
	save func(q Store) (string, error), id *int) error {
	err := s.Change(ctx, func(q Store) error {
		summary, err := save(q)
		if err != nil {
			return err
		}
		e := actor
		e.ReporteeID, e.Action, e.RoleDefinitionID, e.Summary = reporteeID, action, *id, summary
		if err := q.AppendAudit(ctx, e); err != nil {
			return err
		}
		return q.AppendEvents(ctx, s.events.RoleDefinitionEvent(eventType, events.RoleDefinition{RoleDefinitionID: *id, ReporteeID: reporteeID, Name: l.Name}))
	})
	if errors.Is(err, ErrRoleNameTaken) {
		return refuse(NameTaken, "this reportee already has a local role named %q", l.Name)
	}
	return err
}

// DeleteLocalRole deletes local role d of the reportee once pre holds and, with it, every delegation of
// it, each recorded in the audit log of its own reportee and with its event.
func (s *Service) DeleteLocalRole(ctx context.Context, actor audit.Entry, reporteeID int64, d RoleDefinition, pre Precondition) error {
	if err := localOnly(d); err != nil {
		return err
	}
	return s.Change(ctx, func(q Store) error {
		if err := check(ctx, q, d.ID, pre); err != nil {
			return err
		}
		held, err := q.DeleteLocalRole(ctx, d.ID)
		if err != nil {
			return err
		}
		evs := make([]store.Event, 0, len(held)+1)
		for _, r := range held {
			evs = append(evs, RoleDeleted(s.events, r))
			e := actor
			e.ReporteeID, e.Action, e.RoleID, e.RoleDefinitionID, e.RightHolder = r.ReporteeID, AuditDeleteRole, r.RoleID, d.ID, r.HolderName
			e.Summary = fmt.Sprintf("deleted role %s held by %s, with its local role definition", RoleLabel(d.ID, "", d.Name), r.HolderName)
			if err := q.AppendAudit(ctx, e); err != nil {
				return err
			}
		}
		e := actor
		e.ReporteeID, e.Action, e.RoleDefinitionID = reporteeID, AuditDeleteRoleDefinition, d.ID
		e.Summary = fmt.Sprintf("deleted local role %s", RoleLabel(d.ID, "", d.Name))
		if err := q.AppendAudit(ctx, e); err != nil {
			return err
		}
		evs = append(evs, s.events.RoleDefinitionEvent(events.RoleDefinitionDeleted, events.RoleDefinition{RoleDefinitionID: d.ID,
			ReporteeID: reporteeID, Name: d.Name}))
		return q.AppendEvents(ctx, evs...)
	})
}

// check locks role definition id and checks pre on it, when there is one.
func check(ctx context.Context, q Store, id int, pre Precondition) error {
	if pre == nil {
		return nil
	}
	d, err := q.LockRoleDefinition(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(Gone, "role definition %d has been deleted", id)
	}
	if err != nil {
		return err
	}
	return pre(d)
}
