package api

import (
	"crypto/x509"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

const (
	ctxPrincipal = "postbox.principal"
	ctxReportee  = "postbox.reportee"
	ctxRights    = "postbox.rights"

	sessionCookie = ".ASPXAUTH"
)

// principalOf returns the authenticated caller; only set behind authenticate.
func principalOf(c *gin.Context) identity.Principal {
	p, _ := c.Get(ctxPrincipal)
	return p.(identity.Principal)
}

// reporteeOf returns the party {who} named and the caller's rights for it; only set behind resolveWho.
func reporteeOf(c *gin.Context) (identity.Party, identity.RightSet) {
	p, _ := c.Get(ctxReportee)
	r, _ := c.Get(ctxRights)
	return p.(identity.Party), r.(identity.RightSet)
}

// clientCertificate is the verified enterprise certificate of the TLS connection, or the one a trusted
// proxy forwarded and clientCertHeader verified, if any.
func clientCertificate(r *http.Request) *x509.Certificate {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		cert, _ := r.Context().Value(proxyCertKey{}).(*x509.Certificate)
		return cert
	}
	return r.TLS.VerifiedChains[0][0]
}

// authenticate finds who calls: a bearer token, else a session cookie, else an enterprise certificate.
// Credentials that are present but wrong are refused rather than skipped.
func (s *Server) authenticate(c *gin.Context) {
	ctx := c.Request.Context()
	cert := clientCertificate(c.Request)
	var (
		p   identity.Principal
		err error
	)
	authz := c.GetHeader("Authorization")
	cookie, cookieErr := c.Cookie(sessionCookie)
	switch {
	case authz != "":
		scheme, token, _ := strings.Cut(authz, " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			abort(c, problem.Unauthorized("the Authorization header must be 'Bearer <token>'"))
			return
		}
		p, err = s.auth.FromBearer(ctx, strings.TrimSpace(token))
	case cookieErr == nil && cookie != "":
		p, err = s.auth.FromSession(ctx, cookie, cert)
	case cert != nil:
		p, err = s.auth.FromCertificate(ctx, cert)
	default:
		abort(c, problem.Unauthorized("log in first: a session cookie, a bearer token or an enterprise certificate is required"))
		return
	}
	if err != nil {
		abort(c, authError(err))
		return
	}
	c.Set(ctxPrincipal, p)
	if !s.scopeAllows(p, c.Request.Method, c.FullPath()) {
		abort(c, problem.New(http.StatusForbidden, "insufficient-scope", "the token's scopes do not allow %s %s; a token with one of %s does",
			c.Request.Method, c.FullPath(), strings.Join(s.scopesFor(c.Request.Method, c.FullPath()), ", ")))
		return
	}
	c.Next()
}

// authError maps what identity refused to a problem; anything else is a server error.
func authError(err error) error {
	var (
		tokenErr *identity.TokenError
		locked   *identity.ErrLocked
	)
	switch {
	case errors.As(err, &tokenErr):
		return problem.Unauthorized("%s", tokenErr.Error())
	case errors.Is(err, identity.ErrBadCredentials), errors.Is(err, identity.ErrNoSession):
		return problem.Unauthorized("%s", err.Error())
	case errors.Is(err, identity.ErrCertificateRequired):
		return problem.New(http.StatusForbidden, "certificate-required", "%s", err.Error())
	case errors.As(err, &locked):
		p := problem.New(http.StatusTooManyRequests, "login-locked", "%s", locked.Error())
		return &problem.Retryable{Problem: p, After: time.Until(locked.Until)}
	}
	return err
}

// resolveWho resolves {who} — "my", an organization number, a reportee id or a national identity
// number — to a party the caller may represent.
func (s *Server) resolveWho(c *gin.Context) {
	p := principalOf(c)
	who := c.Param("who")
	key := who
	if strings.EqualFold(who, "my") {
		id := p.Self()
		if id == 0 {
			id = p.OrganizationID
		}
		key = identity.ReporteeID(id)
	}
	party, rights, err := s.parties.Represented(c.Request.Context(), p, key, who)
	if err != nil {
		abort(c, err)
		return
	}
	c.Set(ctxReportee, party)
	c.Set(ctxRights, rights)
	c.Next()
}

var partyKeyPattern = regexp.MustCompile(`^(?:[0-9]+|r[0-9]{1,18})$`)

// resolveWhoOrUser resolves {who} like resolveWho, but also accepts the user name of a login (a person's
// or an enterprise user's), which names the holder of the role to delete. An unknown user name is
// answered like a role the caller may not delete (roleRefused), so the answer never tells which user
// names exist.
func (s *Server) resolveWhoOrUser(c *gin.Context) {
	who := c.Param("who")
	if strings.EqualFold(who, "my") || partyKeyPattern.MatchString(who) {
		s.resolveWho(c)
		return
	}
	login, err := s.parties.Login(c.Request.Context(), who)
	if errors.Is(err, store.ErrNotFound) {
		err = access.RoleRefused(who, c.Param("roleId"))
	}
	if err != nil {
		abort(c, err)
		return
	}
	c.Set(ctxWhoLogin, login)
	c.Next()
}
