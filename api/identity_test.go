package api_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/identity"
)

// Keys and personas of the demo dataset.
const (
	keyAll      = "9D4E2680-50AB-47FB-A1E6-6AB8106A0FB6" // mailbox, reportees, authorization, roledefinitions, metadata
	keyMailbox  = "B6112887-2403-4883-A97E-D2791A22A339" // mailbox only
	keyMetadata = "A328F4FE-EB54-45DE-A4AE-59677BE18BEC" // metadata only

	ssnP1 = "12857812326"
	ssnP2 = "03919023480"
	ssnP3 = "27828534586"
	ssnP4 = "19886945720"
	ssnP5 = "01928216752"

	orgO1 = "310123455"
	orgO2 = "310123609"
	orgO3 = "310246808"
	orgO4 = "310369128"
	orgO5 = "310481203"
	orgO6 = "310593001"
)

func minter(t *testing.T) *identity.Minter {
	t.Helper()
	m, err := identity.LoadMinter(filepath.Join(demoDir, "certs", "issuer-key.pem"), "demo-1", testIssuer, testAudience)
	require.NoError(t, err)
	return m
}

func personToken(t *testing.T, ssn, scope string) string {
	t.Helper()
	tok, err := minter(t).Mint(identity.TokenRequest{PID: ssn, Scope: scope})
	require.NoError(t, err)
	return tok
}

func login(t *testing.T, h http.Handler, user, pw string) string {
	t.Helper()
	r := do(t, h, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword",
		header: map[string]string{"Content-Type": "application/hal+json"},
		body:   `{"UserName":"` + user + `","UserPassword":"` + pw + `"}`})
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	// The answer says what the login made: a session of its security level, until when, and where next.
	session := r.json(t)
	assert.EqualValues(t, 1, session["SecurityLevel"], r.Body.String())
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`, session["Expires"])
	assert.Contains(t, session["_links"], "reportees")
	for _, c := range r.Result().Cookies() {
		if c.Name == ".ASPXAUTH" {
			assert.True(t, c.HttpOnly)
			assert.Equal(t, http.SameSiteLaxMode, c.SameSite)
			return c.Value
		}
	}
	t.Fatal("no .ASPXAUTH cookie")
	return ""
}

func reporteeNumbers(t *testing.T, r response) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	var out []string
	for _, rep := range r.embedded(t, "reportees") {
		if n, ok := rep["OrganizationNumber"].(string); ok {
			out = append(out, n)
		} else {
			out = append(out, rep["SocialSecurityNumber"].(string))
		}
	}
	sort.Strings(out)
	return out
}

func TestPasswordLogin(t *testing.T) {
	srv, _ := newServer(t)
	cookie := login(t, srv, "ingrid.fjellheim", "Demo-1-Fjellheim!")
	r := get(t, srv, "/api/reportees", "ApiKey", keyAll, "Cookie", ".ASPXAUTH="+cookie)
	assert.Equal(t, []string{ssnP1, orgO1, orgO2, orgO3}, reporteeNumbers(t, r))

	// The national identity number works as a user name too, and user names ignore case.
	login(t, srv, ssnP2, "Demo-2-Bakketun!")
	login(t, srv, "OLA.Bakketun", "Demo-2-Bakketun!")

	// A forged or unknown session is refused.
	requireProblem(t, get(t, srv, "/api/reportees", "ApiKey", keyAll, "Cookie", ".ASPXAUTH=forged"), http.StatusUnauthorized)
}

// Logout (POST or DELETE) ends the session of the cookie sent and expires the cookie with the login's
// attributes; the replayed cookie is refused, other sessions live on, and logging out without a cookie
// or a second time is 204 as well.
func TestLogout(t *testing.T) {
	srv, _ := newServer(t)
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			cookie := login(t, srv, "ingrid.fjellheim", "Demo-1-Fjellheim!")
			other := login(t, srv, "ingrid.fjellheim", "Demo-1-Fjellheim!")
			logout := func(header ...string) response {
				h := map[string]string{}
				for i := 0; i+1 < len(header); i += 2 {
					h[header[i]] = header[i+1]
				}
				return do(t, srv, request{method: method, path: "/api/authentication/logout", header: h})
			}
			r := logout("Cookie", ".ASPXAUTH="+cookie)
			require.Equal(t, http.StatusNoContent, r.Code, r.Body.String())
			assert.Empty(t, r.Body.String())
			cookies := r.Result().Cookies()
			require.Len(t, cookies, 1)
			expired := cookies[0]
			assert.Equal(t, ".ASPXAUTH", expired.Name)
			assert.Empty(t, expired.Value)
			assert.Equal(t, -1, expired.MaxAge, "Max-Age=0")
			assert.Equal(t, "/", expired.Path)
			assert.True(t, expired.HttpOnly)
			assert.Equal(t, http.SameSiteLaxMode, expired.SameSite)

			requireProblem(t, get(t, srv, "/api/reportees", "ApiKey", keyAll, "Cookie", ".ASPXAUTH="+cookie), http.StatusUnauthorized)
			assert.Equal(t, http.StatusOK, get(t, srv, "/api/reportees", "ApiKey", keyAll, "Cookie", ".ASPXAUTH="+other).Code,
				"only the session of the cookie sent ends")

			assert.Equal(t, http.StatusNoContent, logout("Cookie", ".ASPXAUTH="+cookie).Code, "a second logout")
			assert.Equal(t, http.StatusNoContent, logout().Code, "no cookie")
			assert.Equal(t, http.StatusNoContent, logout("Cookie", ".ASPXAUTH=forged").Code, "an unknown session")
		})
	}
}

func TestPasswordLoginRefusals(t *testing.T) {
	srv, _ := newServer(t)
	post := func(body, contentType string) response {
		return do(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword",
			header: map[string]string{"Content-Type": contentType}, body: body})
	}
	wrong := requireProblem(t, post(`{"UserName":"ingrid.fjellheim","UserPassword":"wrong"}`, "application/json"), http.StatusUnauthorized)
	unknown := requireProblem(t, post(`{"UserName":"nobody.here","UserPassword":"wrong"}`, "application/json"), http.StatusUnauthorized)
	assert.Equal(t, wrong["detail"], unknown["detail"], "the answer must not tell whether the user exists")
	assert.Empty(t, post(`{"UserName":"nobody.here","UserPassword":"wrong"}`, "application/json").Result().Cookies())

	requireProblem(t, post(`{"UserName":"x"`, "application/json"), http.StatusBadRequest)
	requireProblem(t, post(`{"UserName":5.5,"UserPassword":"x"}`, "application/json"), http.StatusBadRequest)
	requireProblem(t, post(`{"UserName":true,"UserPassword":"x"}`, "application/json"), http.StatusBadRequest)
	requireProblem(t, post(`{"UserName":"","UserPassword":""}`, "application/json"), http.StatusBadRequest)
	requireProblem(t, post(`UserName=x&UserPassword=y`, "application/x-www-form-urlencoded"), http.StatusUnsupportedMediaType)
	requireProblem(t, post(`{"UserName":"`+strings.Repeat("x", testBodyLimit)+`"}`, "application/json"), http.StatusRequestEntityTooLarge)

	// An enterprise user cannot log in without its organization's certificate, and a person cannot log in as one.
	requireProblem(t, post(`{"UserName":"NORDKYST_INTEGRASJON","UserPassword":"Demo-EU-Nordkyst!"}`, "application/json"), http.StatusUnauthorized)
	r := do(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword?ForceEIAuthentication",
		header: map[string]string{"Content-Type": "application/json"}, body: `{"UserName":"NORDKYST_INTEGRASJON","UserPassword":"Demo-EU-Nordkyst!"}`})
	requireProblem(t, r, http.StatusForbidden)
}

func TestRepeatedFailuresLockTheUserName(t *testing.T) {
	srv, _ := newServer(t)
	for _, user := range []string{"per.storvik", "no.such.user"} {
		for range identity.MaxLoginFailures {
			r := do(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword",
				header: map[string]string{"Content-Type": "application/json"}, body: `{"UserName":"` + user + `","UserPassword":"guess"}`})
			requireProblem(t, r, http.StatusUnauthorized)
		}
		// Locked now, even with the right password, and the same for an unknown name.
		r := do(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword",
			header: map[string]string{"Content-Type": "application/json"}, body: `{"UserName":"` + user + `","UserPassword":"Demo-4-Storvik!"}`})
		requireProblem(t, r, http.StatusTooManyRequests)
		assert.NotEmpty(t, r.Header().Get("Retry-After"))
	}
}

func TestBearerTokens(t *testing.T) {
	m := minter(t)
	valid := personToken(t, ssnP1, "platform:enduser")
	r := get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+valid)
	assert.Equal(t, []string{ssnP1, orgO1, orgO2, orgO3}, reporteeNumbers(t, r))

	org, err := m.Mint(identity.TokenRequest{Org: orgO3, Scope: "platform:reportees"})
	require.NoError(t, err)
	r = get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+org)
	assert.Equal(t, []string{orgO3}, reporteeNumbers(t, r))

	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	sign := func(method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
		tok := jwt.NewWithClaims(method, claims)
		tok.Header["kid"] = "demo-1"
		s, err := tok.SignedString(key)
		require.NoError(t, err)
		return s
	}
	now := time.Now().Unix()
	claims := func(over map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"iss": testIssuer, "aud": testAudience, "iat": now, "exp": now + 600, "pid": ssnP1,
			"acr": "Level3", "scope": "platform:enduser", "jti": "x"}
		for k, v := range over {
			c[k] = v
		}
		return c
	}
	expired, err := m.Mint(identity.TokenRequest{PID: ssnP1, Scope: "platform:enduser", TTL: -time.Hour})
	require.NoError(t, err)
	refused := map[string]string{
		"expired":              expired,
		"wrong signature":      sign(jwt.SigningMethodRS256, otherKey, claims(nil)),
		"wrong audience":       sign(jwt.SigningMethodRS256, m.Key, claims(map[string]any{"aud": "another-api"})),
		"unknown issuer":       sign(jwt.SigningMethodRS256, m.Key, claims(map[string]any{"iss": "https://evil.example"})),
		"alg none":             sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(nil)),
		"no expiry":            sign(jwt.SigningMethodRS256, m.Key, claims(map[string]any{"exp": nil})),
		"unknown person":       sign(jwt.SigningMethodRS256, m.Key, claims(map[string]any{"pid": "11111111111"})),
		"garbage":              "not.a.token",
		"hmac with public key": sign(jwt.SigningMethodHS256, []byte("secret"), claims(nil)),
	}
	for name, tok := range refused {
		r := get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+tok)
		p := requireProblem(t, r, http.StatusUnauthorized)
		assert.Contains(t, p["detail"], "token", name)
	}
	requireProblem(t, get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Basic abc"), http.StatusUnauthorized)
}

func TestScopesNarrowBearerTokens(t *testing.T) {
	// platform:instances.meta may list messages but not read the reportee list.
	tok := personToken(t, ssnP1, "platform:instances.meta")
	requireProblem(t, get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+tok), http.StatusForbidden)
	tok = personToken(t, ssnP1, "platform:reportees")
	assert.Equal(t, http.StatusOK, get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+tok).Code)
	// A scope never widens the API key: a mailbox-only key may not list reportees, whatever the token says.
	tok = personToken(t, ssnP1, "platform:enduser platform:reportees")
	requireProblem(t, get(t, shared, "/api/reportees", "ApiKey", keyMailbox, "Authorization", "Bearer "+tok), http.StatusForbidden)
}

func TestAPIKeys(t *testing.T) {
	tok := personToken(t, ssnP1, "platform:enduser")
	auth := "Bearer " + tok
	p := requireProblem(t, get(t, shared, "/api/reportees", "Authorization", auth), http.StatusUnauthorized)
	assert.Equal(t, "urn:postbox:problem:missing-api-key", p["type"])
	p = requireProblem(t, get(t, shared, "/api/reportees", "ApiKey", "00000000-0000-0000-0000-000000000000", "Authorization", auth), http.StatusUnauthorized)
	assert.Equal(t, "urn:postbox:problem:invalid-api-key", p["type"])
	p = requireProblem(t, get(t, shared, "/api/reportees", "ApiKey", keyMetadata, "Authorization", auth), http.StatusForbidden)
	assert.Equal(t, "urn:postbox:problem:api-key-area", p["type"])
	assert.Equal(t, http.StatusOK, get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", auth).Code)

	// CORS: only the origins registered for the key presented.
	r := get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", auth, "Origin", "http://localhost:3000")
	assert.Equal(t, "http://localhost:3000", r.Header().Get("Access-Control-Allow-Origin"))
	r = get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", auth, "Origin", "https://statistikk.vidde.example")
	assert.Empty(t, r.Header().Get("Access-Control-Allow-Origin"), "registered, but for another key")
}

func TestReporteesOfEachPersona(t *testing.T) {
	cases := map[string][]string{
		ssnP1: {ssnP1, orgO1, orgO2, orgO3},
		ssnP2: {ssnP2},
		ssnP3: {ssnP3, orgO1},
		ssnP4: {ssnP4, orgO1},
		ssnP5: {ssnP5, orgO4, orgO6},
	}
	for ssn, want := range cases {
		r := get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+personToken(t, ssn, "platform:reportees"))
		assert.Equal(t, want, reporteeNumbers(t, r), ssn)
	}

	r := get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+personToken(t, ssnP5, "platform:reportees"))
	body := r.json(t)
	find := body["_links"].(map[string]any)["find"].(map[string]any)
	assert.Equal(t, true, find["isTemplated"])
	assert.Equal(t, "http://postbox.test/api/reportees/{reporteeId}", find["href"])
	for _, rep := range r.embedded(t, "reportees") {
		assert.Regexp(t, `^r[0-9]+$`, rep["ReporteeId"])
		switch rep["OrganizationNumber"] {
		case orgO6:
			assert.Equal(t, "Deleted", rep["Status"])
			assert.Equal(t, "Foretak", rep["Type"])
		case orgO4:
			assert.Equal(t, "Active", rep["Status"])
		case nil:
			assert.Equal(t, "Person", rep["Type"])
			assert.NotContains(t, rep, "Status")
		}
		one := get(t, shared, pathOf(t, link(t, rep, "self")), "ApiKey", keyAll, "Authorization", "Bearer "+personToken(t, ssnP5, "platform:reportees"))
		require.Equal(t, http.StatusOK, one.Code, one.Body.String())
		assert.Equal(t, rep["ReporteeId"], one.json(t)["ReporteeId"])
	}

	// Someone else's reportee, and one that does not exist, get the same 403.
	p2 := "Bearer " + personToken(t, ssnP2, "platform:reportees")
	other := get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+personToken(t, ssnP1, "platform:reportees")).embedded(t, "reportees")
	for _, rep := range other {
		if rep["OrganizationNumber"] == orgO1 {
			requireProblem(t, get(t, shared, "/api/reportees/"+rep["ReporteeId"].(string), "ApiKey", keyAll, "Authorization", p2), http.StatusForbidden)
		}
	}
	requireProblem(t, get(t, shared, "/api/reportees/r999999999", "ApiKey", keyAll, "Authorization", p2), http.StatusForbidden)
}

// An enterprise certificate on the connection authenticates its organization; an enterprise user logs in
// with its password over the same connection.
func TestEnterpriseCertificate(t *testing.T) {
	srv, _ := newServer(t)
	cert := loadCert(t, "enterprise.pem")
	withCert := func(r *http.Request) { r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}} }

	r := doWith(t, srv, request{path: "/api/reportees", header: map[string]string{"ApiKey": keyAll}}, withCert)
	assert.Equal(t, []string{orgO3}, reporteeNumbers(t, r))

	r = doWith(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword?ForceEIAuthentication",
		header: map[string]string{"Content-Type": "application/json"}, body: `{"UserName":"NORDKYST_INTEGRASJON","UserPassword":"Demo-EU-Nordkyst!"}`}, withCert)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	cookie := r.Result().Cookies()[0]
	assert.True(t, cookie.Secure, "cookies set over TLS are Secure")

	r = doWith(t, srv, request{path: "/api/reportees", header: map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + cookie.Value}}, withCert)
	assert.Equal(t, []string{orgO3, orgO5}, reporteeNumbers(t, r), "the enterprise user represents where it holds roles")

	// The session is bound to the certificate: without it, it is refused.
	requireProblem(t, get(t, srv, "/api/reportees", "ApiKey", keyAll, "Cookie", ".ASPXAUTH="+cookie.Value), http.StatusForbidden)

	// Another organization's certificate cannot log the enterprise user in.
	so := loadCert(t, "serviceowner.pem")
	r = doWith(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword?ForceEIAuthentication",
		header: map[string]string{"Content-Type": "application/json"}, body: `{"UserName":"NORDKYST_INTEGRASJON","UserPassword":"Demo-EU-Nordkyst!"}`},
		func(r *http.Request) { r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{so}}} })
	requireProblem(t, r, http.StatusForbidden)
}

func loadCert(t *testing.T, name string) *x509.Certificate {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(demoDir, "certs", name))
	require.NoError(t, err)
	block, _ := pem.Decode(raw)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

// Every route that needs a login is registered with its scope set, and a bearer token with none of its
// scopes (nor a general scope of its area) is refused it.
func TestEveryRouteHasAScopeRule(t *testing.T) {
	params := strings.NewReplacer(":who", "my", ":person", ssnP1)
	unrelated := personToken(t, ssnP1, "platform:unrelated")
	unrelatedOrg := orgToken(t, orgFJE, "platform:unrelated")
	routes := shared.Routes()
	require.NotEmpty(t, routes)
	for _, r := range routes {
		if r.Area == "" {
			continue // open: no key, no login
		}
		if !assert.NotNil(t, r.Scopes, "%s %s has no scope set", r.Method, r.Path) || len(r.Scopes) == 0 {
			continue
		}
		path := regexp.MustCompile(`:[A-Za-z]+`).ReplaceAllString(params.Replace(r.Path), "1")
		hdr := map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + unrelated}
		if r.Area == "serviceowner" {
			hdr = map[string]string{"ApiKey": keyFJE, "Authorization": "Bearer " + unrelatedOrg}
		}
		p := requireProblem(t, do(t, shared, request{method: r.Method, path: path, header: hdr}), http.StatusForbidden)
		assert.Equal(t, "urn:postbox:problem:insufficient-scope", p["type"], "%s %s", r.Method, r.Path)
		assert.Contains(t, p["detail"], r.Scopes[0], "the refusal names the scopes that would allow %s %s", r.Method, r.Path)
	}
}

// Every 401 names how to authenticate (WWW-Authenticate): the ApiKey scheme when the key is missing or
// unknown, else a bearer token or a session cookie.
func TestUnauthorizedNamesTheSchemes(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		header     []string
	}{
		{"no key", `ApiKey realm="postbox", header="ApiKey"`, nil},
		{"an unknown key", `ApiKey realm="postbox", header="ApiKey"`, []string{"ApiKey", "00000000-0000-0000-0000-000000000000"}},
		{"no login", `Bearer realm="postbox", Cookie realm="postbox", cookie-name=".ASPXAUTH"`, []string{"ApiKey", keyAll}},
		{"a forged cookie", `Bearer realm="postbox", Cookie realm="postbox", cookie-name=".ASPXAUTH"`, []string{"ApiKey", keyAll, "Cookie", ".ASPXAUTH=forged"}},
		{"a bad token", `Bearer realm="postbox", Cookie realm="postbox", cookie-name=".ASPXAUTH"`, []string{"ApiKey", keyAll, "Authorization", "Bearer x.y.z"}},
	} {
		r := get(t, shared, "/api/reportees", tc.header...)
		requireProblem(t, r, http.StatusUnauthorized)
		assert.Equal(t, tc.want, r.Header().Get("WWW-Authenticate"), tc.name)
	}
}
