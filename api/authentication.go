package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

type passwordLogin struct {
	UserName     jsonText
	UserPassword jsonText
}

// authenticateWithPassword opens a password session and sets it as the .ASPXAUTH cookie. With
// ?ForceEIAuthentication it logs in an enterprise user, over TLS with the organization's certificate.
func (h *identityHandlers) authenticateWithPassword(c *gin.Context) {
	var body passwordLogin
	if err := bindJSON(c, &body); err != nil {
		abort(c, err)
		return
	}
	if strings.TrimSpace(string(body.UserName)) == "" || body.UserPassword == "" {
		abort(c, problem.BadRequest("UserName and UserPassword are required"))
		return
	}
	_, forceEI := c.GetQuery("ForceEIAuthentication")
	token, session, err := h.auth.PasswordLogin(c.Request.Context(), string(body.UserName), string(body.UserPassword), forceEI, clientCertificate(c.Request))
	if err != nil {
		abort(c, authError(err))
		return
	}
	http.SetCookie(c.Writer, sessionCookieOf(c, token, session.AbsoluteEnd))
	c.Status(http.StatusOK)
}

// logout ends the password session of the cookie sent and expires the cookie. It needs no API key, like
// the login, and answers 204 whether or not a cookie or a live session came with it: logging out twice,
// or with a session already over, is not an error.
func (h *identityHandlers) logout(c *gin.Context) {
	if token, err := c.Cookie(sessionCookie); err == nil && token != "" {
		if err := h.auth.Logout(c.Request.Context(), token); err != nil {
			abort(c, err)
			return
		}
	}
	expired := sessionCookieOf(c, "", time.Unix(0, 0))
	expired.MaxAge = -1 // written as Max-Age=0: the browser drops the cookie at once
	http.SetCookie(c.Writer, expired)
	c.Status(http.StatusNoContent)
}

// sessionCookieOf is the session cookie with its one set of attributes, for login and logout alike.
func sessionCookieOf(c *gin.Context, value string, expires time.Time) *http.Cookie {
	return &http.Cookie{
		Name: sessionCookie, Value: value, Path: "/", HttpOnly: true, Secure: c.Request.TLS != nil,
		SameSite: http.SameSiteLaxMode, Expires: expires,
	}
}
