package api_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store/storetest"
)

// Service owners and their keys in the demo dataset.
const (
	keyFJE = "2657029B-D422-4B56-A884-58A8056BD663" // serviceowner, metadata; FJE
	keyNSF = "29DB2E35-41C1-4D20-A165-3AAF09C015E8" // serviceowner, metadata; NSF
	orgFJE = "310900028"                            // Fjordetaten: 4711/1, 4711/2, 7001/1; owns certs/serviceowner.pem
	orgNSF = "310901016"                            // Nordlys skatteforvaltning: 5302/1, 7102/1
)

// The services of each owner: service-owner views must never show roles or rights beyond them.
var ownerServices = map[string][]string{"FJE": {"4711/1", "4711/2", "7001/1"}, "NSF": {"5302/1", "7102/1"}}

// soCaller is one way to call the service-owner area.
type soCaller struct {
	name    string
	key     string
	cert    string // certificate file under certs/, or ""
	token   string // bearer token, or ""
	forceEI bool
}

func orgToken(t testing.TB, org, scope string) string {
	t.Helper()
	m, err := identity.LoadMinter(filepath.Join(demoDir, "certs", "issuer-key.pem"), "demo-1", testIssuer, testAudience)
	require.NoError(t, err)
	tok, err := m.Mint(identity.TokenRequest{Org: org, Scope: scope})
	require.NoError(t, err)
	return tok
}

func fjeCertificate(t testing.TB) soCaller {
	return soCaller{name: "FJE certificate", key: keyFJE, cert: "serviceowner.pem", forceEI: true}
}

func fjeToken(t testing.TB) soCaller {
	return soCaller{name: "FJE token", key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner")}
}

func nsfToken(t testing.TB) soCaller {
	return soCaller{name: "NSF token", key: keyNSF, token: orgToken(t, orgNSF, "platform:serviceowner")}
}

// fjeCallers are the two ways the fixture's service owner FJE calls: its certificate and an organization token.
func fjeCallers(t testing.TB) []soCaller { return []soCaller{fjeCertificate(t), fjeToken(t)} }

func (sc soCaller) get(t *testing.T, h http.Handler, path string, header ...string) response {
	t.Helper()
	if sc.forceEI && !strings.Contains(path, "ForceEIAuthentication") {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "ForceEIAuthentication"
	}
	hdr := map[string]string{}
	if sc.key != "" {
		hdr["ApiKey"] = sc.key
	}
	if sc.token != "" {
		hdr["Authorization"] = "Bearer " + sc.token
	}
	for i := 0; i+1 < len(header); i += 2 {
		hdr[header[i]] = header[i+1]
	}
	var change func(*http.Request)
	if sc.cert != "" {
		cert := loadCert(t, sc.cert)
		change = func(r *http.Request) { r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}} }
	}
	return doWith(t, h, request{path: path, header: hdr}, change)
}

// list requires a 200 and returns the named embedded list.
func (sc soCaller) list(t *testing.T, h http.Handler, path, name string) []map[string]any {
	t.Helper()
	r := sc.get(t, h, path)
	require.Equal(t, http.StatusOK, r.Code, "%s %s: %s", sc.name, path, r.Body.String())
	return r.embedded(t, name)
}

// walk follows a list's next links from path and returns every item.
func (sc soCaller) walk(t *testing.T, h http.Handler, path, name string) (items []map[string]any, pages int) {
	t.Helper()
	for path != "" {
		r := sc.get(t, h, path)
		require.Equal(t, http.StatusOK, r.Code, "%s %s: %s", sc.name, path, r.Body.String())
		items = append(items, r.embedded(t, name)...)
		pages++
		path = ""
		if next, ok := r.json(t)["_links"].(map[string]any)["next"].(map[string]any); ok {
			path = requestURI(t, next["href"].(string))
		}
		require.Less(t, pages, 10_000, "the walk does not end")
	}
	return items, pages
}

func requestURI(t *testing.T, href string) string {
	t.Helper()
	u, err := url.Parse(href)
	require.NoError(t, err)
	require.Equal(t, "postbox.test", u.Host, "links are absolute on the request's base URL")
	return u.RequestURI()
}

func field(items []map[string]any, name string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		v, _ := it[name].(string)
		out = append(out, v)
	}
	return out
}

// partyKeys names each reportee by its organization number or national identity number.
func partyKeys(items []map[string]any) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if n, ok := it["OrganizationNumber"].(string); ok {
			out = append(out, n)
		} else {
			out = append(out, it["SocialSecurityNumber"].(string))
		}
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestServiceOwnerAccess(t *testing.T) {
	const path = "/api/serviceowner/organizations"
	fje, nsf := fjeToken(t), nsfToken(t)
	cases := []struct {
		name    string
		caller  soCaller
		path    string
		status  int
		problem string
	}{
		{"FJE certificate", fjeCertificate(t), path, http.StatusOK, ""},
		{"FJE certificate without ForceEIAuthentication", soCaller{key: keyFJE, cert: "serviceowner.pem"}, path, http.StatusOK, ""},
		{"FJE token", fje, path, http.StatusOK, ""},
		{"NSF token", nsf, path, http.StatusOK, ""},
		{"organizations scope", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/organizations")}, path, http.StatusOK, ""},
		{"role definitions need no particular scope", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/reportees")}, "/api/serviceowner/roledefinitions", http.StatusOK, ""},

		{"no API key", soCaller{token: fje.token}, path, http.StatusUnauthorized, "missing-api-key"},
		{"no credentials", soCaller{key: keyFJE}, path, http.StatusUnauthorized, "unauthenticated"},
		{"a certificate of an organization that is no service owner", soCaller{key: keyFJE, cert: "enterprise.pem", forceEI: true}, path, http.StatusForbidden, "not-a-service-owner"},
		{"an organization token of one that is no service owner", soCaller{key: keyFJE, token: orgToken(t, orgO3, "platform:serviceowner")}, path, http.StatusForbidden, "not-a-service-owner"},
		{"a token without a service-owner scope", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:reportees")}, path, http.StatusForbidden, "insufficient-scope"},
		{"a token with another service-owner scope", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/reportees")}, path, http.StatusForbidden, "insufficient-scope"},
		{"the rolesandrights scope on organizations", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/rolesandrights")}, path, http.StatusForbidden, "insufficient-scope"},
		{"FJE token with NSF's key", soCaller{key: keyNSF, token: fje.token}, path, http.StatusForbidden, "api-key-owner"},
		{"NSF token with FJE's key", soCaller{key: keyFJE, token: nsf.token}, path, http.StatusForbidden, "api-key-owner"},
		{"FJE certificate with NSF's key", soCaller{key: keyNSF, cert: "serviceowner.pem", forceEI: true}, path, http.StatusForbidden, "api-key-owner"},
		{"a key without the serviceowner area", soCaller{key: keyAll, cert: "serviceowner.pem", forceEI: true}, path, http.StatusForbidden, "api-key-area"},
		{"a metadata-only key", soCaller{key: keyMetadata, token: fje.token}, path, http.StatusForbidden, "api-key-area"},
		{"FJE token with ForceEIAuthentication", soCaller{key: keyFJE, token: fje.token, forceEI: true}, path, http.StatusOK, ""},
		{"organizations scope with ForceEIAuthentication", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/organizations"), forceEI: true}, path, http.StatusOK, ""},
		{"ForceEIAuthentication with a token of another scope", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:reportees"), forceEI: true}, path, http.StatusForbidden, "insufficient-scope"},
		{"ForceEIAuthentication with a person token", soCaller{key: keyFJE, token: personToken(t, ssnP1, "platform:serviceowner"), forceEI: true}, path, http.StatusForbidden, "serviceowner-authentication"},
		{"ForceEIAuthentication without any credentials", soCaller{key: keyFJE, forceEI: true}, path, http.StatusForbidden, "certificate-required"},
		{"a person token", soCaller{key: keyFJE, token: personToken(t, ssnP1, "platform:serviceowner")}, path, http.StatusForbidden, "serviceowner-authentication"},
		{"no role definitions without any scope", soCaller{key: keyFJE, token: orgToken(t, orgFJE, "")}, "/api/serviceowner/roledefinitions", http.StatusForbidden, "insufficient-scope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.caller.get(t, shared, tc.path)
			if tc.status == http.StatusOK {
				require.Equal(t, http.StatusOK, r.Code, r.Body.String())
				return
			}
			p := requireProblem(t, r, tc.status)
			assert.Equal(t, "urn:postbox:problem:"+tc.problem, p["type"])
		})
	}
}

// Every scope opens what the interface's scope table says, and platform:serviceowner opens all.
func TestServiceOwnerScopes(t *testing.T) {
	paths := map[string]string{
		"organizations":  "/api/serviceowner/organizations/310123455/personalcontacts",
		"rolesandrights": "/api/serviceowner/authorization/rights?subject=" + ssnP1 + "&reportee=" + orgO1,
		"reportees":      "/api/serviceowner/reportees?subject=" + ssnP1,
	}
	for _, scope := range []string{"organizations", "rolesandrights", "reportees"} {
		caller := soCaller{key: keyFJE, token: orgToken(t, orgFJE, "platform:serviceowner/"+scope)}
		for area, path := range paths {
			r := caller.get(t, shared, path)
			if area == scope {
				assert.Equal(t, http.StatusOK, r.Code, "%s on %s: %s", scope, area, r.Body.String())
			} else {
				requireProblem(t, r, http.StatusForbidden)
			}
		}
	}
}

func TestServiceOwnerOrganizations(t *testing.T) {
	all := []string{orgO1, orgO2, orgO3, orgO4, orgO5, orgO6}
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			orgs := caller.list(t, shared, "/api/serviceowner/organizations", "organizations")
			assert.Equal(t, all, field(orgs, "OrganizationNumber"))
			o1 := orgs[0]
			assert.Equal(t, "Fjellheim Maskin AS", o1["Name"])
			assert.Equal(t, "AS", o1["Type"])
			assert.Equal(t, "2024-11-04T13:02:10", o1["LastChanged"])
			assert.Equal(t, "2025-01-20T09:45:00", o1["LastConfirmed"])
			assert.Contains(t, link(t, o1, "self"), "/api/serviceowner/organizations/"+orgO1)
			assert.Contains(t, link(t, o1, "officialcontacts"), "/api/serviceowner/organizations/"+orgO1+"/officialcontacts")
			assert.Contains(t, link(t, o1, "personalcontacts"), "/api/serviceowner/organizations/"+orgO1+"/personalcontacts")
			assert.Equal(t, "BEDR", orgs[1]["Type"])
			assert.Nil(t, orgs[3]["LastConfirmed"], "unknown timestamps are null")

			search := []struct {
				query string
				want  []string
			}{
				{"email=post@fjellheim-maskin.example", []string{orgO1, orgO2}},
				{"email=" + url.QueryEscape(" POST@Fjellheim-Maskin.EXAMPLE "), []string{orgO1, orgO2}},
				{"email=firmapost@nordkyst-sjomat.example", []string{orgO3}},
				// A personal contact's e-mail finds every organization the person holds a role for.
				{"email=Ingrid.Fjellheim@epost.example", []string{orgO1, orgO2, orgO3}},
				{"email=per.storvik@epost.example", []string{orgO1}},
				{"email=ola.bakketun@epost.example", nil}, // P2 holds no role
				{"email=nobody@nowhere.example", nil},
				{"phoneNumber=" + url.QueryEscape("+4791000303"), []string{orgO3}},
				{"phoneNumber=91000303", []string{orgO3}},
				{"phoneNumber=" + url.QueryEscape("+47 910 00 303"), []string{orgO3}},
				{"phoneNumber=" + url.QueryEscape("0047 910-00-303"), []string{orgO3}},
				{"phoneNumber=40000003", []string{orgO1}}, // P3's own number
				{"phoneNumber=" + url.QueryEscape("+4740000001"), []string{orgO1, orgO2, orgO3}},
				{"phoneNumber=" + url.QueryEscape("+4691000303"), nil}, // a Swedish number is another number
				// Both terms: each must match (on any contact point).
				{"email=ingrid.fjellheim@epost.example&phoneNumber=91000303", []string{orgO3}},
				{"email=post@fjellheim-maskin.example&phoneNumber=91000303", nil},
				{"email=post@fjellheim-maskin.example&$filter=" + url.QueryEscape("Type eq 'BEDR'"), []string{orgO2}},
			}
			for _, tc := range search {
				got := caller.list(t, shared, "/api/serviceowner/organizations?"+tc.query, "organizations")
				assert.Equal(t, tc.want, nilIfEmpty(field(got, "OrganizationNumber")), tc.query)
			}

			// Paging: continuation in the default order, $skip under $orderby; each organization once.
			items, pages := caller.walk(t, shared, "/api/serviceowner/organizations?$top=2", "organizations")
			assert.Equal(t, all, field(items, "OrganizationNumber"))
			assert.Equal(t, 3, pages)
			r := caller.get(t, shared, "/api/serviceowner/organizations?$top=2")
			assert.Contains(t, link(t, r.json(t), "next"), "continuation=")
			items, _ = caller.walk(t, shared, "/api/serviceowner/organizations?$top=4&$orderby=Name%20desc", "organizations")
			assert.Equal(t, []string{orgO3, orgO5, orgO6, orgO2, orgO1, orgO4}, field(items, "OrganizationNumber"))
			r = caller.get(t, shared, "/api/serviceowner/organizations?$top=4&$orderby=Name")
			assert.Contains(t, link(t, r.json(t), "next"), "$skip=4")
		})
	}
}

// reporteeIDOf finds the reportee id of one of P1's organizations in the user-facing reportee list.
func reporteeIDOf(t *testing.T, org string) string {
	t.Helper()
	r := get(t, shared, "/api/reportees", "ApiKey", keyAll, "Authorization", "Bearer "+personToken(t, ssnP1, "platform:reportees"))
	for _, rep := range r.embedded(t, "reportees") {
		if rep["OrganizationNumber"] == org {
			return rep["ReporteeId"].(string)
		}
	}
	t.Fatalf("P1 does not represent %s", org)
	return ""
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestServiceOwnerContinuationTokens(t *testing.T) {
	caller := fjeToken(t)
	r := caller.get(t, shared, "/api/serviceowner/organizations?$top=1")
	next := requestURI(t, link(t, r.json(t), "next"))
	token, err := url.ParseQuery(next[strings.Index(next, "?")+1:])
	require.NoError(t, err)
	tok := token.Get("continuation")
	require.NotEmpty(t, tok)
	assert.NotContains(t, tok, "5000", "the token is opaque")

	bad := map[string]string{
		"with $skip":        "/api/serviceowner/organizations?$skip=1&continuation=" + tok,
		"with $orderby":     "/api/serviceowner/organizations?$orderby=Name&continuation=" + tok,
		"garbage":           "/api/serviceowner/organizations?continuation=not-a-token",
		"empty":             "/api/serviceowner/organizations?continuation=",
		"from another list": "/api/serviceowner/roledefinitions?continuation=" + tok,
	}
	for name, path := range bad {
		p := requireProblem(t, caller.get(t, shared, path), http.StatusBadRequest)
		assert.Equal(t, "urn:postbox:problem:invalid-continuation", p["type"], name)
	}
	for _, path := range []string{"/api/serviceowner/organizations?$filter=" + url.QueryEscape("Nmae eq 'x'"), "/api/serviceowner/organizations?$top=x"} {
		requireProblem(t, caller.get(t, shared, path), http.StatusBadRequest)
	}
}

func TestServiceOwnerOneOrganization(t *testing.T) {
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			r := caller.get(t, shared, "/api/serviceowner/organizations/"+orgO2+"/")
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			o := r.json(t)
			assert.Equal(t, "Fjellheim Maskin AS avd. Gjøvik", o["Name"])
			assert.Equal(t, "BEDR", o["Type"])
			assert.Equal(t, "2024-06-18T10:30:00", o["LastChanged"])

			// The reportee id of the organization works as well, and the literal parts of the path ignore case.
			self := requestURI(t, link(t, caller.list(t, shared, "/api/serviceowner/organizations?$filter="+url.QueryEscape("OrganizationNumber eq '"+orgO2+"'"), "organizations")[0], "self"))
			assert.Equal(t, "/api/serviceowner/organizations/"+orgO2, self)
			byID := caller.get(t, shared, "/api/serviceowner/organizations/"+reporteeIDOf(t, orgO2))
			require.Equal(t, http.StatusOK, byID.Code, byID.Body.String())
			assert.Equal(t, orgO2, byID.json(t)["OrganizationNumber"])
			assert.Equal(t, http.StatusOK, caller.get(t, shared, "/api/serviceowner/Organizations/"+orgO2).Code)

			for _, who := range []string{"999999999", ssnP1, "r1", "my", "x"} {
				requireProblem(t, caller.get(t, shared, "/api/serviceowner/organizations/"+who), http.StatusNotFound)
			}

			x := caller.get(t, shared, "/api/serviceowner/organizations/"+orgO1, "Accept", "application/hal+xml")
			require.Equal(t, http.StatusOK, x.Code, x.Body.String())
			requireWellFormedXML(t, x.Body.Bytes())
			assert.Contains(t, x.Body.String(), "<OrganizationNumber>"+orgO1+"</OrganizationNumber>")
		})
	}
}

func TestServiceOwnerOfficialContacts(t *testing.T) {
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			contacts := caller.list(t, shared, "/api/serviceowner/organizations/"+orgO3+"/officialcontacts/", "officialcontacts")
			require.Len(t, contacts, 1)
			assert.Equal(t, map[string]any{"MobileNumber": "+4791000303", "MobileNumberChanged": "2022-09-01T12:00:00",
				"EMailAddress": "firmapost@nordkyst-sjomat.example", "EMailAddressChanged": "2022-09-01T12:00:00"}, contacts[0])
			assert.Empty(t, caller.list(t, shared, "/api/serviceowner/organizations/"+orgO3+"/officialcontacts?$filter="+
				url.QueryEscape("EMailAddressChanged gt DateTime'2023-01-01T00:00:00'"), "officialcontacts"))
			requireProblem(t, caller.get(t, shared, "/api/serviceowner/organizations/999999999/officialcontacts"), http.StatusNotFound)
			x := caller.get(t, shared, "/api/serviceowner/organizations/"+orgO3+"/officialcontacts", "Accept", "application/xml")
			require.Equal(t, http.StatusOK, x.Code)
			requireWellFormedXML(t, x.Body.Bytes())
		})
	}
}

func TestServiceOwnerPersonalContacts(t *testing.T) {
	base := "/api/serviceowner/organizations/" + orgO1 + "/personalcontacts"
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			contacts := caller.list(t, shared, base+"/", "personalcontacts")
			assert.Equal(t, []string{ssnP1, ssnP3, ssnP4}, field(contacts, "SocialSecurityNumber"), "the persons holding a role for O1")
			p1 := contacts[0]
			assert.Regexp(t, `^r[0-9]+$`, p1["PersonalContactId"])
			assert.Equal(t, "Ingrid Fjellheim", p1["Name"])
			assert.Equal(t, "+4740000001", p1["MobileNumber"])
			assert.Equal(t, "ingrid.fjellheim@epost.example", p1["EMailAddress"])
			assert.Contains(t, p1, "MobileNumberChanged")
			assert.Equal(t, base+"/"+p1["PersonalContactId"].(string)+"/roles", requestURI(t, link(t, p1, "roles")))

			filters := []struct {
				query string
				want  []string
			}{
				{"roleDefinitionCode=HADM", []string{ssnP1}},
				{"roleDefinitionCode=REGNA", []string{ssnP3}},
				{"roleDefinitionCode=UTINN", nil}, // P1 holds it for O2, not O1
				{"serviceCode=4711", []string{ssnP1, ssnP3}},
				{"serviceCode=4711&serviceEdition=2", []string{ssnP1, ssnP3}},
				{"serviceCode=7001&serviceEdition=1", []string{ssnP1, ssnP3}},
				{"serviceCode=7001&roleDefinitionCode=DAGL", []string{ssnP1}},
				{"$filter=" + url.QueryEscape("startswith(Name, 'Per')"), []string{ssnP4}},
			}
			for _, tc := range filters {
				got := caller.list(t, shared, base+"?"+tc.query, "personalcontacts")
				assert.Equal(t, tc.want, nilIfEmpty(field(got, "SocialSecurityNumber")), tc.query)
			}
			refused := []struct {
				query   string
				status  int
				problem string
			}{
				{"serviceCode=7102", http.StatusForbidden, "service-not-owned"}, // NSF's
				{"serviceCode=4711&serviceEdition=9", http.StatusForbidden, "service-not-owned"},
				{"roleDefinitionCode=INNSK", http.StatusForbidden, "role-not-relevant"}, // grants only 7102 (NSF)
				{"roleDefinitionCode=ADMAI", http.StatusForbidden, "role-not-relevant"}, // grants nothing
				{"roleDefinitionCode=NOPE", http.StatusBadRequest, "bad-request"},
				{"serviceEdition=1", http.StatusBadRequest, "bad-request"},
				{"serviceCode=4711&serviceEdition=x", http.StatusBadRequest, "bad-request"},
			}
			for _, tc := range refused {
				p := requireProblem(t, caller.get(t, shared, base+"?"+tc.query), tc.status)
				assert.Equal(t, "urn:postbox:problem:"+tc.problem, p["type"], tc.query)
			}

			items, pages := caller.walk(t, shared, base+"?$top=1", "personalcontacts")
			assert.Equal(t, []string{ssnP1, ssnP3, ssnP4}, field(items, "SocialSecurityNumber"))
			assert.Equal(t, 3, pages)
		})
	}
	// NSF sees the holders of rights on its own services.
	got := nsfToken(t).list(t, shared, base+"?serviceCode=7102", "personalcontacts")
	assert.Equal(t, []string{ssnP1, ssnP4}, field(got, "SocialSecurityNumber"))
	got = nsfToken(t).list(t, shared, base+"?roleDefinitionCode=INNSK", "personalcontacts")
	assert.Equal(t, []string{ssnP4}, field(got, "SocialSecurityNumber"))
}

// contactID is the PersonalContactId of a person holding a role for org.
func contactID(t *testing.T, caller soCaller, org, ssn string) string {
	t.Helper()
	for _, ct := range caller.list(t, shared, "/api/serviceowner/organizations/"+org+"/personalcontacts", "personalcontacts") {
		if ct["SocialSecurityNumber"] == ssn {
			return ct["PersonalContactId"].(string)
		}
	}
	t.Fatalf("%s is no personal contact of %s", ssn, org)
	return ""
}

func roleCodes(items []map[string]any) []string { return sorted(field(items, "RoleDefinitionCode")) }

func TestServiceOwnerPersonalContactRoles(t *testing.T) {
	base := "/api/serviceowner/organizations/" + orgO1 + "/personalcontacts/"
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			p1 := contactID(t, caller, orgO1, ssnP1)
			roles := caller.list(t, shared, base+p1+"/roles", "roles")
			assert.Equal(t, []string{"DAGL", "HADM"}, roleCodes(roles))
			for _, r := range roles {
				assert.NotZero(t, r["RoleId"])
				assert.NotEmpty(t, r["RoleName"])
				assert.NotEmpty(t, r["DelegatedTime"])
				assert.Equal(t, "Enhetsregisteret", r["Delegator"])
				def := caller.get(t, shared, requestURI(t, link(t, r, "roledefinition")))
				require.Equal(t, http.StatusOK, def.Code)
				assert.Equal(t, r["RoleDefinitionId"], def.json(t)["RoleDefinitionId"])
			}
			dagl := roles[slices.IndexFunc(roles, func(r map[string]any) bool { return r["RoleDefinitionCode"] == "DAGL" })]
			assert.Equal(t, "External", dagl["RoleType"])
			assert.EqualValues(t, 92, dagl["RoleDefinitionId"])

			// P3's access manager role grants nothing, so no service owner is shown it.
			assert.Equal(t, []string{"REGNA"}, roleCodes(caller.list(t, shared, base+contactID(t, caller, orgO1, ssnP3)+"/roles", "roles")))
			// P4 holds only INNSK, which concerns NSF's services.
			assert.Empty(t, caller.list(t, shared, base+contactID(t, caller, orgO1, ssnP4)+"/roles", "roles"))
			assert.Equal(t, []string{"DAGL"}, roleCodes(caller.list(t, shared, base+p1+"/roles?$filter="+url.QueryEscape("RoleType eq 'External'"), "roles")))

			// Not a contact of O1 (a contact of O2, a person without roles, no person at all): 404.
			p1ofO3 := contactID(t, caller, orgO3, ssnP1)
			requireProblem(t, caller.get(t, shared, "/api/serviceowner/organizations/"+orgO5+"/personalcontacts/"+p1ofO3+"/roles"), http.StatusNotFound)
			for _, who := range []string{"r1", ssnP1, "x"} {
				requireProblem(t, caller.get(t, shared, base+who+"/roles"), http.StatusNotFound)
			}
		})
	}
	assert.Equal(t, []string{"INNSK"}, roleCodes(nsfToken(t).list(t, shared, base+contactID(t, nsfToken(t), orgO1, ssnP4)+"/roles", "roles")))
}

func TestServiceOwnerAuthorizationRoles(t *testing.T) {
	path := func(subject, reportee string) string {
		return "/api/serviceowner/authorization/roles?language=1044&subject=" + subject + "&reportee=" + reportee
	}
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			cases := []struct {
				subject, reportee string
				want              []string
			}{
				{ssnP1, orgO1, []string{"DAGL", "HADM"}},
				{ssnP1, orgO2, []string{"UTINN"}},
				{ssnP1, orgO3, []string{"POSTI"}}, // through 7001/1
				{ssnP3, orgO1, []string{"REGNA"}}, // ADMAI grants nothing
				{ssnP4, orgO1, nil},               // INNSK is NSF's business
				{ssnP2, orgO1, nil},
				{ssnP1, ssnP1, []string{"HADM"}}, // the automatic base role of a person acting for themself
				{ssnP5, orgO6, []string{"DAGL"}},
			}
			for _, tc := range cases {
				got := caller.list(t, shared, path(tc.subject, tc.reportee), "roles")
				assert.Equal(t, tc.want, nilIfEmpty(roleCodes(got)), "%s for %s", tc.subject, tc.reportee)
			}
			base := caller.list(t, shared, path(ssnP2, ssnP2), "roles")
			require.Len(t, base, 1)
			assert.NotContains(t, base[0], "RoleId", "the base role comes from no delegation")
			assert.NotContains(t, base[0], "Delegator")
			assert.Nil(t, base[0]["DelegatedTime"])
			assert.EqualValues(t, 85, base[0]["RoleDefinitionId"])

			items, pages := caller.walk(t, shared, path(ssnP1, orgO1)+"&$top=1", "roles")
			assert.Equal(t, []string{"DAGL", "HADM"}, roleCodes(items))
			assert.Equal(t, 2, pages)

			refused := []struct {
				query  string
				status int
			}{
				{"reportee=" + orgO1, http.StatusBadRequest},
				{"subject=" + ssnP1, http.StatusBadRequest},
				{"subject=abc&reportee=" + orgO1, http.StatusBadRequest},
				{"subject=11111111111&reportee=" + orgO1, http.StatusNotFound},
				{"subject=" + ssnP1 + "&reportee=999999999", http.StatusNotFound},
				{"subject=" + ssnP1 + "&reportee=" + orgO1 + "&language=9999", http.StatusBadRequest},
			}
			for _, tc := range refused {
				p := requireProblem(t, caller.get(t, shared, "/api/serviceowner/authorization/roles?"+tc.query), tc.status)
				assert.NotContains(t, p["detail"], "11111111111", "details never repeat the number asked about")
			}
		})
	}
}

func TestServiceOwnerAuthorizationRights(t *testing.T) {
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			r := caller.get(t, shared, "/api/serviceowner/authorization/rights?subject="+ssnP3+"&reportee="+orgO1)
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			body := r.json(t)
			assert.Equal(t, map[string]any{"Name": "Sigrid Haugland", "Type": "Person", "SocialSecurityNumber": ssnP3}, body["Subject"])
			assert.Equal(t, map[string]any{"Name": "Fjellheim Maskin AS", "Type": "Enterprise", "OrganizationNumber": orgO1, "Status": "Active"}, body["Reportee"])
			assert.Contains(t, link(t, body, "self"), "/api/serviceowner/authorization/rights?")
			var got []string
			for _, x := range body["Rights"].([]any) {
				right := x.(map[string]any)
				assert.NotZero(t, right["RightID"])
				assert.Equal(t, "Service", right["RightType"])
				assert.Equal(t, "RoleTypeRights", right["RightSourceType"])
				assert.Contains(t, right, "IsDelegatable")
				got = append(got, fmt.Sprintf("%s/%v %s", right["ServiceCode"], right["ServiceEditionCode"], right["Action"]))
			}
			assert.Equal(t, []string{"4711/1 Read", "4711/1 Write", "4711/1 ArchiveRead", "4711/2 Read", "4711/2 Write", "4711/2 ArchiveRead", "7001/1 Read"}, got)

			// A person acting for themself has the rights of the automatic base role (HADM) on the caller's services.
			self := caller.get(t, shared, "/api/serviceowner/authorization/rights?subject="+ssnP2+"&reportee="+ssnP2).json(t)
			rights := self["Rights"].([]any)
			assert.Len(t, rights, 6+6+4, "4711/1 and 4711/2: all six actions; 7001/1: Read, ArchiveRead, ArchiveDelete, Delete")
			assert.NotZero(t, rights[0].(map[string]any)["RightID"])

			// No rights: an empty list, not null.
			none := caller.get(t, shared, "/api/serviceowner/authorization/rights?subject="+ssnP4+"&reportee="+orgO1).json(t)
			assert.Equal(t, []any{}, none["Rights"])

			x := caller.get(t, shared, "/api/serviceowner/authorization/rights?subject="+ssnP3+"&reportee="+orgO1, "Accept", "application/hal+xml")
			require.Equal(t, http.StatusOK, x.Code)
			requireWellFormedXML(t, x.Body.Bytes())
			assert.Contains(t, x.Body.String(), "<Right>")

			requireProblem(t, caller.get(t, shared, "/api/serviceowner/authorization/rights?subject="+ssnP3), http.StatusBadRequest)
		})
	}
}

// Whatever subject, reportee and caller, service-owner views show only the caller's own services.
func TestServiceOwnerViewsStayWithinTheirServices(t *testing.T) {
	callers := map[string]soCaller{"FJE": fjeToken(t), "NSF": nsfToken(t)}
	pairs := [][2]string{{ssnP1, orgO1}, {ssnP1, orgO2}, {ssnP1, orgO3}, {ssnP3, orgO1}, {ssnP4, orgO1}, {ssnP5, orgO4}, {ssnP5, orgO6}, {ssnP1, ssnP1}}
	defs := map[string][]string{} // role definition code → the services it grants, as each owner sees them
	for owner, caller := range callers {
		mine := ownerServices[owner]
		for _, pair := range pairs {
			body := caller.get(t, shared, "/api/serviceowner/authorization/rights?subject="+pair[0]+"&reportee="+pair[1]).json(t)
			for _, x := range body["Rights"].([]any) {
				right := x.(map[string]any)
				assert.Contains(t, mine, fmt.Sprintf("%s/%v", right["ServiceCode"], right["ServiceEditionCode"]), "%s sees %v", owner, right)
			}
			for _, role := range caller.list(t, shared, "/api/serviceowner/authorization/roles?subject="+pair[0]+"&reportee="+pair[1], "roles") {
				def := caller.get(t, shared, requestURI(t, link(t, role, "roledefinition"))).json(t)
				rights := def["Rights"].([]any)
				assert.NotEmpty(t, rights, "%s is shown role %s, which grants it nothing", owner, role["RoleDefinitionCode"])
				for _, x := range rights {
					right := x.(map[string]any)
					svc := fmt.Sprintf("%s/%v", right["ServiceCode"], right["ServiceEditionCode"])
					assert.Contains(t, mine, svc)
					defs[owner+" "+role["RoleDefinitionCode"].(string)] = append(defs[owner+" "+role["RoleDefinitionCode"].(string)], svc)
				}
			}
		}
	}
	assert.NotContains(t, defs, "FJE INNSK")
	assert.NotContains(t, defs, "NSF REGNA", "REGNA grants only FJE's services")
	assert.Contains(t, defs, "NSF DAGL")
	assert.Contains(t, defs, "FJE DAGL")
}

func TestServiceOwnerRoleDefinitions(t *testing.T) {
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			defs := caller.list(t, shared, "/api/serviceowner/roledefinitions?language=1033", "roledefinitions")
			assert.Equal(t, []string{"HADM", "ADMAI", "UTINN", "REGNA", "POSTI", "INNSK", "STATI", "DAGL", "PRIV", "SKATT"}, field(defs, "RoleDefinitionCode"))
			for _, d := range defs {
				assert.NotEmpty(t, d["RoleType"])
				assert.NotEmpty(t, d["RoleName"])
				assert.Contains(t, d, "RoleDescription")
				assert.Equal(t, fmt.Sprintf("/api/serviceowner/roledefinitions/%v", d["RoleDefinitionId"]), requestURI(t, link(t, d, "self")))
			}
			items, pages := caller.walk(t, shared, "/api/serviceowner/roledefinitions?$top=3", "roledefinitions")
			assert.Equal(t, field(defs, "RoleDefinitionCode"), field(items, "RoleDefinitionCode"))
			assert.Equal(t, 4, pages)
			assert.Equal(t, []string{"DAGL"}, field(caller.list(t, shared, "/api/serviceowner/roledefinitions?$filter="+url.QueryEscape("RoleType eq 'External'"), "roledefinitions"), "RoleDefinitionCode"))

			r := caller.get(t, shared, "/api/serviceowner/roledefinitions/88/?language=2068")
			require.Equal(t, http.StatusOK, r.Code, r.Body.String())
			regna := r.json(t)
			assert.Equal(t, "REGNA", regna["RoleDefinitionCode"])
			assert.EqualValues(t, 88, regna["RoleDefinitionId"])
			assert.Len(t, regna["Rights"], 7, "4711/1 and 4711/2 Read, Write, ArchiveRead and 7001/1 Read")

			innsk := caller.get(t, shared, "/api/serviceowner/roledefinitions/90").json(t)
			assert.Equal(t, []any{}, innsk["Rights"], "INNSK grants only rights on NSF's services")

			for _, id := range []string{"999", "0", "abc"} {
				requireProblem(t, caller.get(t, shared, "/api/serviceowner/roledefinitions/"+id), http.StatusNotFound)
			}
			x := caller.get(t, shared, "/api/serviceowner/roledefinitions/85", "Accept", "application/hal+xml")
			require.Equal(t, http.StatusOK, x.Code)
			requireWellFormedXML(t, x.Body.Bytes())
		})
	}
	hadm := nsfToken(t).get(t, shared, "/api/serviceowner/roledefinitions/85").json(t)
	for _, x := range hadm["Rights"].([]any) {
		assert.Contains(t, []string{"5302", "7102"}, x.(map[string]any)["ServiceCode"])
	}
}

func TestServiceOwnerReportees(t *testing.T) {
	base := "/api/serviceowner/reportees?subject="
	for _, caller := range fjeCallers(t) {
		t.Run(caller.name, func(t *testing.T) {
			reps := caller.list(t, shared, base+ssnP1, "reportees")
			assert.Equal(t, sorted([]string{orgO1, orgO2, orgO3, ssnP1}), sorted(partyKeys(reps)))
			byKey := map[string]map[string]any{}
			for i, k := range partyKeys(reps) {
				byKey[k] = reps[i]
			}
			assert.Equal(t, map[string]any{"Name": "Fjellheim Maskin AS", "Type": "Enterprise", "OrganizationNumber": orgO1,
				"OrganizationForm": "AS", "Status": "Active"}, byKey[orgO1])
			assert.Equal(t, map[string]any{"Name": "Fjellheim Maskin AS avd. Gjøvik", "Type": "Business", "OrganizationNumber": orgO2,
				"ParentOrganizationNumber": orgO1, "OrganizationForm": "BEDR", "Status": "Active"}, byKey[orgO2])
			assert.Equal(t, map[string]any{"Name": "Ingrid Fjellheim", "Type": "Person", "SocialSecurityNumber": ssnP1}, byKey[ssnP1])

			cases := []struct {
				query string
				want  []string
			}{
				{ssnP1 + "&$filter=" + url.QueryEscape("Type ne 'Person' and Status eq 'Active'"), []string{orgO1, orgO2, orgO3}},
				{ssnP1 + "&$filter=" + url.QueryEscape("Type eq 'Business'"), []string{orgO2}},
				{ssnP5, []string{ssnP5, orgO4, orgO6}},
				{ssnP5 + "&$filter=" + url.QueryEscape("Type ne 'Person' and Status eq 'Active'"), []string{orgO4}},
				{ssnP2, []string{ssnP2}},
				{orgO3, nil}, // an organization holds no roles here and is no reportee of itself
				{ssnP1 + "&serviceCode=7001", []string{orgO1, orgO3, ssnP1}},
				{ssnP1 + "&serviceCode=4711&serviceEdition=1", []string{orgO1, orgO2, ssnP1}},
				{ssnP1 + "&roleDefinitionId=89", []string{orgO3}},
				{ssnP1 + "&roleDefinitionId=87&serviceCode=4711", []string{orgO2}},
				{ssnP1 + "&roleDefinitionId=89&serviceCode=4711", nil},
				{ssnP3 + "&serviceCode=4711", []string{orgO1, ssnP3}},
				{ssnP1 + "&showConsentReportees=true", []string{orgO1, orgO2, orgO3, ssnP1}},
				{ssnP1 + "&showConsentReportees=false&$orderby=Name%20desc&$top=2", []string{orgO3, ssnP1}},
			}
			for _, tc := range cases {
				got := caller.list(t, shared, base+tc.query, "reportees")
				assert.Equal(t, sorted(tc.want), nilIfEmpty(sorted(partyKeys(got))), tc.query)
			}
			refused := []struct {
				query   string
				status  int
				problem string
			}{
				{ssnP1 + "&serviceCode=5302", http.StatusForbidden, "service-not-owned"},
				{ssnP4 + "&roleDefinitionId=90", http.StatusForbidden, "role-not-relevant"},
				{ssnP1 + "&roleDefinitionId=12345", http.StatusBadRequest, "bad-request"},
				{ssnP1 + "&roleDefinitionId=x", http.StatusBadRequest, "bad-request"},
				{ssnP1 + "&showConsentReportees=maybe", http.StatusBadRequest, "bad-request"},
				{ssnP1 + "&$filter=" + url.QueryEscape("Kind eq 'x'"), http.StatusBadRequest, "invalid-query"},
				// Every parameter is read before the owner's service is checked.
				{ssnP1 + "&serviceCode=5302&$top=x", http.StatusBadRequest, "invalid-query"},
				{"", http.StatusBadRequest, "bad-request"},
				{"11111111111", http.StatusNotFound, "not-found"},
			}
			for _, tc := range refused {
				p := requireProblem(t, caller.get(t, shared, base+tc.query), tc.status)
				assert.Equal(t, "urn:postbox:problem:"+tc.problem, p["type"], tc.query)
			}

			items, pages := caller.walk(t, shared, base+ssnP1+"&$top=1", "reportees")
			assert.Equal(t, partyKeys(reps), partyKeys(items))
			assert.Equal(t, 4, pages)

			x := caller.get(t, shared, base+ssnP1, "Accept", "application/xml")
			require.Equal(t, http.StatusOK, x.Code)
			requireWellFormedXML(t, x.Body.Bytes())
		})
	}
	got := nsfToken(t).list(t, shared, base+ssnP4+"&roleDefinitionId=90", "reportees")
	assert.Equal(t, []string{orgO1}, partyKeys(got))
	got = nsfToken(t).list(t, shared, base+ssnP1+"&serviceCode=7102", "reportees")
	assert.Equal(t, sorted([]string{orgO1, orgO3, ssnP1}), sorted(partyKeys(got)))
}

// Every service-owner call is audited with the caller, the endpoint and whom it asked about; national
// identity numbers, e-mail addresses and phone numbers appear only as keyed hashes.
func TestServiceOwnerAuditLog(t *testing.T) {
	var buf syncBuffer
	srv := auditedServer(t, &buf)
	fje := fjeCertificate(t)
	calls := []string{
		"/api/serviceowner/authorization/roles?subject=" + ssnP1 + "&reportee=" + orgO1,
		"/api/serviceowner/authorization/rights?subject=" + ssnP1 + "&reportee=" + ssnP1,
		"/api/serviceowner/organizations?email=ingrid.fjellheim@epost.example&phoneNumber=" + url.QueryEscape("+4740000001"),
		"/api/serviceowner/organizations/" + ssnP3 + "/personalcontacts",
		"/api/serviceowner/reportees?subject=" + ssnP5,
	}
	for _, path := range calls {
		fje.get(t, srv, path)
	}
	soCaller{key: keyFJE, cert: "enterprise.pem", forceEI: true}.get(t, srv, "/api/serviceowner/reportees?subject="+ssnP1)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var audit []string
	for _, l := range lines {
		if strings.Contains(l, `"msg":"service-owner access"`) {
			audit = append(audit, l)
		}
	}
	require.Len(t, audit, len(calls)+1, buf.String())
	assert.Contains(t, audit[0], `"caller_org":"310900028"`)
	assert.Contains(t, audit[0], `"owner":"FJE"`)
	assert.Contains(t, audit[0], `"auth":"certificate"`)
	assert.Contains(t, audit[0], `"endpoint":"/api/serviceowner/authorization/roles"`)
	assert.Contains(t, audit[0], `"reportee":"`+orgO1+`"`, "organization numbers are logged as they are")
	assert.Contains(t, audit[0], `"status":200`)
	assert.Regexp(t, `"subject":"hmac:[0-9a-f]{16}"`, audit[0])
	assert.Regexp(t, `"email":"hmac:[0-9a-f]{16}"`, audit[2])
	assert.Regexp(t, `"phoneNumber":"hmac:[0-9a-f]{16}"`, audit[2])
	assert.Regexp(t, `"who":"hmac:[0-9a-f]{16}"`, audit[3])
	// The same number gives the same pseudonym, so one person's lookups can be found.
	pseudonym := func(line, attr string) string {
		i := strings.Index(line, `"`+attr+`":"`)
		require.GreaterOrEqual(t, i, 0, line)
		rest := line[i+len(attr)+4:]
		return rest[:strings.Index(rest, `"`)]
	}
	assert.Equal(t, pseudonym(audit[0], "subject"), pseudonym(audit[1], "subject"))
	assert.NotEqual(t, pseudonym(audit[0], "subject"), pseudonym(audit[4], "subject"))
	// A refused call is audited too, with who tried.
	assert.Contains(t, audit[5], `"status":403`)
	assert.Contains(t, audit[5], `"caller_org":"`+orgO3+`"`)

	for _, secret := range []string{ssnP1, ssnP3, ssnP5, "ingrid.fjellheim", "40000001"} {
		assert.NotContains(t, buf.String(), secret, "the log holds %s in clear", secret)
	}
}

// auditedServer is a server over a database of its own whose log, at debug level, goes to w.
func auditedServer(t *testing.T, w *syncBuffer) *api.Server {
	t.Helper()
	_, pool := newServer(t)
	tokens, err := testTokens()
	require.NoError(t, err)
	log := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: testBodyLimit, Logger: log, Tokens: tokens})
	require.NoError(t, err)
	return srv
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Big reportee lists: party ids are even from bigListFirstID, so tests can insert parties between them.
const bigListFirstID = 20_000_000

// bigReporteeList gives a new person (the subject, returned by national identity number) n reportees in
// pool's database, written with COPY: every third a person, the others organizations of which every
// fifth is a BEDR unit and every seventh deleted; the subject holds UTINN (87, rights on FJE's 4711) for
// each. It returns the reportees' keys (organization or national identity number) in id order.
func bigReporteeList(tb testing.TB, pool *pgxpool.Pool, n int) (subject string, subjectID int64, keys []string) {
	tb.Helper()
	ctx := context.Background()
	subject, subjectID = "60000000001", bigListFirstID-2
	parties := [][]any{{subjectID, "Person", subject, nil, "Stor Fullmektig", nil, nil, nil}}
	roles := make([][]any, 0, n)
	when := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := int64(bigListFirstID + 2*i)
		if i%3 == 0 {
			ssn := fmt.Sprintf("7%010d", i)
			parties = append(parties, []any{id, "Person", ssn, nil, fmt.Sprintf("Person %05d", i), nil, nil, nil})
			keys = append(keys, ssn)
		} else {
			org := fmt.Sprintf("4%08d", i)
			form, parent, status := "AS", any(nil), "Active"
			if i%5 == 0 {
				form, parent = "BEDR", "310123455"
			}
			if i%7 == 0 {
				status = "Deleted"
			}
			parties = append(parties, []any{id, "Organization", nil, org, fmt.Sprintf("Firma %05d AS", i), form, parent, status})
			keys = append(keys, org)
		}
		roles = append(roles, []any{subjectID, id, int32(87), "Generator", when})
	}
	_, err := pool.CopyFrom(ctx, pgx.Identifier{"parties"}, []string{"id", "kind", "ssn", "organization_number", "name",
		"organization_form", "parent_organization_number", "status"}, pgx.CopyFromRows(parties))
	require.NoError(tb, err)
	_, err = pool.CopyFrom(ctx, pgx.Identifier{"roles"}, []string{"holder_party_id", "reportee_id", "role_definition_id",
		"delegator", "delegated_time"}, pgx.CopyFromRows(roles))
	require.NoError(tb, err)
	_, err = pool.Exec(ctx, "ANALYZE parties; ANALYZE roles")
	require.NoError(tb, err)
	return subject, subjectID, keys
}

// addReportee gives the subject one more reportee with the party id id (odd ids fall between the
// generated ones); it reports false when the id is taken.
func addReportee(ctx context.Context, pool *pgxpool.Pool, subjectID, id int64) (bool, error) {
	tag, err := pool.Exec(ctx, `WITH p AS (INSERT INTO parties (id, kind, organization_number, name, organization_form, status)
			VALUES ($2, 'Organization', $3, 'Ny ' || $3, 'AS', 'Active') ON CONFLICT DO NOTHING RETURNING id)
		INSERT INTO roles (holder_party_id, reportee_id, role_definition_id, delegator, delegated_time)
		SELECT $1, id, 87, 'Samtidig', now() FROM p`, subjectID, id, fmt.Sprintf("5%08d", id%100_000_000))
	return tag.RowsAffected() == 1, err
}

// A walk with continuation over 20,000 reportees returns each exactly once while reportees are added
// all over the list; the same walk by $skip does not.
func TestServiceOwnerContinuationWalkUnderConcurrentInserts(t *testing.T) {
	const n = 20_000
	srv, pool := newServer(t)
	subject, subjectID, keys := bigReporteeList(t, pool, n)
	caller := fjeCertificate(t)
	ctx := context.Background()

	t.Run("continuation", func(t *testing.T) {
		var (
			added atomic.Int64
			stop  = make(chan struct{})
			done  = make(chan error, 1)
		)
		go func() {
			rng := rand.New(rand.NewPCG(7, 11))
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				// Anywhere in the list: before the walk's position, after it, and past its end.
				id := int64(bigListFirstID + 1 + 2*rng.IntN(n+500))
				ok, err := addReportee(ctx, pool, subjectID, id)
				if err != nil {
					done <- err
					return
				}
				if ok {
					added.Add(1)
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		items, pages := caller.walk(t, srv, "/api/serviceowner/reportees?subject="+subject+"&$top=50", "reportees")
		close(stop)
		require.NoError(t, <-done)
		t.Logf("walked %d pages, %d reportees, while %d were added", pages, len(items), added.Load())
		require.Positive(t, added.Load(), "nothing was added during the walk")

		seen := map[string]int{}
		for _, k := range partyKeys(items) {
			seen[k]++
		}
		for k, c := range seen {
			require.Equal(t, 1, c, "%s was returned %d times", k, c)
		}
		for _, k := range keys {
			require.Equal(t, 1, seen[k], "%s was not returned", k)
		}
		assert.Equal(t, 1, seen[subject], "the subject itself")
		assert.GreaterOrEqual(t, len(items), n+1)
	})

	t.Run("filtered", func(t *testing.T) {
		filter := url.QueryEscape("Type ne 'Person' and Status eq 'Active'")
		items, _ := caller.walk(t, srv, "/api/serviceowner/reportees?subject="+subject+"&$top=50&$filter="+filter, "reportees")
		want := 0
		for i := range n {
			if i%3 != 0 && i%7 != 0 {
				want++
			}
		}
		got := 0
		for _, it := range items {
			require.NotEqual(t, "Person", it["Type"])
			require.Equal(t, "Active", it["Status"])
			if strings.HasPrefix(it["OrganizationNumber"].(string), "4") {
				got++
			}
		}
		assert.Equal(t, want, got)
	})

	t.Run("skip shifts, continuation does not", func(t *testing.T) {
		first := caller.get(t, srv, "/api/serviceowner/reportees?subject="+subject+"&$top=50")
		require.Equal(t, http.StatusOK, first.Code)
		page1 := partyKeys(first.embedded(t, "reportees"))
		next := requestURI(t, link(t, first.json(t), "next"))
		// A reportee appears before the end of the first page.
		_, err := addReportee(ctx, pool, subjectID, bigListFirstID-1)
		require.NoError(t, err)
		bySkip := partyKeys(caller.list(t, srv, "/api/serviceowner/reportees?subject="+subject+"&$top=50&$skip=50", "reportees"))
		byToken := partyKeys(caller.list(t, srv, next, "reportees"))
		assert.Equal(t, page1[len(page1)-1], bySkip[0], "$skip returns the last of the first page again")
		for _, k := range byToken {
			assert.NotContains(t, page1, k, "continuation goes on after the last row it saw")
		}
	})
}

// A local role a reportee made is shown to the owners on whose services it grants a right, and only to them.
func TestServiceOwnerLocalRoles(t *testing.T) {
	srv, pool := newServer(t)
	ctx := context.Background()
	var localID int
	require.NoError(t, pool.QueryRow(ctx, `WITH d AS (
			INSERT INTO role_definitions (role_type, role_name, role_description, owner_party_id)
			SELECT 'Local', 'Lokal innsyn 4711', 'Lokal rolle', id FROM parties WHERE organization_number = $1 RETURNING id),
		r AS (INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
			SELECT id, '4711', 1, 'Read', false FROM d)
		INSERT INTO roles (holder_party_id, reportee_id, role_definition_id, delegator, delegated_time)
		SELECT (SELECT id FROM parties WHERE ssn = $2), (SELECT id FROM parties WHERE organization_number = $1), id, 'Ingrid Fjellheim', now() FROM d
		RETURNING role_definition_id`, orgO1, ssnP2).Scan(&localID))

	fje, nsf := fjeToken(t), nsfToken(t)
	roles := fje.list(t, srv, "/api/serviceowner/authorization/roles?subject="+ssnP2+"&reportee="+orgO1, "roles")
	require.Len(t, roles, 1)
	assert.Equal(t, "Local", roles[0]["RoleType"])
	def := fje.get(t, srv, requestURI(t, link(t, roles[0], "roledefinition")))
	require.Equal(t, http.StatusOK, def.Code, def.Body.String())
	assert.Len(t, def.json(t)["Rights"], 1)
	assert.Equal(t, []string{orgO1}, partyKeys(fje.list(t, srv, fmt.Sprintf("/api/serviceowner/reportees?subject=%s&roleDefinitionId=%d", ssnP2, localID), "reportees")))
	assert.NotContains(t, field(fje.list(t, srv, "/api/serviceowner/roledefinitions", "roledefinitions"), "RoleType"), "Local",
		"the list holds the platform's role definitions")

	assert.Empty(t, nsf.list(t, srv, "/api/serviceowner/authorization/roles?subject="+ssnP2+"&reportee="+orgO1, "roles"))
	requireProblem(t, nsf.get(t, srv, fmt.Sprintf("/api/serviceowner/roledefinitions/%d", localID)), http.StatusNotFound)
}
