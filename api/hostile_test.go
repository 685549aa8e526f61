package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/identity"
)

// The hostile-input walk: every route the router registered, as each persona that calls its area, with
// malformed, oversized, NUL, odd-Unicode, traversal, XXE and token cases in its path, query, body and
// headers. Every answer is below 500, every 4xx is a problem document (JSON or XML), no answer holds a
// stack trace, SQL or a secret, and no table changes. A route added to the router is walked without
// being listed here; a path parameter of a new name needs a value in the params of newHostileWalk.
func TestHostileInput(t *testing.T) {
	srv, pool := formTaskServer(t)
	w := newHostileWalk(t, srv, pool)
	routes := srv.Routes()
	require.NotEmpty(t, routes)

	before := snapshotTables(t, pool)
	for _, r := range routes {
		t.Run(r.Method+" "+r.Path, func(t *testing.T) { w.walkRoute(t, r) })
	}
	after := snapshotTables(t, pool)
	for table, was := range before {
		assert.Equal(t, was, after[table], "a hostile request changed table %s", table)
	}
	sent := 0
	for _, n := range w.statuses {
		sent += n
	}
	t.Logf("%d requests: %d routes, %d personas, %d path values, %d+%d query, %d named query, %d body and %d header cases; answers by status %v",
		sent, len(routes), len(w.endUsers)+len(w.serviceOwners)+len(w.anonymous), len(hostilePathValues),
		len(personaQueryCases()), len(w.queryCases()), len(namedQueryCases()), len(w.bodyCases()), len(w.headerCases()), w.statuses)
}

// persona is one way a client calls: the headers it sends and, for an enterprise certificate, the
// certificate the TLS layer verified and the query flag that asks for it.
type persona struct {
	name   string
	header map[string]string
	query  string
	cert   *x509.Certificate
	// params are the persona's own path parameters over the walk's: the parties it acts for.
	params map[string]string
}

// hostileCase is one request of the walk, on top of the persona's: a header mapped to "" is removed.
type hostileCase struct {
	name        string
	method      string // the route's method when empty
	path        string // the route's path with its parameters filled in
	query       string
	header      map[string]string
	contentType string
	body        []byte
	// refuse: the case must not succeed on a route that needs a caller (the open routes ignore credentials,
	// logout its body): a hostile body, a credential no one may use.
	refuse bool
}

type hostileWalk struct {
	srv    *api.Server
	params map[string]string
	// endUsers call the mailbox, reportee and authorization areas, serviceOwners the service-owner area,
	// anonymous the open routes (health, metadata, authentication).
	endUsers, serviceOwners, anonymous []persona
	tokens                             map[string]string // the header cases' bearer tokens, by case name
	secrets                            []string
	statuses                           map[int]int // answers by status, for the log
}

// allEndUserScopes opens every end-user route to a bearer token.
const allEndUserScopes = "platform:enduser platform:endusernoconsent platform:reportees platform:instances.meta " +
	"platform:instances.read platform:instances.write platform:rolesandrights.read platform:rolesandrights.write " +
	"platform:delegations.read platform:delegations.write platform:roledefinitions.read platform:roledefinitions.write"

// The form task whose parameters the walk uses: an archived one of O1, with a form and an attachment. A
// request that got past every check could only read it (a form task is not marked read) or be refused
// with 409, so the walk's own valid parameters never change data.
const hostileMessage = "a3100297"

// openTask is a form task of O1 in Utfylling (4711/2: attachments of type Revisjonsberetning, pdf or xml).
// The routes that add an attachment are walked on it, so that a hostile attachment meets every check a
// valid one passes, and would be stored, and seen, were one let through. PUT on the task itself is not:
// its empty body (the walk's query and header cases) signs and submits a task, as it should.
const openTask = "a3101284"

// noMessage is the message every other write of the walk goes to: no message has this id, so a write
// whose hostile part is rightly ignored (an unknown query parameter, a garbage Accept-Language, an empty
// body where none is needed: archive, delete, restore …) changes nothing.
const noMessage = "a9999999"

// writeTargets are the messages of the writes whose bodies the walk follows past their checks.
var writeTargets = map[string]string{
	"PUT /api/:who/messages/:messageId":                                 hostileMessage, // 409 once the body passed
	"PUT /api/:who/messages/:messageId/forms/:formId":                   hostileMessage,
	"POST /api/:who/messages/:messageId/attachments":                    openTask,
	"POST /api/:who/messages/:messageId/attachments/streamedattachment": openTask,
}

func newHostileWalk(t *testing.T, srv *api.Server, pool *pgxpool.Pool) *hostileWalk {
	ctx := context.Background()
	var formID, attachmentID int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM forms WHERE message_id = $1 ORDER BY ordinal LIMIT 1`, hostileMessage).Scan(&formID))
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM attachments WHERE message_id = $1 ORDER BY ordinal LIMIT 1`, hostileMessage).Scan(&attachmentID))

	cookie := login(t, srv, "ingrid.fjellheim", "Demo-1-Fjellheim!")
	euCert := loadCert(t, "enterprise.pem")
	euLogin := doWith(t, srv, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword?ForceEIAuthentication",
		header: map[string]string{"Content-Type": jsonType}, body: `{"UserName":"` + euUserName + `","UserPassword":"Demo-EU-Nordkyst!"}`},
		func(r *http.Request) { r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{euCert}}} })
	require.Equal(t, http.StatusOK, euLogin.Code, euLogin.Body.String())
	euCookie := euLogin.Result().Cookies()[0].Value
	personTok := personToken(t, ssnP1, allEndUserScopes)
	orgTok := orgToken(t, orgO1, "platform:enduser")
	soTok := orgToken(t, orgFJE, "platform:serviceowner")
	w := &hostileWalk{
		srv: srv,
		params: map[string]string{
			"who": orgO1, "reporteeId": orgO1, "person": ssnP1, "organizationNumber": orgO1,
			"messageId": hostileMessage, "formId": fmt.Sprint(formID), "attachmentId": fmt.Sprint(attachmentID),
			"serviceCode": "4711", "serviceEdition": "2", "dataFormatId": "3106", "dataFormatVersion": "21845",
			"name": "Landkoder", "version": "1", "roleDefinitionId": fmt.Sprint(roleHADM),
			// No role or right has these ids: the walk's own DELETE, were it let through, would remove nothing.
			"roleId": "59999", "rightId": "59999", "subscriptionId": "59999",
			// An attachment rule of the metadata, and no RightID: a receiver's right delete removes nothing.
			"ruleId": "901",
			// P3 holds roles for O1: the receiver routes get past their checks.
			"receiverId": selfReporteeID(t, ssnP3),
			// No archive has this reference (they start at AR7000001): a download or confirmation let through
			// would log or change nothing.
			"archiveReference": "AR1",
			// No shipment has this id: a follow-up let through finds nothing.
			"shipmentId": "00000000-0000-4000-8000-000000000000",
			// Nor has any notification order.
			"orderId": "00000000-0000-4000-8000-000000000000",
		},
		endUsers: []persona{
			{name: "person by token", header: map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personTok}},
			{name: "person by password", header: map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + cookie}},
			{name: "organization by token", header: map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + orgTok}},
			{name: "enterprise user by password and certificate", header: map[string]string{"ApiKey": keyAll, "Cookie": ".ASPXAUTH=" + euCookie},
				cert: euCert, params: map[string]string{"who": orgO5}},
		},
		serviceOwners: []persona{
			{name: "service owner by token", header: map[string]string{"ApiKey": keyFJE, "Authorization": "Bearer " + soTok}},
			{name: "service owner by certificate", header: map[string]string{"ApiKey": keyFJE}, query: "ForceEIAuthentication",
				cert: loadCert(t, "serviceowner.pem")},
		},
		// The open routes need nobody; the person's token shows that credentials change nothing there. Logout
		// gets no session cookie from the walk: ending the session of the cookie sent is what it is for
		// (TestLogout), whatever else the request holds.
		anonymous: []persona{
			{name: "anonymous"},
			{name: "person by token", header: map[string]string{"Authorization": "Bearer " + personTok}},
		},
		tokens:   hostileTokens(t),
		statuses: map[int]int{},
	}
	// Identity numbers are data some answers rightly hold (a service owner's personal contacts); passwords,
	// keys, the session cookie and tokens are not.
	for _, s := range demoSecrets(t) {
		if !elevenDigits.MatchString(s) {
			w.secrets = append(w.secrets, s)
		}
	}
	w.secrets = append(w.secrets, cookie, euCookie, personTok, orgTok, soTok)

	// The prints of a form task and of its form are kept by the digest of their content once made: made
	// here, before the tables are compared, the walk's reads of them change nothing.
	for _, print := range []string{"/print", fmt.Sprintf("/forms/%d/print", formID)} {
		warm := w.send(t, http.MethodGet, "/api/"+orgO1+"/messages/"+hostileMessage+print, w.endUsers[0], hostileCase{})
		require.Equal(t, http.StatusOK, warm.Code, warm.Body.String())
	}
	return w
}

// hostileTokens are bearer tokens no verifier may accept, each for person P1 with every end-user scope.
func hostileTokens(t *testing.T) map[string]string {
	m := minter(t)
	now := time.Now()
	claims := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": testIssuer, "aud": testAudience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
			"pid": ssnP1, "acr": "Level3", "scope": allEndUserScopes, "client_id": "demo-client"}
	}
	sign := func(method jwt.SigningMethod, c jwt.MapClaims, header map[string]any, key any) string {
		tok := jwt.NewWithClaims(method, c)
		tok.Header["kid"] = m.KeyID
		for k, v := range header {
			tok.Header[k] = v
		}
		s, err := tok.SignedString(key)
		require.NoError(t, err)
		return s
	}
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	publicPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(&m.Key.PublicKey))})
	expired, err := m.Mint(identity.TokenRequest{PID: ssnP1, Scope: allEndUserScopes, TTL: -time.Hour})
	require.NoError(t, err)
	foreign, err := identity.LoadMinter(filepath.Join(demoDir, "certs", "issuer-key.pem"), "demo-1", testIssuer, "another-audience")
	require.NoError(t, err)
	otherAudience, err := foreign.Mint(identity.TokenRequest{PID: ssnP1, Scope: allEndUserScopes})
	require.NoError(t, err)

	expString, nbfString, farFuture := claims(), claims(), claims()
	expString["exp"] = fmt.Sprint(now.Add(time.Hour).Unix())
	nbfString["nbf"] = "yesterday"
	farFuture["iat"], farFuture["nbf"] = now.Add(24*time.Hour).Unix(), now.Add(24*time.Hour).Unix()
	hugeExp := claims()
	hugeExp["exp"] = json.Number("99999999999999999999999")
	return map[string]string{
		"forged signature":       sign(jwt.SigningMethodRS256, claims(), nil, otherKey),
		"alg none":               sign(jwt.SigningMethodNone, claims(), nil, jwt.UnsafeAllowNoneSignatureType),
		"HS256 with public key":  sign(jwt.SigningMethodHS256, claims(), nil, publicPEM),
		"crit header":            sign(jwt.SigningMethodRS256, claims(), map[string]any{"crit": []string{"exp"}}, m.Key),
		"kid traversal":          sign(jwt.SigningMethodRS256, claims(), map[string]any{"kid": "../../../etc/passwd"}, m.Key),
		"jku to elsewhere":       sign(jwt.SigningMethodRS256, claims(), map[string]any{"kid": "evil", "jku": "http://127.0.0.1:1/jwks.json"}, otherKey),
		"exp as a string":        sign(jwt.SigningMethodRS256, expString, nil, m.Key),
		"nbf as a string":        sign(jwt.SigningMethodRS256, nbfString, nil, m.Key),
		"exp a huge number":      sign(jwt.SigningMethodRS256, hugeExp, nil, m.Key),
		"not yet valid":          sign(jwt.SigningMethodRS256, farFuture, nil, m.Key),
		"expired":                expired,
		"another audience":       otherAudience,
		"three garbage parts":    "abc.def.ghi",
		"over-long":              strings.Repeat("A", 10<<10),
		"signature stripped":     strings.Join(strings.Split(expired, ".")[:2], ".") + ".",
		"header only":            "eyJhbGciOiJub25lIn0",
		"odd Unicode":            "\u202eeyJ\ufeff.x.y",
		"invalid UTF-8":          "\xff\xfe.\xff.\xff",
		"empty":                  "",
		"with spaces inside":     "a b c",
		"NUL inside":             "eyJ\x00.a.b",
		"padding and dots....":   "....",
		"JSON instead of a JWT":  `{"pid":"` + ssnP1 + `"}`,
		"base64 of nothing ====": "====.====.====",
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// hostilePathValues replace one path parameter at a time; they are written as the client sends them.
var hostilePathValues = []struct{ name, raw string }{
	{"NUL", "a%00b"},
	{"over-long", strings.Repeat("a", 10<<10)},
	{"traversal", "..%2F..%2Fetc%2Fpasswd"},
	{"encoded dot-dot", "%2e%2e"},
	{"right-to-left override", "%E2%80%AEfdp.exe"},
	{"byte-order mark", "%EF%BB%BF310123455"},
	{"combining marks", "a" + strings.Repeat("%CC%81", 50)},
	{"invalid UTF-8", "%FF%FE"},
	{"huge number", "99999999999999999999999"},
	{"negative number", "-1"},
	{"SQL", "1'%20OR%20'1'%3D'1"},
	{"percent sign", "%25zz"},
	{"blank", "%20"},
}

// hostileQueryNames are the query parameters some handler reads; each gets the hostile values alone.
var hostileQueryNames = []string{"search", "serviceCode", "serviceEdition", "serviceEditionCode", "complete", "sign", "fileName", "attachmentType",
	"continuation", "subject", "reportee", "email", "phoneNumber", "roleDefinitionCode", "roleDefinitionId",
	"showConsentReportees", "language", "receiverId", "roleId", "authzRuleId", "messageId", "attachmentId", "ForceEIAuthentication"}

var hostileQueryValues = []struct{ name, raw string }{
	{"huge number", "99999999999999999999999"},
	{"odd Unicode, traversal and length", "%E2%80%AE%EF%BB%BF..%2F..%2Fetc%2Fpasswd" + strings.Repeat("7", 3900)},
}

// personaQueryCases run as every persona: what each area's callers have in common to send.
func personaQueryCases() []hostileCase {
	return []hostileCase{
		{name: "query NUL", query: "$filter=Subject%20eq%20'%00'&x=%00"},
		{name: "query invalid UTF-8", query: "x=%FF%FE&$orderby=%FF"},
		{name: "query garbage options", query: "$filter=garbage%20((&$top=99999999999999999999999&$skip=-5"},
	}
}

func (w *hostileWalk) queryCases() []hostileCase {
	cases := []hostileCase{
		{name: "$filter NUL", query: "$filter=Subject%20eq%20'%00'"},
		{name: "$filter over-long", query: "$filter=" + strings.Repeat("a", 5000)},
		{name: "$filter deeply nested", query: "$filter=" + strings.Repeat("(", 1900) + "Subject%20eq%20'x'" + strings.Repeat(")", 1900)},
		{name: "$filter many terms", query: "$filter=" + strings.TrimSuffix(strings.Repeat("Subject%20eq%20'x'%20or%20", 140), "%20or%20")},
		{name: "$filter garbage", query: "$filter=garbage%20((%20eq%20%27"},
		{name: "$filter odd Unicode", query: "$filter=Subject%20eq%20'%E2%80%AE%CC%81%EF%BB%BF'"},
		{name: "$filter invalid UTF-8", query: "$filter=substringof('%FF',Subject)"},
		{name: "$filter huge number", query: "$filter=ServiceEdition%20eq%2099999999999999999999999"},
		{name: "$filter function injection", query: "$filter=pg_sleep(10)%20eq%201"},
		{name: "search operators", query: "search=%21%26%7C%28%29%3A*%27%5C%3C-%3E%20%26%26%20%7C%7C"},
		{name: "search many words", query: "search=" + strings.Repeat("a%20b*%20", 400)},
		{name: "search wildcards only", query: "search=%25%25%25___*"},
		{name: "$orderby garbage", query: "$orderby=Subject%20desc%20desc"},
		{name: "$orderby every field twice", query: "$orderby=" + strings.TrimSuffix(strings.Repeat("Subject,CreatedDate%20desc,", 100), ",")},
		{name: "$orderby SQL", query: "$orderby=1;DROP%20TABLE%20messages"},
		{name: "$top huge", query: "$top=99999999999999999999999"},
		{name: "$top negative", query: "$top=-1"},
		{name: "$skip huge", query: "$skip=99999999999999999999999"},
		{name: "$skip negative", query: "$skip=-5"},
		{name: "$top and $skip not numbers", query: "$top=abc&$skip=1e9"},
		{name: "malformed escape", query: "a=%zz"},
		{name: "NUL name", query: "%00=1"},
		{name: "invalid UTF-8 value", query: "x=%FF%FE"},
		{name: "over-long value", query: "x=" + strings.Repeat("a", 5000)},
		{name: "many parameters", query: strings.TrimSuffix(strings.Repeat("p=1&", 2000), "&")},
		{name: "repeated options", query: "$top=1&$top=2&$skip=1&$skip=-1&$filter=a&$filter=b"},
	}
	return cases
}

func namedQueryCases() []hostileCase {
	var cases []hostileCase
	for _, name := range hostileQueryNames {
		for _, v := range hostileQueryValues {
			cases = append(cases, hostileCase{name: name + " " + v.name, query: name + "=" + v.raw})
		}
	}
	return cases
}

// jsonSink is a body holding every field some JSON body of the interface has, its text fields set to
// text and its number fields to number, so that every handler meets the hostile value in its own fields.
func jsonSink(text, number any) []byte {
	right := map[string]any{"ServiceCode": text, "ServiceEditionCode": number, "Action": text}
	form := map[string]any{"Type": text, "DataFormatId": text, "DataFormatVersion": number, "FormData": text}
	attachment := map[string]any{"FileName": text, "AttachmentType": text, "Data": text}
	body := map[string]any{
		"UserName": text, "UserPassword": text, "Type": text, "ServiceCode": text, "ServiceEdition": number,
		"RoleName": text, "RoleDescription": text, "RoleType": text, "SocialSecurityNumber": text, "LastName": text,
		"OrganizationNumber": text, "Name": text, "RoleDefinitionId": number, "Rights": []any{right},
		"Signees":       []any{map[string]any{"SocialSecurityNumber": text, "LastName": text, "OrganizationNumber": text, "Name": text}},
		"ContentDigest": text, "VisibleDateTime": text, "DueDateTime": text, "SigningDeadline": text,
		"_embedded": map[string]any{"forms": []any{form}, "attachments": []any{attachment}, "Rights": []any{right},
			"Roles": []any{map[string]any{"RoleDefinitionId": number}}},
	}
	return must(json.Marshal(body))
}

const (
	jsonType = "application/hal+json"
	xmlType  = "application/xml"
)

func (w *hostileWalk) bodyCases() []hostileCase {
	invalidUTF8 := bytes.ReplaceAll(jsonSink("INVALID", 1), []byte("INVALID"), []byte("\xff\xfe"))
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">` +
		`<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><resource>&lol3;</resource>`
	cases := []hostileCase{
		{name: "JSON empty", contentType: jsonType},
		{name: "JSON malformed", contentType: jsonType, body: []byte(`{"UserName": "x",`)},
		{name: "JSON an array", contentType: jsonType, body: []byte(`[1,2,3]`)},
		{name: "JSON a string", contentType: jsonType, body: []byte(`"just a string"`)},
		{name: "JSON null", contentType: jsonType, body: []byte(`null`)},
		{name: "JSON two values", contentType: jsonType, body: []byte(`{} {}`)},
		{name: "JSON NUL in every string", contentType: jsonType, body: jsonSink("a\x00b", 1)},
		{name: "JSON invalid UTF-8 in every string", contentType: jsonType, body: invalidUTF8},
		{name: "JSON over-long strings", contentType: jsonType, body: jsonSink(strings.Repeat("x", 10<<10), 1)},
		{name: "JSON odd Unicode", contentType: jsonType, body: jsonSink("\u202efdp.exe\ufeffa\u0301\u0301", 1)},
		{name: "JSON traversal", contentType: jsonType, body: jsonSink("../../../etc/passwd", 1)},
		{name: "JSON huge numbers", contentType: jsonType, body: jsonSink("x", json.Number("99999999999999999999999"))},
		{name: "JSON negative numbers", contentType: jsonType, body: jsonSink("x", -1)},
		{name: "JSON fractions", contentType: jsonType, body: jsonSink("x", 1.5)},
		{name: "JSON wrong types", contentType: jsonType, body: jsonSink(123, "abc")},
		{name: "JSON objects everywhere", contentType: jsonType, body: jsonSink(map[string]any{}, []any{})},
		{name: "JSON nulls everywhere", contentType: jsonType, body: jsonSink(nil, nil)},
		{name: "JSON deeply nested arrays", contentType: jsonType, body: []byte(strings.Repeat("[", 100_000))},
		{name: "JSON deeply nested objects", contentType: jsonType, body: []byte(strings.Repeat(`{"a":`, 20_000))},
		{name: "JSON 2 MiB", contentType: jsonType, body: []byte(`{"FormData":"` + strings.Repeat("a", 2<<20) + `"}`)},
		{name: "JSON sent as XML", contentType: xmlType, body: jsonSink("x", 1)},
		{name: "JSON without a content type", body: jsonSink("a\x00b", 1)},
		{name: "JSON under a garbage content type", contentType: "%%%/;;;=", body: jsonSink("x", 1)},
		{name: "multipart", contentType: "multipart/form-data; boundary=x",
			body: []byte("--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../evil.pdf\"\r\n\r\n%PDF-\r\n--x--\r\n")},
		{name: "XML with an external entity", contentType: xmlType,
			body: []byte(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><resource><LastName>&x;</LastName></resource>`)},
		{name: "XML with an external entity, problem asked as XML", contentType: xmlType, header: map[string]string{"Accept": "application/hal+xml"},
			body: []byte(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "http://127.0.0.1:1/x">]><resource><Name>&x;</Name></resource>`)},
		{name: "XML with an external DTD", contentType: xmlType,
			body: []byte(`<?xml version="1.0"?><!DOCTYPE r SYSTEM "http://127.0.0.1:1/evil.dtd"><resource/>`)},
		{name: "XML billion laughs", contentType: xmlType, body: []byte(laughs)},
		{name: "XML deeply nested", contentType: xmlType, body: []byte(strings.Repeat("<a>", 10_000) + strings.Repeat("</a>", 10_000))},
		{name: "XML many elements", contentType: xmlType, body: []byte("<resource>" + strings.Repeat("<a/>", 5000) + "</resource>")},
		{name: "XML malformed", contentType: xmlType, body: []byte(`<resource><LastName></resource>`)},
		{name: "XML NUL character reference", contentType: xmlType, body: []byte(`<resource rel="RightHolder"><LastName>&#0;</LastName></resource>`)},
		{name: "XML NUL byte", contentType: xmlType, body: []byte("<resource rel=\"RightHolder\"><LastName>a\x00b</LastName></resource>")},
		{name: "XML in UTF-16", contentType: xmlType, body: []byte(`<?xml version="1.0" encoding="UTF-16"?><resource/>`)},
		{name: "XML processing instruction", contentType: xmlType, body: []byte(`<?xml-stylesheet href="http://127.0.0.1:1/x.xsl"?><resource/>`)},
		{name: "XML over-long text", contentType: xmlType, body: []byte("<resource><LastName>" + strings.Repeat("x", 70<<10) + "</LastName></resource>")},
		{name: "XML sent as JSON", contentType: jsonType, body: []byte(`<resource rel="RightHolder"/>`)},
	}
	return append(cases, attachmentCases()...)
}

// hostileAttachments are attachments of the open task's type that only their name or content makes
// hostile; each is sent as a JSON attachment and as a streamed one.
var hostileAttachments = []struct{ name, fileName, content string }{
	{"executable named .pdf", "report.pdf", "MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff"},
	{"ELF named .xml", "data.xml", "\x7fELF\x02\x01\x01\x00"},
	{"zero bytes", "empty.pdf", ""},
	{"right-to-left override in the name", "\u202efdp.exe.pdf", "%PDF-1.4\n%hostile\n"},
	{"control character in the name", "a\u0007b.pdf", "%PDF-1.4\n"},
	{"path separator in the name", "../../etc/passwd.pdf", "%PDF-1.4\n"},
	{"encoded path separator in the name", "..%2F..%2Fpasswd.pdf", "%PDF-1.4\n"},
	{"backslash in the name", "..\\windows\\win.ini.pdf", "%PDF-1.4\n"},
	{"only dots", "...", "%PDF-1.4\n"},
	{"Windows device name", "CON.pdf", "%PDF-1.4\n"},
	{"Windows device name in lower case", "com1.xml", "<a/>"},
	{"NUL in the name", "a\x00.pdf", "%PDF-1.4\n"},
	{"over-long name", strings.Repeat("a", 300) + ".pdf", "%PDF-1.4\n"},
}

func attachmentCases() []hostileCase {
	var cases []hostileCase
	for _, a := range hostileAttachments {
		body := must(json.Marshal(map[string]string{"FileName": a.fileName, "AttachmentType": "Revisjonsberetning",
			"Data": base64.StdEncoding.EncodeToString([]byte(a.content))}))
		cases = append(cases,
			hostileCase{name: "attachment " + a.name, contentType: jsonType, body: body},
			hostileCase{name: "streamed attachment " + a.name, contentType: "application/octet-stream",
				query: "attachmentType=Revisjonsberetning&fileName=" + url.QueryEscape(a.fileName), body: []byte(a.content)})
	}
	return cases
}

func (w *hostileWalk) headerCases() []hostileCase {
	cases := []hostileCase{
		{name: "Accept garbage", header: map[string]string{"Accept": "garbage/;;;q=abc"}},
		{name: "Accept odd", header: map[string]string{"Accept": "*/*;q=-1, application/xml;q=99999999999999999999"}},
		{name: "Accept long", header: map[string]string{"Accept": strings.Repeat("text/html;q=0.1, ", 500)}},
		{name: "Accept XML with a NUL query", query: "$filter=%00", header: map[string]string{"Accept": "application/hal+xml"}},
		{name: "Accept-Language garbage", header: map[string]string{"Accept-Language": "\u202e;q=abc,,,"}},
		{name: "Cookie garbage", header: map[string]string{"Authorization": "", "Cookie": ".ASPXAUTH=garbage"}, refuse: true},
		{name: "Cookie over-long", header: map[string]string{"Authorization": "", "Cookie": ".ASPXAUTH=" + strings.Repeat("A", 5000)}, refuse: true},
		{name: "Cookie twice", header: map[string]string{"Authorization": "", "Cookie": ".ASPXAUTH=a; .ASPXAUTH=b; .ASPXAUTH=%00"}, refuse: true},
		{name: "Basic credentials", header: map[string]string{"Cookie": "", "Authorization": "Basic aW5ncmlkLmZqZWxsaGVpbTp4"}, refuse: true},
		{name: "Bearer without a token", header: map[string]string{"Cookie": "", "Authorization": "Bearer"}, refuse: true},
		{name: "ApiKey missing", header: map[string]string{"ApiKey": ""}, refuse: true},
		{name: "ApiKey unknown", header: map[string]string{"ApiKey": "00000000-0000-0000-0000-000000000000"}, refuse: true},
		{name: "ApiKey garbage", header: map[string]string{"ApiKey": "\u202e' OR '1'='1"}, refuse: true},
		{name: "ApiKey invalid UTF-8", header: map[string]string{"ApiKey": "\xff\xfe"}, refuse: true},
		{name: "ApiKey over-long", header: map[string]string{"ApiKey": strings.Repeat("9", 10<<10)}, refuse: true},
		{name: "ApiKey of another area", header: map[string]string{"ApiKey": keyMetadata}, refuse: true},
		{name: "X-Request-Id hostile", header: map[string]string{"X-Request-Id": "\u202e<script>" + strings.Repeat("x", 5000)}},
		{name: "traceparent garbage", header: map[string]string{"traceparent": "00-zzzz-\xff-01"}},
		{name: "Origin garbage", header: map[string]string{"Origin": "null\xff"}},
		{name: "forwarded host garbage", header: map[string]string{"X-Forwarded-Host": "evil.example/\u202e", "X-Forwarded-Proto": "gopher"}},
		{name: "Client-Cert garbage", header: map[string]string{"Client-Cert": ":AAAA:"}},
		{name: "Host garbage", header: map[string]string{"Host": "evil.example:99999"}},
		{name: "method TRACE", method: http.MethodTrace},
		{name: "method PATCH", method: http.MethodPatch, contentType: jsonType, body: jsonSink("x", 1)},
		{name: "method unknown", method: "PROPFIND"},
		{name: "Idempotency-Key over-long", header: map[string]string{"Idempotency-Key": strings.Repeat("k", 10<<10)}},
		{name: "Idempotency-Key odd", header: map[string]string{"Idempotency-Key": "\"\u202e\x00\xff' OR '1'='1"}},
		{name: "Idempotency-Key hostile body", header: map[string]string{"Idempotency-Key": "hostile-walk"}, body: []byte(`{"RoleName":"\u0000"}`), contentType: "application/json"},
		{name: "preflight hostile", method: http.MethodOptions,
			header: map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "DELETE\u202e", "Access-Control-Request-Headers": strings.Repeat("x,", 2000)}},
	}
	for name, tok := range w.tokens {
		cases = append(cases, hostileCase{name: "Bearer " + name, header: map[string]string{"Cookie": "", "Authorization": "Bearer " + tok}, refuse: true})
	}
	return cases
}

var paramPattern = regexp.MustCompile(`:[A-Za-z]+`)

// paramsOf are the walk's values of the route's path parameters for the persona.
func (w *hostileWalk) paramsOf(r api.Route, p persona) map[string]string {
	params := maps.Clone(w.params)
	if r.Method != http.MethodGet {
		params["messageId"] = noMessage
		if target, ok := writeTargets[r.Method+" "+r.Path]; ok {
			params["messageId"] = target
		}
	}
	maps.Copy(params, p.params)
	return params
}

// fill writes the route's path with every parameter at its walk value, and one at raw when hostile names it.
func fill(t *testing.T, params map[string]string, route, hostile, raw string) string {
	return paramPattern.ReplaceAllStringFunc(route, func(p string) string {
		name := p[1:]
		if name == hostile {
			return raw
		}
		v, ok := params[name]
		require.True(t, ok, "the walk has no value for path parameter :%s; add one to the params of newHostileWalk", name)
		return v
	})
}

func (w *hostileWalk) personasOf(r api.Route) []persona {
	switch r.Area {
	case "serviceowner":
		return w.serviceOwners
	case "":
		return w.anonymous
	}
	return w.endUsers
}

func (w *hostileWalk) walkRoute(t *testing.T, r api.Route) {
	personas := w.personasOf(r)
	for _, p := range personas {
		params := w.paramsOf(r, p)
		valid := fill(t, params, r.Path, "", "")
		var cases []hostileCase
		for _, name := range paramPattern.FindAllString(r.Path, -1) {
			for _, v := range hostilePathValues {
				cases = append(cases, hostileCase{name: "path " + name + " " + v.name, path: fill(t, params, r.Path, name[1:], v.raw)})
			}
		}
		cases = append(cases, personaQueryCases()...)
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			for _, c := range w.bodyCases() {
				c.refuse = r.Area != ""
				cases = append(cases, c)
			}
		}
		t.Run(p.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { w.checkCase(t, w.send(t, r.Method, valid, p, c), c) })
			}
		})
	}
	// The header cases change the credentials, and a handler reads its query the same for every caller it
	// lets in: both run once, as the first persona.
	first := personas[0]
	valid := fill(t, w.paramsOf(r, first), r.Path, "", "")
	t.Run(first.name+" (headers and query)", func(t *testing.T) {
		for _, c := range slices.Concat(w.headerCases(), w.queryCases(), namedQueryCases()) {
			c.refuse = c.refuse && r.Area != ""
			t.Run(c.name, func(t *testing.T) { w.checkCase(t, w.send(t, r.Method, valid, first, c), c) })
		}
	})
}

func (w *hostileWalk) send(t *testing.T, method, valid string, p persona, c hostileCase) *httptest.ResponseRecorder {
	if c.method != "" {
		method = c.method
	}
	path := valid
	if c.path != "" {
		path = c.path
	}
	query := strings.Trim(c.query+"&"+p.query, "&")
	if query != "" {
		path += "?" + query
	}
	req, err := http.NewRequest(method, "http://postbox.test"+path, bytes.NewReader(c.body))
	require.NoError(t, err)
	for k, v := range p.header {
		req.Header.Set(k, v)
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	for k, v := range c.header {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	if p.cert != nil {
		req.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{p.cert}}}
	}
	rec := httptest.NewRecorder()
	serve(t, w.srv, rec, req)
	w.statuses[rec.Code]++
	return rec
}

// leakMarkers are what only a stack trace, a database error or a driver's message would put in an answer.
var leakMarkers = []string{"sqlstate", "pgx", "pgconn", "postgres", "goroutine", "panic", "runtime error",
	"violates", "duplicate key", ".go:", "/etc/passwd:", "root:x:0:0"}

func (w *hostileWalk) checkCase(t *testing.T, rec *httptest.ResponseRecorder, c hostileCase) {
	w.check(t, rec)
	if c.refuse && rec.Code < 300 {
		t.Errorf("accepted (%d) where it must be refused", rec.Code)
	}
}

// docsScript is the reference page's script as the binary serves it: the Redoc bundle, third-party code
// whose text holds leak markers ("panic"), and the page's own lines after it, so an answer that is these
// files unchanged leaks nothing.
var docsScript = sync.OnceValue(func() string {
	var all []byte
	for _, name := range []string{"docs/redoc.standalone.js", "docs/init.js"} {
		b, err := os.ReadFile(name)
		if err != nil {
			panic(err)
		}
		all = append(append(all, b...), '\n')
	}
	return string(all)
})

func (w *hostileWalk) check(t *testing.T, rec *httptest.ResponseRecorder) {
	body := rec.Body.String()
	if rec.Code == http.StatusOK && body == docsScript() {
		return
	}
	shown := body
	if len(shown) > 500 {
		shown = shown[:500] + "…"
	}
	if rec.Code >= 500 {
		t.Errorf("answered %d: %s", rec.Code, shown)
		return
	}
	lower := strings.ToLower(body)
	for _, m := range leakMarkers {
		if strings.Contains(lower, m) {
			t.Errorf("the answer (%d) holds %q: %s", rec.Code, m, shown)
		}
	}
	for _, s := range w.secrets {
		if strings.Contains(body, s) {
			t.Errorf("the answer (%d) holds a secret of the walk", rec.Code)
		}
	}
	if m := jwtLike.FindString(body); m != "" {
		t.Errorf("the answer (%d) holds a token %s…", rec.Code, m[:12])
	}
	if rec.Code >= 400 {
		checkProblem(t, rec, shown)
	}
}

// checkProblem requires an RFC 9457 problem document, as JSON or as XML, of the answer's status.
func checkProblem(t *testing.T, rec *httptest.ResponseRecorder, shown string) {
	var p struct {
		Type   string `json:"type" xml:"type"`
		Title  string `json:"title" xml:"title"`
		Status int    `json:"status" xml:"status"`
	}
	ct := rec.Header().Get("Content-Type")
	var err error
	switch {
	case strings.HasPrefix(ct, "application/problem+json"):
		err = json.Unmarshal(rec.Body.Bytes(), &p)
	case strings.HasPrefix(ct, "application/problem+xml"):
		err = xml.Unmarshal(rec.Body.Bytes(), &p)
	default:
		t.Errorf("a %d answered as %q, not as a problem: %s", rec.Code, ct, shown)
		return
	}
	if err != nil || p.Status != rec.Code || p.Type == "" || p.Title == "" {
		t.Errorf("a %d whose problem document is broken (%v): %s", rec.Code, err, shown)
	}
}

// hostileUnwatched are the tables a refused request may change, and why:
//   - login_failures counts every failed password login by the user name as typed (existing or not, so a
//     lockout reveals nothing); the walk's hostile bodies on authenticatewithpassword are such failures.
//   - idempotent_requests keeps the answer to a creating request with an Idempotency-Key, a refusal too,
//     for its retries.
var hostileUnwatched = map[string]bool{"login_failures": true, "idempotent_requests": true}

// hostileColumns narrows a table to the columns a request may not change: a session's expiry slides with
// every request made with its cookie.
var hostileColumns = map[string]string{
	"sessions": "token_hash, login_id, security_level, enterprise_org, created_at, absolute_end",
}

// snapshotTables is every table's row count and a checksum over its rows.
func snapshotTables(t *testing.T, pool *pgxpool.Pool) map[string]string {
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, tables, "messages")
	out := map[string]string{}
	for _, table := range tables {
		if hostileUnwatched[table] {
			continue
		}
		row := "t"
		if cols, ok := hostileColumns[table]; ok {
			row = "(" + cols + ")"
		}
		var count int64
		var sum *string
		require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(
			`SELECT count(*), md5(string_agg(md5(%s::text), '' ORDER BY md5(%s::text))) FROM %s AS t`,
			row, row, pgx.Identifier{table}.Sanitize())).Scan(&count, &sum))
		out[table] = fmt.Sprintf("%d rows, %v", count, deref(sum))
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
