package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/postbox/postbox/identity/password"
	"github.com/postbox/postbox/internal/ttlcache"
	"github.com/postbox/postbox/store"
)

// Login throttling: this many failures for one user name within the window lock it for a while.
const (
	MaxLoginFailures = 5
	FailureWindow    = 15 * time.Minute
	LockDuration     = 15 * time.Minute
)

// Session lifetimes: idle expiry slides with use, up to an absolute end.
const (
	SessionIdle = 30 * time.Minute
	SessionMax  = 12 * time.Hour
)

// ErrLocked is returned while a user name is locked after repeated failures.
type ErrLocked struct{ Until time.Time }

func (e *ErrLocked) Error() string {
	return fmt.Sprintf("too many failed logins for this user name; try again after %s", e.Until.UTC().Format(time.RFC3339))
}

// ErrCertificateRequired is returned when a login or call needs an enterprise certificate it lacks.
var ErrCertificateRequired = errors.New("this login needs the enterprise certificate of the user's organization on the TLS connection")

// Authenticator turns credentials into a Principal.
type Authenticator struct {
	q      *store.Queries
	tokens *TokenVerifier
	now    func() time.Time
	dummy  string // hash verified for unknown users, so they cost the same time as known ones
	// bearers remembers the principal of a verified token (by its hash) until it expires or for a short
	// while, so a client's calls with one token verify it and look its subject up once.
	bearers *ttlcache.Cache[[32]byte, Principal]
}

// bearerTTL bounds how long a verified token's principal is reused.
const bearerTTL = 30 * time.Second

// NewAuthenticator returns an authenticator; tokens may be nil when no token issuer is trusted.
func NewAuthenticator(q *store.Queries, tokens *TokenVerifier) (*Authenticator, error) {
	dummy, err := password.Hash("no such user")
	if err != nil {
		return nil, err
	}
	return &Authenticator{q: q, tokens: tokens, now: time.Now, dummy: dummy,
		bearers: ttlcache.New[[32]byte, Principal](bearerTTL, 100_000)}, nil
}

// PasswordLogin checks a user name (or national identity number) and password and opens a session.
// With forceEI it logs in an enterprise user, which needs cert to be a verified certificate of the
// user's organization. It returns the cookie value.
func (a *Authenticator) PasswordLogin(ctx context.Context, userName, pw string, forceEI bool, cert *x509.Certificate) (string, Session, error) {
	now := a.now()
	key := strings.ToLower(strings.TrimSpace(userName))
	if until, err := loginLockedUntil(ctx, a.q.DB(), key, now); err != nil {
		return "", Session{}, err
	} else if !until.IsZero() {
		return "", Session{}, &ErrLocked{Until: until}
	}
	login, err := FindLogin(ctx, a.q.DB(), strings.TrimSpace(userName))
	hash := login.PasswordHash
	if errors.Is(err, store.ErrNotFound) {
		hash = a.dummy
	} else if err != nil {
		return "", Session{}, err
	}
	ok, err := password.Verify(hash, pw)
	if err != nil {
		return "", Session{}, err
	}
	wantKind := "Person"
	if forceEI {
		wantKind = "EnterpriseUser"
	}
	if !ok || login.ID == 0 || login.Kind != wantKind {
		if err := recordLoginFailure(ctx, a.q.DB(), key, now, FailureWindow, MaxLoginFailures, LockDuration); err != nil {
			return "", Session{}, err
		}
		return "", Session{}, ErrBadCredentials
	}
	s := Session{LoginID: login.ID, SecurityLevel: 1}
	if forceEI {
		org, err := OrganizationOf(cert)
		if err != nil || org != login.OrganizationNumber {
			return "", Session{}, ErrCertificateRequired
		}
		s.SecurityLevel, s.EnterpriseOrg = 3, org
	}
	if err := clearLoginFailures(ctx, a.q.DB(), key); err != nil {
		return "", Session{}, err
	}
	// Logins are rare next to requests: a good moment to sweep sessions nobody can use any more.
	if err := deleteExpiredSessions(ctx, a.q.DB(), now); err != nil {
		return "", Session{}, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", Session{}, err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	hashed := sha256.Sum256([]byte(token))
	s.ExpiresAt, s.AbsoluteEnd = now.Add(SessionIdle), now.Add(SessionMax)
	if err := createSession(ctx, a.q.DB(), hashed[:], s); err != nil {
		return "", Session{}, err
	}
	return token, s, nil
}

// FromSession returns the principal of a session cookie, sliding its expiry. An enterprise user's
// session is only valid on a connection that still carries its organization's certificate.
func (a *Authenticator) FromSession(ctx context.Context, token string, cert *x509.Certificate) (Principal, error) {
	now := a.now()
	hashed := sha256.Sum256([]byte(token))
	s, err := touchSession(ctx, a.q.DB(), hashed[:], now, now.Add(SessionIdle))
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, ErrNoSession
	}
	if err != nil {
		return Principal{}, err
	}
	login, err := getLogin(ctx, a.q.DB(), s.LoginID)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, ErrNoSession
	}
	if err != nil {
		return Principal{}, err
	}
	p := Principal{Method: MethodPassword, SecurityLevel: s.SecurityLevel, Name: login.Name, UserName: login.UserName,
		LoginID: login.ID, PersonID: login.PersonID}
	if login.Kind == "EnterpriseUser" {
		if org, err := OrganizationOf(cert); err != nil || org != s.EnterpriseOrg {
			return Principal{}, ErrCertificateRequired
		}
		p.Method, p.OrganizationNumber, p.OrganizationID = MethodEnterpriseUser, login.OrganizationNumber, login.OrganizationID
	}
	return p, nil
}

// Logout ends the session of a cookie value. Ending a session that is unknown or already over is no
// error: logout is idempotent.
func (a *Authenticator) Logout(ctx context.Context, token string) error {
	hashed := sha256.Sum256([]byte(token))
	return deleteSession(ctx, a.q.DB(), hashed[:])
}

// FromBearer returns the principal of a bearer token.
func (a *Authenticator) FromBearer(ctx context.Context, raw string) (Principal, error) {
	if a.tokens == nil {
		return Principal{}, &TokenError{Reason: "no token issuer is trusted by this service"}
	}
	hash := sha256.Sum256([]byte(raw))
	if p, ok := a.bearers.Get(hash); ok {
		return p, nil
	}
	c, err := a.tokens.Verify(raw)
	if err != nil {
		return Principal{}, err
	}
	p, err := a.bearerPrincipal(ctx, c)
	if err != nil {
		return Principal{}, err
	}
	a.bearers.Set(hash, p, c.ExpiresAt.Time)
	return p, nil
}

func (a *Authenticator) bearerPrincipal(ctx context.Context, c Claims) (Principal, error) {
	p := Principal{Scopes: strings.Fields(c.Scope), Scoped: true}
	switch {
	case c.PID != "":
		person, err := NewStore(a.q).FindParty(ctx, c.PID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && person.Kind != "Person") {
			return Principal{}, &TokenError{Reason: "the token's person is not known to this service"}
		}
		if err != nil {
			return Principal{}, err
		}
		p.Method, p.PersonID, p.Name, p.SecurityLevel = MethodPersonToken, person.ID, person.Name, c.securityLevel()
	default:
		org, err := a.organization(ctx, c.organizationNumber())
		if err != nil {
			return Principal{}, err
		}
		p.Method, p.OrganizationNumber, p.OrganizationID, p.Name, p.SecurityLevel = MethodOrganizationToken, org.number, org.id, org.name, 3
	}
	return p, nil
}

// FromCertificate returns the principal of a verified enterprise certificate: its organization, level 3.
func (a *Authenticator) FromCertificate(ctx context.Context, cert *x509.Certificate) (Principal, error) {
	number, err := OrganizationOf(cert)
	if err != nil {
		return Principal{}, err
	}
	org, err := a.organization(ctx, number)
	if err != nil {
		return Principal{}, err
	}
	return Principal{Method: MethodCertificate, SecurityLevel: 3, OrganizationNumber: org.number, OrganizationID: org.id, Name: org.name}, nil
}

type organization struct {
	id     int64
	number string
	name   string
}

// organization finds a calling organization. Service owners need not be parties of the dataset, so an
// unknown organization acts with no party of its own (id 0): it represents nothing but may call the
// service-owner area.
func (a *Authenticator) organization(ctx context.Context, number string) (organization, error) {
	if !OrganizationNumberPattern.MatchString(number) {
		return organization{}, &TokenError{Reason: "the caller's organization number is missing or malformed"}
	}
	p, err := NewStore(a.q).FindParty(ctx, number)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return organization{number: number, name: number}, nil
	case err != nil:
		return organization{}, err
	}
	return organization{id: p.ID, number: number, name: p.Name}, nil
}

var oidOrganizationIdentifier = asn1.ObjectIdentifier{2, 5, 4, 97}

// OrganizationOf reads the organization number of an enterprise certificate: the subject's
// serialNumber, or the digits after NTRNO- in organizationIdentifier.
func OrganizationOf(cert *x509.Certificate) (string, error) {
	if cert == nil {
		return "", ErrCertificateRequired
	}
	if OrganizationNumberPattern.MatchString(cert.Subject.SerialNumber) {
		return cert.Subject.SerialNumber, nil
	}
	for _, n := range cert.Subject.Names {
		if n.Type.Equal(oidOrganizationIdentifier) {
			if s, ok := n.Value.(string); ok {
				if num, ok := strings.CutPrefix(s, "NTRNO-"); ok && OrganizationNumberPattern.MatchString(num) {
					return num, nil
				}
			}
		}
	}
	return "", errors.New("the certificate names no organization number")
}
