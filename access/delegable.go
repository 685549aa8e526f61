package access

import (
	"context"
	"errors"
	"strings"

	"github.com/postbox/postbox/store"
)

// The terms of delegating: a main administrator may delegate any role of the reportee's; anyone else
// only roles they hold themselves and whose rights they hold as delegatable rights, and single rights
// they hold as delegatable rights. Roles from the business register are never delegated. A role is taken
// from a receiver on the same terms.

// Delegate gives the right holder name identifies the role definitions roleIDs and the single rights for
// the caller's reportee, on the terms above; it returns the holder and the new roles' ids as
// DelegateRoles does.
func (s *Service) Delegate(ctx context.Context, c Caller, name HolderName, roleIDs []int, rights []RightSpec) (Holder, []int64, error) {
	holder, err := s.rightHolder(ctx, name)
	if err != nil {
		return holder, nil, err
	}
	reportee := c.Actor.ReporteeID
	if holder.PartyID == reportee {
		return holder, nil, refuse(BadInput, "a party cannot hold roles for itself")
	}
	q := NewStore(store.New(s.pool))
	defs, err := s.delegableRoles(ctx, q, c, roleIDs)
	if err != nil {
		return holder, nil, err
	}
	if err := knownServices(ctx, q, rights); err != nil {
		return holder, nil, err
	}
	ids, err := s.DelegateRoles(ctx, c.entry(reportee, ""), reportee, holder,
		Grant{Roles: defs, Rights: rights, MayDelegateRight: func(q Store, def RoleDefinition) error {
			return mayDelegateRight(ctx, q, c, def)
		}})
	return holder, ids, err
}

// delegableRoles loads the role definitions ids and checks the caller may delegate each.
func (s *Service) delegableRoles(ctx context.Context, q Store, c Caller, ids []int) ([]RoleDefinition, error) {
	defs := make([]RoleDefinition, 0, len(ids))
	for _, id := range ids {
		d, err := q.GetRoleDefinition(ctx, id, "", "")
		if errors.Is(err, store.ErrNotFound) || (err == nil && d.Local() && d.OwnerPartyID != c.Actor.ReporteeID) ||
			(err == nil && d.RoleType == SingleRightRoleType) { // a single right is delegated as a right
			return nil, refuse(BadInput, "there is no role definition %d that can be delegated for this reportee", id)
		}
		if err != nil {
			return nil, err
		}
		label := RoleLabel(d.ID, d.Code, d.Name)
		if d.RoleType == "External" {
			return nil, refuse(NotDelegable, "role %s comes from the business register and cannot be delegated", label)
		}
		if err := s.mayDelegate(ctx, q, c, d.ID, label); err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// knownServices refuses single rights on service editions that do not exist.
func knownServices(ctx context.Context, q Store, rights []RightSpec) error {
	keys := make([]store.ServiceKey, len(rights))
	for i, r := range rights {
		keys[i] = store.ServiceKey{Code: r.ServiceCode, Edition: r.ServiceEdition}
	}
	unknown, err := q.UnknownServices(ctx, keys)
	if err != nil || len(unknown) == 0 {
		return err
	}
	return refuse(BadInput, "there is no service %s edition %d", unknown[0].Code, unknown[0].Edition)
}

// mayDelegate checks that the caller may delegate (or take away) the role definition id, named label.
func (s *Service) mayDelegate(ctx context.Context, q Store, c Caller, id int, label string) error {
	if c.Rights.MainAdministrator() {
		return nil
	}
	subject, reportee := c.Principal.Subject(), c.Actor.ReporteeID
	held, err := q.HoldsRoleDefinition(ctx, subject, reportee, id)
	if err != nil {
		return err
	}
	if !held {
		return refuse(RoleNotHeld, "only a main administrator may delegate or take away a role they do not hold: you do not hold role %s", label)
	}
	missing, err := q.MissingDelegatableRights(ctx, subject, reportee, id)
	if err != nil || len(missing) == 0 {
		return err
	}
	labels := make([]string, len(missing))
	for i, r := range missing {
		labels[i] = RightLabel(r)
	}
	e := refuse(RightsNotHeld, "you may delegate or take away role %s only if you hold all its rights as delegatable rights; you lack %s",
		label, strings.Join(labels, ", "))
	e.Items = labels
	return e
}

// mayDelegateRight checks that the caller may delegate the single right of def.
func mayDelegateRight(ctx context.Context, q Store, c Caller, def RoleDefinition) error {
	if c.Rights.MainAdministrator() {
		return nil
	}
	missing, err := q.MissingDelegatableRights(ctx, c.Principal.Subject(), c.Actor.ReporteeID, def.ID)
	if err != nil || len(missing) == 0 {
		return err
	}
	return refuse(RightsNotHeld, "you may delegate the right %s only if you hold it as a delegatable right", RightLabel(missing[0]))
}
