package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

type passwordLogin struct {
	UserName     string
	UserPassword string
}

// authenticateWithPassword opens a password session and sets it as the .ASPXAUTH cookie. With
// ?ForceEIAuthentication it logs in an enterprise user, over TLS with the organization's certificate.
func (s *Server) authenticateWithPassword(c *gin.Context) {
	var body passwordLogin
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	if strings.TrimSpace(body.UserName) == "" || body.UserPassword == "" {
		abort(c, badRequest("UserName and UserPassword are required"))
		return
	}
	_, forceEI := c.GetQuery("ForceEIAuthentication")
	token, session, err := s.auth.PasswordLogin(c.Request.Context(), body.UserName, body.UserPassword, forceEI, clientCertificate(c.Request))
	if err != nil {
		abort(c, authError(err))
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/", HttpOnly: true, Secure: c.Request.TLS != nil,
		SameSite: http.SameSiteLaxMode, Expires: session.AbsoluteEnd,
	})
	c.Status(http.StatusOK)
}
