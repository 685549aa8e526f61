package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/clock"
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
	r := loginResource{SecurityLevel: session.SecurityLevel, EnterpriseOrganizationNumber: session.EnterpriseOrg,
		IdleExpires: render.TimestampOf(clock.Local(session.ExpiresAt)), Expires: render.TimestampOf(clock.Local(session.AbsoluteEnd))}
	r.Links.Add("reportees", render.Link{Href: baseURL(c) + "/api/reportees"})
	r.Links.Add("logout", render.Link{Href: baseURL(c) + "/api/authentication/logout"})
	respond(c, http.StatusOK, r)
}

// loginResource says what a password login did: a session of a security level (an enterprise user's for
// its organization), in the cookie, that ends at IdleExpires unless used (each use moves it on) and at
// Expires at the latest.
type loginResource struct {
	SecurityLevel                int
	EnterpriseOrganizationNumber string `json:",omitempty"`
	IdleExpires                  render.Timestamp
	Expires                      render.Timestamp
	Links                        render.Links `json:"_links"`
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
