package api

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/identity"
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
	key, _ := apiKeyOf(c)
	owner, err := s.owners.Admit(c.Request.Context(), principalOf(c), key)
	if err != nil {
		abort(c, err)
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
	for _, name := range []string{"who", "person"} {
		if v := c.Param(name); v != "" {
			attrs = append(attrs, slog.String(name, s.owners.Pseudonym(ctx, v)))
		}
	}
	for _, name := range []string{"subject", "reportee", "email", "phoneNumber"} {
		if v, ok := c.GetQuery(name); ok {
			attrs = append(attrs, slog.String(name, s.owners.Pseudonym(ctx, v)))
		}
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "service-owner access", attrs...)
}
