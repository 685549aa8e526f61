package access

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Removals of roles and rights. Each is one change with its audit entries and events; roles from the
// business register (RoleType External) are never taken here.

// Who is the {who} of a role's deletion by the user: the party the role is held for or by (Party, with
// the caller's rights for it in the Caller), or the login of its holder (Login).
type Who struct {
	Party identity.Party
	Login *identity.Login
}

// DeleteRole deletes the role roleRef (its RoleId as the client wrote it). Its holder may; anyone else
// must be access manager for the role's reportee. A caller who is neither is refused (NotAccessManager)
// whether or not the role exists; only an access manager of the party {who} learns that it is not there
// (NotFound).
func (s *Service) DeleteRole(ctx context.Context, c Caller, who Who, roleRef string) error {
	manages := c.Rights.AccessManager()
	if who.Login != nil {
		manages = c.Principal.Subject().LoginID == who.Login.ID
	}
	notThere := func() error {
		if manages {
			return refuse(NotFound, "there is no role %s for %q", roleRef, c.Who)
		}
		return RoleRefused(c.Who, roleRef)
	}
	id := PositiveID(roleRef)
	if id == 0 {
		return notThere()
	}
	role, err := NewStore(store.New(s.pool)).GetDelegatedRole(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return notThere()
	}
	if err != nil {
		return err
	}
	rights, known := c.Rights, false
	var belongs bool
	if l := who.Login; l != nil {
		belongs = role.HolderLoginID == l.ID || (l.PersonID != 0 && (role.HolderPartyID == l.PersonID || role.ReporteeID == l.PersonID))
	} else {
		belongs = role.ReporteeID == who.Party.ID || role.HolderPartyID == who.Party.ID
		known = role.ReporteeID == who.Party.ID
	}
	if !belongs {
		return notThere()
	}
	subject := c.Principal.Subject()
	holder := (subject.PartyID != 0 && subject.PartyID == role.HolderPartyID) || (subject.LoginID != 0 && subject.LoginID == role.HolderLoginID)
	if !holder {
		if !known {
			if rights, err = s.rights.For(ctx, c.Principal, role.ReporteeID); err != nil {
				return err
			}
		}
		if !rights.AccessManager() {
			return RoleRefused(c.Who, roleRef)
		}
	}
	return s.deleteRole(ctx, c, role, nil)
}

// RoleRefused is the one answer to a role delete the caller may not make, whatever exists.
func RoleRefused(who, roleRef string) *Error {
	return refuse(NotAccessManager,
		"role %s of %q is not one you may delete: only its holder or an access manager (ADMAI) or main administrator (HADM) for its reportee may",
		roleRef, who)
}

// PositiveID reads an id of a path or query; anything else is 0, which names nothing.
func PositiveID(raw string) int64 {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// deleteRole deletes a role with its audit entry and event, when allowed (if not nil) lets the caller.
func (s *Service) deleteRole(ctx context.Context, c Caller, role DelegatedRole, allowed func(q Store, label string) error) error {
	label := RoleLabel(role.RoleDefinitionID, role.RoleDefinitionCode, role.RoleName)
	if role.RoleType == "External" {
		return fromRegister(role.RoleID, label)
	}
	e := c.entry(role.ReporteeID, AuditDeleteRole)
	e.RoleID, e.RoleDefinitionID, e.RightHolder = role.RoleID, role.RoleDefinitionID, role.HolderName
	e.Summary = fmt.Sprintf("deleted role %s held by %s", label, role.HolderName)
	return s.Change(ctx, func(q Store) error {
		if allowed != nil {
			if err := allowed(q, label); err != nil {
				return err
			}
		}
		return deleteAudited(ctx, q, e, RoleDeleted(s.events, role), func() error { return q.DeleteDelegatedRole(ctx, role.RoleID) })
	})
}

func fromRegister(id int64, label string) *Error {
	return refuse(FromRegister, "role %d (%s) comes from the business register and cannot be deleted here", id, label)
}

// deleteAudited runs a delete, its audit entry and its event.
func deleteAudited(ctx context.Context, q Store, e audit.Entry, event store.Event, del func() error) error {
	if err := del(); err != nil {
		return err
	}
	if err := q.AppendAudit(ctx, e); err != nil {
		return err
	}
	return q.AppendEvents(ctx, event)
}

// DeleteLocalRight deletes right rightRef (its RightID as the client wrote it) from a local role of the
// reportee, for an access manager. Every right comes from a role definition; a right of a platform role
// is removed by deleting the role that gives it (PlatformRole).
func (s *Service) DeleteLocalRight(ctx context.Context, c Caller, rightRef string) error {
	reportee := c.Actor.ReporteeID
	id := PositiveID(rightRef)
	r, err := NewStore(store.New(s.pool)).GetDefinedRight(ctx, id)
	if errors.Is(err, store.ErrNotFound) || id == 0 || (err == nil && r.OwnerPartyID != 0 && r.OwnerPartyID != reportee) {
		return refuse(NotFound, "there is no right %s for %q", rightRef, c.Who)
	}
	if err != nil {
		return err
	}
	if r.OwnerPartyID == 0 {
		return refuse(PlatformRole, "right %d belongs to platform role %d (%s), which cannot be changed; delete the role instead", id, r.RoleDefinitionID, r.RoleName)
	}
	e := c.entry(reportee, AuditDeleteRight)
	e.RightID, e.RoleDefinitionID = id, r.RoleDefinitionID
	e.Summary = fmt.Sprintf("deleted right %s from local role %s", RightLabel(r.Right), RoleLabel(r.RoleDefinitionID, "", r.RoleName))
	changed := s.events.RoleDefinitionEvent(events.RoleDefinitionChanged, events.RoleDefinition{RoleDefinitionID: r.RoleDefinitionID,
		ReporteeID: reportee, Name: r.RoleName})
	return s.Change(ctx, func(q Store) error {
		return deleteAudited(ctx, q, e, changed, func() error { return q.DeleteLocalRight(ctx, id) })
	})
}

// receiver is a party that receives the reportee's delegations, with its receiverId as the client wrote
// it, for details; party is zero when no party has that id, so it holds nothing.
type receiver struct {
	party identity.Party
	ref   string
}

// receiverOf finds the receiver raw names (FindReceiver) of a removal.
func (s *Service) receiverOf(ctx context.Context, raw string) (receiver, error) {
	p, err := s.FindReceiver(ctx, raw)
	if errors.Is(err, store.ErrNotFound) {
		return receiver{ref: raw}, nil
	}
	return receiver{party: p, ref: raw}, err
}

// RemoveRole takes role roleRef from the receiver rawReceiver names, on the same terms as it is delegated
// (MayDelegate).
func (s *Service) RemoveRole(ctx context.Context, c Caller, rawReceiver, roleRef string) error {
	receiver, err := s.receiverOf(ctx, rawReceiver)
	if err != nil {
		return err
	}
	role, err := NewStore(store.New(s.pool)).GetDelegatedRole(ctx, PositiveID(roleRef))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (receiver.party.ID == 0 || role.ReporteeID != c.Actor.ReporteeID || role.HolderPartyID != receiver.party.ID)) {
		return refuse(NotFound, "%q holds no role %s for %q", receiver.ref, roleRef, c.Who)
	}
	if err != nil {
		return err
	}
	return s.deleteRole(ctx, c, role, func(q Store, label string) error {
		return s.mayDelegate(ctx, q, c, role.RoleDefinitionID, label)
	})
}

// RemoveRight takes the right rightRef (a RightID) from the receiver rawReceiver names. A right reaches a
// receiver only with its roles: the right (its service edition and action, whichever role definition's
// RightID names it) is taken by deleting the receiver's roles that give it. When one of them gives other
// rights too, that is refused naming the role (RightComesWithRole): a removal never takes more than was
// asked.
func (s *Service) RemoveRight(ctx context.Context, c Caller, rawReceiver, rightRef string) error {
	receiver, err := s.receiverOf(ctx, rawReceiver)
	if err != nil {
		return err
	}
	reportee := c.Actor.ReporteeID
	notThere := refuse(NotFound, "%q holds no right %s for %q", receiver.ref, rightRef, c.Who)
	right, err := NewStore(store.New(s.pool)).GetDefinedRight(ctx, PositiveID(rightRef))
	if errors.Is(err, store.ErrNotFound) || receiver.party.ID == 0 {
		return notThere
	}
	if err != nil {
		return err
	}
	return s.Change(ctx, func(q Store) error {
		roles, err := q.RolesGranting(ctx, store.Subject{PartyID: receiver.party.ID}, reportee, right.Right)
		if err != nil {
			return err
		}
		if len(roles) == 0 {
			return notThere
		}
		for _, r := range roles {
			label := RoleLabel(r.RoleDefinitionID, r.RoleDefinitionCode, r.RoleName)
			switch {
			case r.RoleType == "External":
				return fromRegister(r.RoleID, label)
			case r.Rights > 1:
				return refuse(RightComesWithRole, "%s comes to %s with role %d %s, which gives other rights too: delete that role to take them all",
					RightLabel(right.Right), r.HolderName, r.RoleID, label)
			}
			if err := s.mayDelegate(ctx, q, c, r.RoleDefinitionID, label); err != nil {
				return err
			}
		}
		deleted := make([]store.Event, 0, len(roles))
		for _, r := range roles {
			if err := q.DeleteDelegatedRole(ctx, r.RoleID); err != nil {
				return err
			}
			deleted = append(deleted, RoleDeleted(s.events, r.DelegatedRole))
			e := c.entry(reportee, AuditDeleteRight)
			e.RightID, e.RoleID, e.RoleDefinitionID, e.RightHolder = right.RightID, r.RoleID, r.RoleDefinitionID, r.HolderName
			e.Summary = fmt.Sprintf("deleted right %s of %s with role %s, which gave only it", RightLabel(right.Right), r.HolderName,
				RoleLabel(r.RoleDefinitionID, r.RoleDefinitionCode, r.RoleName))
			if err := q.AppendAudit(ctx, e); err != nil {
				return err
			}
		}
		return q.AppendEvents(ctx, deleted...)
	})
}
