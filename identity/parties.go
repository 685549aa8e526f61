package identity

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/postbox/postbox/internal/ttlcache"
	"github.com/postbox/postbox/store"
)

// Parties finds the parties that {who} and other parameters name, and a caller's rights for them.
// Parties change rarely and every request needs one: they are kept for a short while.
type Parties struct {
	q      *store.Queries
	rights *Rights
	cache  *ttlcache.Cache[string, Party]
}

// NewParties returns the finder over q, keeping up to size parties for ttl.
func NewParties(q *store.Queries, rights *Rights, ttl time.Duration, size int) *Parties {
	return &Parties{q: q, rights: rights, cache: ttlcache.New[string, Party](ttl, size)}
}

// NotReportee is the refusal of a party the caller may not act for, or that does not exist: the two get
// the same answer, so it never reveals who exists.
type NotReportee struct{ AsWritten string }

func (e *NotReportee) Error() string { return fmt.Sprintf("you may not act for %q", e.AsWritten) }

// Represented finds the party key names and p's rights for it; asWritten names it as the client did.
// A party p may not represent is refused like one that does not exist (NotReportee).
func (ps *Parties) Represented(ctx context.Context, p Principal, key, asWritten string) (Party, RightSet, error) {
	party, err := ps.Find(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return party, RightSet{}, &NotReportee{AsWritten: asWritten}
	}
	if err != nil {
		return party, RightSet{}, err
	}
	rights, err := ps.rights.For(ctx, p, party.ID)
	if err != nil {
		return party, rights, err
	}
	if !rights.Represents() {
		return party, rights, &NotReportee{AsWritten: asWritten}
	}
	return party, rights, nil
}

// Login finds a login by user name (any case) or by the person's national identity number: {who} names
// one where a role's holder is a user rather than a party.
func (ps *Parties) Login(ctx context.Context, name string) (Login, error) {
	return FindLogin(ctx, ps.q.DB(), name)
}

// Find finds a party by reportee id ("r" + id), national identity number or organization number.
func (ps *Parties) Find(ctx context.Context, key string) (Party, error) {
	if p, ok := ps.cache.Get(key); ok {
		return p, nil
	}
	var (
		p   Party
		err error
	)
	if id, ok := ParseReporteeID(key); ok {
		if id == 0 {
			return p, store.ErrNotFound
		}
		p, err = NewStore(ps.q).GetParty(ctx, id)
	} else {
		p, err = NewStore(ps.q).FindParty(ctx, key)
	}
	if err == nil {
		ps.cache.Set(key, p)
	}
	return p, err
}

// NoSuchOrganization is the one answer to an organization number that does not name an organization the
// caller may represent: one that does not exist and one the caller may not represent are told apart by
// nothing, so the answer never tells which organization numbers exist.
type NoSuchOrganization struct{ Number string }

func (e *NoSuchOrganization) Error() string {
	return fmt.Sprintf("there is no organization %q you may represent", e.Number)
}

// RepresentedOrganization is the organization of number that p may represent, or NoSuchOrganization.
func (ps *Parties) RepresentedOrganization(ctx context.Context, p Principal, number string) (store.Organization, error) {
	notThere := &NoSuchOrganization{Number: number}
	if !OrganizationNumberPattern.MatchString(number) {
		return store.Organization{}, notThere
	}
	party, err := ps.Find(ctx, number)
	if errors.Is(err, store.ErrNotFound) || (err == nil && party.Kind != "Organization") {
		return store.Organization{}, notThere
	}
	if err != nil {
		return store.Organization{}, err
	}
	rights, err := ps.rights.For(ctx, p, party.ID)
	if err != nil {
		return store.Organization{}, err
	}
	if !rights.Represents() {
		return store.Organization{}, notThere
	}
	org, err := ps.q.GetOrganization(ctx, party.ID)
	if errors.Is(err, store.ErrNotFound) {
		return org, notThere
	}
	return org, err
}

// SSNPattern is the shape of a national identity number.
var SSNPattern = regexp.MustCompile(`^[0-9]{11}$`)

// SameName compares names as people type them: in any case, with any run of blanks as one.
func SameName(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// ErrNoSuchPerson is the one answer to a national identity number and last name that do not name a
// person the caller may represent: an unknown number, a name that does not match and a person the
// caller may not represent are told apart by nothing.
var ErrNoSuchPerson = errors.New("no person you may represent has this national identity number and last name")

// PersonNamed is the person with national identity number ssn and lastName whom p may represent, or
// ErrNoSuchPerson.
func (ps *Parties) PersonNamed(ctx context.Context, p Principal, ssn, lastName string) (Party, error) {
	party, err := ps.Find(ctx, ssn)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (party.Kind != "Person" || !SameName(party.LastName, lastName))) {
		return Party{}, ErrNoSuchPerson
	}
	if err != nil {
		return party, err
	}
	rights, err := ps.rights.For(ctx, p, party.ID)
	if err == nil && !rights.Represents() {
		err = ErrNoSuchPerson
	}
	return party, err
}
