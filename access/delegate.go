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

// DelegateRoles gives holder the roles of defs for the reportee, delegated by actor (an entry without
// action), each with its audit line and event, in one change; it returns the new roles' ids in the order
// of defs. A role the holder has already refuses the whole delegation (AlreadyHeld).
func (s *Service) DelegateRoles(ctx context.Context, actor audit.Entry, reporteeID int64, holder Holder, defs []store.RoleDefinition) ([]int64, error) {
	ids := make([]int64, 0, len(defs))
	err := s.Change(ctx, func(q *store.Queries) error {
		delegated := make([]store.Event, 0, len(defs))
		for _, d := range defs {
			id, err := q.InsertRole(ctx, store.NewRole{HolderPartyID: holder.PartyID, HolderLoginID: holder.LoginID, ReporteeID: reporteeID,
				RoleDefinitionID: d.ID, Delegator: actor.ActorName, DelegatedTime: actor.At})
			if errors.Is(err, store.ErrRoleHeld) {
				return refuse(AlreadyHeld, "the right holder already holds role %s for this reportee", RoleLabel(d.ID, d.Code, d.Name))
			}
			if err != nil {
				return err
			}
			e := actor
			e.ReporteeID, e.Action, e.RoleID, e.RoleDefinitionID, e.RightHolder = reporteeID, store.AuditDelegateRole, id, d.ID, holder.Name
			e.Summary = fmt.Sprintf("delegated role %s to %s", RoleLabel(d.ID, d.Code, d.Name), holder.Name)
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
