package access

import (
	"context"
	"errors"
	"fmt"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/store"
)

// Holder is who receives a delegation: a person or organization (PartyID), or an enterprise user
// (LoginID), with the name the audit log and the answer show.
type Holder struct {
	PartyID int64
	LoginID int64
	Name    string
}

// UserName is the user name of an enterprise user holder, "" for a party.
func (h Holder) UserName() string {
	if h.LoginID == 0 {
		return ""
	}
	return h.Name
}

// Grant is what one delegation gives its holder: roles, and single rights. A single right is held as a
// role that gives only it (store.SingleRightDefinition), so every view of roles and rights shows it, the
// rights cache needs nothing new, and DELETE …/rights/{RightID} takes it (a role that gives only it).
type Grant struct {
	Roles  []RoleDefinition
	Rights []RightSpec
	// MayDelegateRight refuses a single right the delegator may not give, by its definition; it runs inside
	// the change, so a refusal leaves nothing.
	MayDelegateRight func(q Store, def RoleDefinition) error
}

// DelegateRoles gives holder the roles and single rights of g for the reportee, delegated by actor (an
// entry without action), each with its audit line and event, in one change; it returns the new roles' ids,
// those of g.Roles first in their order, then those of g.Rights. A role or right the holder has already
// refuses the whole delegation (AlreadyHeld).
func (s *Service) DelegateRoles(ctx context.Context, actor audit.Entry, reporteeID int64, holder Holder, g Grant) ([]int64, error) {
	ids := make([]int64, 0, len(g.Roles)+len(g.Rights))
	err := s.Change(ctx, func(q Store) error {
		defs := g.Roles
		for _, r := range g.Rights {
			d, err := q.SingleRightDefinition(ctx, r)
			if err != nil {
				return err
			}
			if err := g.MayDelegateRight(q, d); err != nil {
				return err
			}
			defs = append(defs, d)
		}
		delegated := make([]store.Event, 0, len(defs))
		for i, d := range defs {
			single := i >= len(g.Roles)
			what := "role " + RoleLabel(d.ID, d.Code, d.Name)
			if single {
				what = "right " + RightLabel(Right{ServiceCode: g.Rights[i-len(g.Roles)].ServiceCode,
					ServiceEdition: g.Rights[i-len(g.Roles)].ServiceEdition, Action: g.Rights[i-len(g.Roles)].Action})
			}
			id, err := q.InsertRole(ctx, NewRole{HolderPartyID: holder.PartyID, HolderLoginID: holder.LoginID, ReporteeID: reporteeID,
				RoleDefinitionID: d.ID, Delegator: actor.ActorName, DelegatedTime: actor.At})
			if errors.Is(err, ErrRoleHeld) {
				return refuse(AlreadyHeld, "the right holder already holds %s for this reportee", what)
			}
			if err != nil {
				return err
			}
			e := actor
			e.ReporteeID, e.Action, e.RoleID, e.RoleDefinitionID, e.RightHolder = reporteeID, AuditDelegateRole, id, d.ID, holder.Name
			if single {
				e.Action = AuditDelegateRight
			}
			e.Summary = fmt.Sprintf("delegated %s to %s", what, holder.Name)
			if err := q.AppendAudit(ctx, e); err != nil {
				return err
			}
			delegated = append(delegated, s.events.RoleEvent(events.RoleDelegated, events.Role{RoleID: id, RoleDefinitionID: d.ID,
				ReporteeID: reporteeID, HolderPartyID: holder.PartyID, HolderUserName: holder.UserName()}))
			ids = append(ids, id)
		}
		return q.AppendEvents(ctx, delegated...)
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}
