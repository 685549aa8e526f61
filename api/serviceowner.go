package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/ttlcache"
	"github.com/postbox/postbox/store"
)

// The service-owner area (/api/serviceowner/…): who may call it, the audit log of every call, and keyset
// paging with continuation tokens. The handlers are in serviceowner_handlers.go.

const ctxServiceOwner = "postbox.serviceOwner"

// serviceOwnerOf returns the calling service owner; only set behind requireServiceOwner.
func serviceOwnerOf(c *gin.Context) store.ServiceOwner {
	o, _ := c.Get(ctxServiceOwner)
	return o.(store.ServiceOwner)
}

// authenticateServiceOwner authenticates like authenticate, except that ?ForceEIAuthentication asks for
// the enterprise certificate of the TLS connection: when there is one, the call is authenticated by it
// alone (a token or cookie sent along is not used). The interface lets every service-owner call carry the
// flag and take the token provider's token or a certificate, so without a certificate a bearer token is
// authenticated as usual; with neither the call gets 403 certificate-required.
func (s *Server) authenticateServiceOwner(c *gin.Context) {
	_, forceEI := c.GetQuery("ForceEIAuthentication")
	cert := clientCertificate(c.Request)
	if !forceEI || (cert == nil && c.GetHeader("Authorization") != "") {
		s.authenticate(c)
		return
	}
	if _, err := identity.OrganizationOf(cert); err != nil {
		abort(c, problem.New(http.StatusForbidden, "certificate-required",
			"?ForceEIAuthentication needs a bearer token or a verified enterprise certificate that names its organization on the TLS connection"))
		return
	}
	p, err := s.auth.FromCertificate(c.Request.Context(), cert)
	if err != nil {
		abort(c, authError(err))
		return
	}
	c.Set(ctxPrincipal, p)
	c.Next()
}

// requireServiceOwner admits organizations (by organization token or enterprise certificate) that are
// registered service owners and call with an API key of their own.
func (s *Server) requireServiceOwner(c *gin.Context) {
	p := principalOf(c)
	if p.Method != identity.MethodOrganizationToken && p.Method != identity.MethodCertificate {
		abort(c, problem.New(http.StatusForbidden, "serviceowner-authentication",
			"the service-owner area needs an organization token or an enterprise certificate (?ForceEIAuthentication)"))
		return
	}
	owner, err := s.serviceOwner(c.Request.Context(), p.OrganizationNumber)
	if errors.Is(err, store.ErrNotFound) {
		abort(c, problem.New(http.StatusForbidden, "not-a-service-owner", "organization %s is not a registered service owner", p.OrganizationNumber))
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	key, _ := apiKeyOf(c)
	if key.ServiceOwnerCode == nil || *key.ServiceOwnerCode != owner.Code {
		abort(c, problem.New(http.StatusForbidden, "api-key-owner", "the API key does not belong to service owner %s", owner.Code))
		return
	}
	c.Set(ctxServiceOwner, owner)
	c.Next()
}

// auditServiceOwner writes one audit line per service-owner request, refused ones included: who called
// (organization, service owner, API key, how it authenticated), which endpoint, whom it asked about, and
// the outcome. National identity numbers, e-mail addresses and phone numbers never appear in clear: they
// are logged as a keyed hash (pseudonymise); organization numbers and reportee ids are logged as they are.
func (s *Server) auditServiceOwner(c *gin.Context) {
	c.Next()
	ctx := c.Request.Context()
	status := c.Writer.Status()
	if len(c.Errors) > 0 && !c.Writer.Written() { // the problem is written on the way out, after this
		p, _ := problem.From(c.Errors[0].Err)
		status = p.Status
	}
	attrs := []slog.Attr{
		slog.String("audit", "serviceowner"),
		slog.String("method", c.Request.Method),
		slog.String("endpoint", c.FullPath()),
		slog.Int("status", status),
		slog.String("request_id", requestID(c)),
	}
	if v, ok := c.Get(ctxPrincipal); ok {
		p := v.(identity.Principal)
		attrs = append(attrs, slog.String("caller_org", p.OrganizationNumber), slog.String("auth", string(p.Method)))
	}
	if v, ok := c.Get(ctxServiceOwner); ok {
		attrs = append(attrs, slog.String("owner", v.(store.ServiceOwner).Code))
	}
	if k, ok := apiKeyOf(c); ok {
		attrs = append(attrs, slog.String("api_key", k.Name))
	}
	key := s.auditKey(ctx)
	for _, name := range []string{"who", "person"} {
		if v := c.Param(name); v != "" {
			attrs = append(attrs, slog.String(name, pseudonymise(key, v)))
		}
	}
	for _, name := range []string{"subject", "reportee", "email", "phoneNumber"} {
		if v, ok := c.GetQuery(name); ok {
			attrs = append(attrs, slog.String(name, pseudonymise(key, v)))
		}
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "service-owner access", attrs...)
}

// pseudonymise returns v for organization numbers and reportee ids, and a keyed hash of anything else
// (national identity numbers, e-mail addresses, phone numbers, and whatever a client sent that is none of
// these), e.g. "hmac:3f1c2a9b0d4e5f61". The same value always gives the same pseudonym under one key.
func pseudonymise(key []byte, v string) string {
	if identity.OrganizationNumberPattern.MatchString(v) || identity.ReporteeIDPattern.MatchString(v) {
		return v
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strings.ToLower(strings.TrimSpace(v))))
	return "hmac:" + hex.EncodeToString(m.Sum(nil)[:8])
}

// soState is what the service-owner area keeps per server: the pseudonym key, read from the database
// once, and the service owner of each calling organization, kept like API keys for referenceTTL.
type soState struct {
	mu     sync.Mutex
	key    []byte
	owners *ttlcache.Cache[string, cachedOwner]
}

type cachedOwner struct {
	owner store.ServiceOwner
	err   error
}

var soStates sync.Map // *Server → *soState

func (s *Server) soState() *soState {
	if st, ok := soStates.Load(s); ok {
		return st.(*soState)
	}
	st, _ := soStates.LoadOrStore(s, &soState{owners: ttlcache.New[string, cachedOwner](referenceTTL, 10_000)})
	return st.(*soState)
}

// serviceOwner finds the service owner of an organization number, remembering answers (also "none").
func (s *Server) serviceOwner(ctx context.Context, organizationNumber string) (store.ServiceOwner, error) {
	st := s.soState()
	if o, ok := st.owners.Get(organizationNumber); ok {
		return o.owner, o.err
	}
	owner, err := s.q.ServiceOwnerByOrganization(ctx, organizationNumber)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return owner, err
	}
	st.owners.Set(organizationNumber, cachedOwner{owner, err})
	return owner, err
}

// auditKey is the database's pseudonym key. Should it be unreadable, a random key of this process is
// used for the moment (pseudonyms then do not match across processes, but nothing is logged in clear).
func (s *Server) auditKey(ctx context.Context) []byte {
	st := s.soState()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.key != nil {
		return st.key
	}
	key, err := s.q.AuditPseudonymKey(ctx)
	if err != nil {
		s.log.ErrorContext(ctx, "reading the audit pseudonym key failed; using a key of this process", "err", err)
		key = make([]byte, 32)
		_, _ = rand.Read(key)
		return key
	}
	st.key = key
	return key
}
