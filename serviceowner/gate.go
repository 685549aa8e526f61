package serviceowner

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/internal/ttlcache"
	"github.com/postbox/postbox/store"
)

// Gate admits callers to the service-owner area and keeps the pseudonym key of its audit log. It
// remembers the service owner of each calling organization (also "none") for a while, as API keys are.
type Gate struct {
	q      *store.Queries
	log    *slog.Logger
	owners *ttlcache.Cache[string, cachedOwner]
	mu     sync.Mutex
	key    []byte // the audit pseudonym key, read once
}

type cachedOwner struct {
	owner store.ServiceOwner
	err   error
}

// NewGate returns the gate over q, remembering owners for ttl.
func NewGate(q *store.Queries, log *slog.Logger, ttl time.Duration) *Gate {
	return &Gate{q: q, log: log, owners: ttlcache.New[string, cachedOwner](ttl, 10_000)}
}

// Admit is the service owner p calls the area as: an organization (by organization token or enterprise
// certificate) that is a registered service owner, calling with an API key of its own (key; the zero key
// when the request has none).
func (g *Gate) Admit(ctx context.Context, p identity.Principal, key store.APIKey) (store.ServiceOwner, error) {
	if p.Method != identity.MethodOrganizationToken && p.Method != identity.MethodCertificate {
		return store.ServiceOwner{}, refusal.New(NotOwnerLogin,
			"the service-owner area needs an organization token or an enterprise certificate (?ForceEIAuthentication)")
	}
	owner, err := g.ownerOf(ctx, p.OrganizationNumber)
	if errors.Is(err, store.ErrNotFound) {
		return owner, refusal.New(NotAServiceOwner, "organization %s is not a registered service owner", p.OrganizationNumber)
	}
	if err != nil {
		return owner, err
	}
	if key.ServiceOwnerCode == nil || *key.ServiceOwnerCode != owner.Code {
		return owner, refusal.New(NotKeyOwner, "the API key does not belong to service owner %s", owner.Code)
	}
	return owner, nil
}

// ownerOf is the service owner of an organization number, remembered.
func (g *Gate) ownerOf(ctx context.Context, organizationNumber string) (store.ServiceOwner, error) {
	if o, ok := g.owners.Get(organizationNumber); ok {
		return o.owner, o.err
	}
	owner, err := g.q.ServiceOwnerByOrganization(ctx, organizationNumber)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return owner, err
	}
	g.owners.Set(organizationNumber, cachedOwner{owner, err})
	return owner, err
}

// Pseudonym is how the audit log writes v: organization numbers and reportee ids as they are, anything
// else (national identity numbers, e-mail addresses, phone numbers, whatever a client sent that is none
// of these) as a keyed hash, e.g. "hmac:3f1c2a9b0d4e5f61". The same value always gives the same pseudonym
// under one key.
func (g *Gate) Pseudonym(ctx context.Context, v string) string {
	if identity.OrganizationNumberPattern.MatchString(v) || identity.ReporteeIDPattern.MatchString(v) {
		return v
	}
	m := hmac.New(sha256.New, g.auditKey(ctx))
	m.Write([]byte(strings.ToLower(strings.TrimSpace(v))))
	return "hmac:" + hex.EncodeToString(m.Sum(nil)[:8])
}

// auditKey is the database's pseudonym key. Should it be unreadable, a random key of this process is used
// for the moment (pseudonyms then do not match across processes, but nothing is logged in clear).
func (g *Gate) auditKey(ctx context.Context) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.key != nil {
		return g.key
	}
	key, err := g.q.AuditPseudonymKey(ctx)
	if err != nil {
		g.log.ErrorContext(ctx, "reading the audit pseudonym key failed; using a key of this process", "err", err)
		key = make([]byte, 32)
		_, _ = rand.Read(key)
		return key
	}
	g.key = key
	return key
}
