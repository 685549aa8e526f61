// Package serviceowner is the room of what an agency may read about the parties of its services (the
// service-owner area, /api/serviceowner/…): organizations and their contacts, the roles and rights a
// subject holds for a reportee on the owner's services, the platform's role definitions, and the parties
// a subject can represent. A service of another owner is refused, never answered: answering would tell
// who holds rights on services that are not the caller's. Details never repeat a subject, reportee or
// path party the client sent: it may be a national identity number, and refusals are logged with their
// detail. Its lists are its own (queries.go); the party and organization rows it shares with identity are
// read through store.
package serviceowner

import (
	"context"
	"errors"
	"strconv"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/store"
)

// Service answers the service-owner area's reads.
type Service struct {
	q       *store.Queries
	parties *identity.Parties
}

// New returns the service over q, finding parties through parties.
func New(q *store.Queries, parties *identity.Parties) *Service {
	return &Service{q: q, parties: parties}
}

// Kind is a kind of refused request.
type Kind int

// Kinds of refusal.
const (
	BadInput         Kind = iota + 1
	NotFound              // no such organization, party, contact or role definition
	ServiceNotOwned       // a service of another owner
	RoleNotRelevant       // a role definition that grants no right on the owner's services
	NotOwnerLogin         // a caller that is not an organization (by token or certificate)
	NotAServiceOwner      // an organization that is not a registered service owner
	NotKeyOwner           // an API key that is not the service owner's own
)

// Error is a refused request.
type Error = refusal.Error[Kind]

// Organization is the organization who names: an organization number or its reportee id.
func (s *Service) Organization(ctx context.Context, who string) (store.Organization, error) {
	missing := refusal.New(NotFound, "the organization does not exist")
	if !identity.OrganizationNumberPattern.MatchString(who) && !identity.ReporteeIDPattern.MatchString(who) {
		return store.Organization{}, missing
	}
	party, err := s.parties.Find(ctx, who)
	if err == nil && party.Kind != "Organization" {
		err = store.ErrNotFound
	}
	var org store.Organization
	if err == nil {
		org, err = s.q.GetOrganization(ctx, party.ID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return org, missing
	}
	return org, err
}

// Party is the person or organization that value names (a national identity number, an organization
// number or a reportee id), for the required query parameter param.
func (s *Service) Party(ctx context.Context, param, value string) (identity.Party, error) {
	if value == "" {
		return identity.Party{}, refusal.New(BadInput, "%s is required", param)
	}
	if !identity.SSNPattern.MatchString(value) && !identity.OrganizationNumberPattern.MatchString(value) && !identity.ReporteeIDPattern.MatchString(value) {
		return identity.Party{}, refusal.New(BadInput, "%s must be a national identity number (11 digits), an organization number (9 digits) or a reportee id", param)
	}
	party, err := s.parties.Find(ctx, value)
	if errors.Is(err, store.ErrNotFound) {
		return party, refusal.New(NotFound, "the %s is not a known person or organization", param)
	}
	return party, err
}

// CheckService refuses a list narrowed to a service (f; Code "" narrows nothing) that is not the owner's.
func (s *Service) CheckService(ctx context.Context, owner string, f store.ServiceFilter) error {
	if f.Code == "" {
		return nil
	}
	ok, err := s.q.OwnsService(ctx, owner, f)
	if err != nil || ok {
		return err
	}
	name := f.Code
	if f.Edition != 0 {
		name += "/" + strconv.Itoa(f.Edition)
	}
	return refusal.New(ServiceNotOwned, "service %s is not a service of %s", name, owner)
}

// CheckRole refuses a list narrowed to a role definition (by id or by code) that does not exist, or that
// grants no right on the owner's services (as for a service of another owner).
func (s *Service) CheckRole(ctx context.Context, owner string, id int, code string) error {
	d, err := access.NewStore(s.q).GetRoleDefinition(ctx, id, code, owner)
	if errors.Is(err, store.ErrNotFound) {
		name := code
		if name == "" {
			name = strconv.Itoa(id)
		}
		return refusal.New(BadInput, "there is no role definition %s", name)
	}
	if err != nil {
		return err
	}
	if len(d.Rights) == 0 { // it has only the rights on the owner's services
		return refusal.New(RoleNotRelevant, "role definition %d grants no right on the services of %s", d.ID, owner)
	}
	return nil
}

// Holding asks for what holder holds for reportee on the owner's services; a person acting for themself
// holds the automatic base role (main administrator).
func Holding(owner string, holder, reportee identity.Party) access.Holding {
	return access.Holding{Holder: store.Subject{PartyID: holder.ID}, ReporteeID: reportee.ID,
		Self: holder.Kind == "Person" && holder.ID == reportee.ID, Owner: owner}
}

// RoleDefinition is role definition ref (its id as the client wrote it) with the rights it grants on the
// owner's services.
func (s *Service) RoleDefinition(ctx context.Context, owner, ref string) (access.RoleDefinition, error) {
	id, err := strconv.Atoi(ref)
	if err != nil || id <= 0 {
		return access.RoleDefinition{}, refusal.New(NotFound, "there is no role definition %s", ref)
	}
	d, err := access.NewStore(s.q).GetRoleDefinition(ctx, id, "", owner)
	if errors.Is(err, store.ErrNotFound) {
		return d, refusal.New(NotFound, "there is no role definition %d", id)
	}
	return d, err
}

// PersonalContact is the person personRef (a reportee id) among the organization's personal contacts:
// one who holds a role for it.
func (s *Service) PersonalContact(ctx context.Context, org store.Organization, personRef string) (identity.Party, error) {
	missing := refusal.New(NotFound, "the organization has no such personal contact")
	if !identity.ReporteeIDPattern.MatchString(personRef) {
		return identity.Party{}, missing
	}
	person, err := s.parties.Find(ctx, personRef)
	if errors.Is(err, store.ErrNotFound) || (err == nil && person.Kind != "Person") {
		return person, missing
	}
	if err != nil {
		return person, err
	}
	holds, err := identity.NewStore(s.q).HoldsRoleFor(ctx, store.Subject{PartyID: person.ID}, org.ID)
	if err == nil && !holds {
		err = missing
	}
	return person, err
}

// ReporteeFilter narrows a list of the parties a subject can represent: to a service of the owner, or to a
// role definition (RoleDefinitionID, 0 for none) that grants a right on one; the zero value narrows nothing.
type ReporteeFilter struct {
	Service          store.ServiceFilter
	RoleDefinitionID int
}

// reporteeQuery checks that f names only the owner's service and role, and asks for subject's parties.
func (s *Service) reporteeQuery(ctx context.Context, owner string, subject identity.Party, f ReporteeFilter) (ReporteeQuery, error) {
	rq := ReporteeQuery{SubjectID: subject.ID, Service: f.Service, RoleDefinitionID: f.RoleDefinitionID}
	if err := s.CheckService(ctx, owner, f.Service); err != nil {
		return rq, err
	}
	if f.RoleDefinitionID != 0 {
		if err := s.CheckRole(ctx, owner, f.RoleDefinitionID, ""); err != nil {
			return rq, err
		}
	}
	if subject.Kind == "Person" && f.RoleDefinitionID == 0 {
		rq.SelfID = subject.ID
	}
	return rq, nil
}
