package api_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store/storetest"
)

// suiteLog receives, as JSON at debug level through the production handler chain, what every server of
// the suite logs; TestMain checks it for secrets after the run (checkSuiteLog).
var suiteLog = &syncBuffer{} // serviceowner_test.go

func newSuiteLogger() *slog.Logger { return telemetry.NewLogger(suiteLog, "json", slog.LevelDebug) }

// demoSecrets are the passwords, API keys and national identity numbers of the demo dataset.
func demoSecrets(t testing.TB) []string {
	raw, err := os.ReadFile(storetest.DemoDataset())
	require.NoError(t, err)
	var ds struct {
		Persons         []struct{ SocialSecurityNumber, Password string }
		EnterpriseUsers []struct{ Password string }
		ApiKeys         []struct{ Key string }
	}
	require.NoError(t, json.Unmarshal(raw, &ds))
	var out []string
	for _, p := range ds.Persons {
		out = append(out, p.SocialSecurityNumber, p.Password)
	}
	for _, u := range ds.EnterpriseUsers {
		out = append(out, u.Password)
	}
	for _, k := range ds.ApiKeys {
		out = append(out, k.Key, strings.ToLower(k.Key))
	}
	require.NotEmpty(t, out)
	return out
}

var (
	elevenDigits = regexp.MustCompile(`(^|[^0-9])[0-9]{11}([^0-9]|$)`)
	jwtLike      = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{10,}`) // the base64 of `{"` starts every JWT part
)

// leaks lists what of secrets, any JWT and any 11-digit number occurs in out.
func leaks(out string, secrets []string) []string {
	var found []string
	for _, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			found = append(found, fmt.Sprintf("%q", s))
		}
	}
	if m := jwtLike.FindString(out); m != "" {
		found = append(found, "a token "+m[:12]+"…")
	}
	if m := elevenDigits.FindString(out); m != "" {
		found = append(found, "an 11-digit number "+m)
	}
	return found
}

// checkSuiteLog fails the run when anything the suite's servers logged holds a secret of the dataset, a
// token or an identity number.
func checkSuiteLog(code int) int {
	out := suiteLog.String()
	if found := leaks(out, demoSecrets(&testing.T{})); len(found) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the suite's logs (%d bytes) hold secrets: %s\n", len(out), strings.Join(found, ", "))
		return 1
	}
	return code
}

// A day of traffic through the real router, logged as JSON at debug level: logins with passwords (right,
// wrong, by identity number, an enterprise user's without its certificate), cookies, bearer tokens (good,
// malformed, for another audience), identity numbers in paths, queries and filters, service-owner lookups
// by identity number, and failures. Nothing secret reaches the log.
func TestLogsHoldNoSecrets(t *testing.T) {
	pool := storetest.New(t)
	var buf syncBuffer
	tokens, err := testTokens()
	require.NoError(t, err)
	srv, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: testBodyLimit, Tokens: tokens,
		Logger: telemetry.NewLogger(&buf, "json", slog.LevelDebug)})
	require.NoError(t, err)

	bearer := personToken(t, ssnP1, "platform:enduser")
	foreign, err := identity.LoadMinter(demoDir+"/certs/issuer-key.pem", "demo-1", testIssuer, "another-audience")
	require.NoError(t, err)
	otherAudience, err := foreign.Mint(identity.TokenRequest{PID: ssnP2, Scope: "platform:enduser"})
	require.NoError(t, err)
	orgBearer := orgToken(t, orgFJE, "platform:serviceowner")

	loginBody := func(user, pw string) string { return `{"UserName":"` + user + `","UserPassword":"` + pw + `"}` }
	post := func(path, body string) response {
		return do(t, srv, request{method: http.MethodPost, path: path, body: body,
			header: map[string]string{"Content-Type": "application/hal+json", "ApiKey": keyAll}})
	}
	cookie := login(t, srv, "ingrid.fjellheim", "Demo-1-Fjellheim!")
	require.NotEmpty(t, cookie)
	cookieBySSN := login(t, srv, ssnP1, "Demo-1-Fjellheim!")
	requireProblem(t, post("/api/authentication/authenticatewithpassword", loginBody("ola.bakketun", "Not-Ola's-Password-7")), http.StatusUnauthorized)
	requireProblem(t, post("/api/authentication/authenticatewithpassword", loginBody(ssnP2, "Wrong-For-03919023480")), http.StatusUnauthorized)
	assert.GreaterOrEqual(t, post("/api/authentication/authenticatewithpassword?ForceEIAuthentication",
		loginBody("NORDKYST_INTEGRASJON", "Demo-EU-Nordkyst!")).Code, 400, "an enterprise user needs its certificate")
	post("/api/authentication/authenticatewithpassword", `{"UserName":"`+ssnP3+`","UserPassword":`) // malformed JSON

	withCookie := func(c string) map[string]string {
		return map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + c, "Accept": "application/hal+json"}
	}
	withBearer := func(tok string) map[string]string {
		return map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + tok}
	}
	calls := []struct {
		path   string
		header map[string]string
		status int
	}{
		{"/api/reportees", withCookie(cookie), http.StatusOK},
		{"/api/" + ssnP1 + "/messages", withCookie(cookieBySSN), http.StatusOK},
		{"/api/" + ssnP1 + "/messages?$filter=Subject%20eq%20'" + ssnP2 + "'", withBearer(bearer), http.StatusOK},
		{"/api/" + ssnP2 + "/messages", withBearer(bearer), http.StatusForbidden},
		{"/api/" + ssnP4 + "/messages/a3101102", withBearer(bearer), http.StatusForbidden},
		{"/api/my/messages?$filter=Subject%20eq%20'" + ssnP5, withBearer(bearer), http.StatusBadRequest},
		{"/api/" + ssnP1 + "/authorization/rights?who=" + ssnP3, withBearer(bearer), http.StatusOK},
		{"/api/reportees/r" + ssnP2, withBearer(bearer), 0},
		{"/api/reportees", withBearer("not-a-jwt." + ssnP2 + ".sig"), http.StatusUnauthorized},
		{"/api/reportees", withBearer(otherAudience), http.StatusUnauthorized},
		{"/api/reportees", withCookie("c29tZS1zdG9sZW4tY29va2ll-Secret-Cookie-Value"), http.StatusUnauthorized},
		{"/api/reportees", map[string]string{"ApiKey": "ffffffff-Not-A-Registered-Key", "Authorization": "Bearer " + bearer}, http.StatusUnauthorized},
		{"/api/serviceowner/authorization/roles?subject=" + ssnP1 + "&reportee=" + orgO1, withBearerKey(orgBearer, keyFJE), 0},
		{"/api/serviceowner/organizations/" + orgO1 + "/personalcontacts/" + ssnP2 + "/roles", withBearerKey(orgBearer, keyFJE), 0},
		{"/api/serviceowner/reportees?subject=" + ssnP5, withBearerKey(orgBearer, keyFJE), 0},
		{"/api/nosuch/" + ssnP1, withBearer(bearer), http.StatusNotFound},
	}
	for _, c := range calls {
		r := do(t, srv, request{path: c.path, header: c.header})
		if c.status != 0 {
			assert.Equal(t, c.status, r.Code, "%s: %s", c.path, r.Body.String())
		}
	}

	out := buf.String()
	require.NotEmpty(t, out)
	secrets := append(demoSecrets(t), bearer, otherAudience, orgBearer, cookie, cookieBySSN,
		"Not-Ola's-Password-7", "Wrong-For-", "Secret-Cookie-Value", "Not-A-Registered-Key")
	assert.Empty(t, leaks(out, secrets), "secrets in the log:\n%s", out)

	// It did log: one line per request with its id and route template, and the refusals' details.
	var requests int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["msg"] == "request" {
			requests++
			assert.NotEmpty(t, m["request_id"], l)
			assert.NotEmpty(t, m["route"], l)
		}
	}
	assert.GreaterOrEqual(t, requests, len(calls)+5)
	assert.Contains(t, out, `"route":"/api/:who/messages"`)
	assert.Contains(t, out, `"msg":"service-owner access"`)
}

func withBearerKey(tok, key string) map[string]string {
	return map[string]string{"ApiKey": key, "Authorization": "Bearer " + tok}
}
