package access

import (
	"context"
	"errors"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// HolderName names the right holder of a delegation as the request does: a person (SocialSecurityNumber
// and LastName), an organization (OrganizationNumber and Name) or an enterprise user (UserName and
// OrganizationNumber).
type HolderName struct {
	SocialSecurityNumber, LastName, OrganizationNumber, Name, UserName string
}

// rightHolder identifies the right holder n names. An identifier and a name that do not belong together
// get the same answer whether the identifier exists or not (HolderMismatch), so the answer never reveals
// who a national identity number belongs to.
func (s *Service) rightHolder(ctx context.Context, n HolderName) (Holder, error) {
	switch {
	case n.SocialSecurityNumber != "":
		if n.OrganizationNumber != "" || n.UserName != "" {
			return Holder{}, refuse(BadInput, "name one right holder: a person (SocialSecurityNumber, LastName), an organization (OrganizationNumber, Name) or an enterprise user (UserName, OrganizationNumber)")
		}
		if !identity.SSNPattern.MatchString(n.SocialSecurityNumber) {
			return Holder{}, refuse(BadInput, "SocialSecurityNumber must be 11 digits")
		}
		if n.LastName == "" {
			return Holder{}, refuse(BadInput, "LastName is required with SocialSecurityNumber")
		}
		p, err := s.namedParty(ctx, n.SocialSecurityNumber, "Person", func(p identity.Party) bool { return identity.SameName(p.LastName, n.LastName) },
			"national identity number and last name")
		return Holder{PartyID: p.ID, Name: p.Name}, err
	case n.UserName != "":
		if !identity.OrganizationNumberPattern.MatchString(n.OrganizationNumber) {
			return Holder{}, refuse(BadInput, "an enterprise user is named by UserName and OrganizationNumber (9 digits)")
		}
		l, err := identity.FindLogin(ctx, s.pool, n.UserName)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (l.Kind != "EnterpriseUser" || l.OrganizationNumber != n.OrganizationNumber)) {
			return Holder{}, holderMismatch("user name and organization number")
		}
		return Holder{LoginID: l.ID, Name: l.UserName}, err
	case n.OrganizationNumber != "":
		if !identity.OrganizationNumberPattern.MatchString(n.OrganizationNumber) {
			return Holder{}, refuse(BadInput, "OrganizationNumber must be 9 digits")
		}
		if n.Name == "" {
			return Holder{}, refuse(BadInput, "Name is required with OrganizationNumber")
		}
		p, err := s.namedParty(ctx, n.OrganizationNumber, "Organization", func(p identity.Party) bool { return identity.SameName(p.Name, n.Name) },
			"organization number and name")
		if err == nil && p.Status != "" && p.Status != "Active" {
			return Holder{}, refuse(BadInput, "organization %s is not active and cannot receive roles", p.OrganizationNumber)
		}
		return Holder{PartyID: p.ID, Name: p.Name}, err
	}
	return Holder{}, refuse(BadInput, "name the right holder: SocialSecurityNumber and LastName for a person, OrganizationNumber and Name for an organization, or UserName and OrganizationNumber for an enterprise user")
}

// namedParty finds the party of kind identified by number whose name matches; what names the pair of
// fields in the answer when they do not identify one together.
func (s *Service) namedParty(ctx context.Context, number, kind string, matches func(identity.Party) bool, what string) (identity.Party, error) {
	p, err := s.parties.Find(ctx, number)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (p.Kind != kind || !matches(p))) {
		return identity.Party{}, holderMismatch(what)
	}
	return p, err
}

func holderMismatch(what string) *Error {
	return refuse(HolderMismatch, "the %s do not identify a right holder together", what)
}
