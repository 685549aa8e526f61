package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/store/storetest"
)

// certServers are a server that believes the proxy's Client-Cert header and one that does not, over one
// database.
func certServers(t *testing.T) (trusting, ignoring *api.Server) {
	t.Helper()
	pool := storetest.New(t)
	caPEM, err := os.ReadFile(filepath.Join(demoDir, "certs", "ca.pem"))
	require.NoError(t, err)
	cas := x509.NewCertPool()
	require.True(t, cas.AppendCertsFromPEM(caPEM))
	trusting, err = api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), Logger: quiet, TrustClientCertHeader: true, ClientCAs: cas})
	require.NoError(t, err)
	ignoring, err = api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), Logger: quiet, ClientCAs: cas})
	require.NoError(t, err)
	return trusting, ignoring
}

// clientCertHeader is the RFC 9440 form of a certificate: its DER in base64 between colons.
func clientCertHeader(c *x509.Certificate) string {
	return ":" + base64.StdEncoding.EncodeToString(c.Raw) + ":"
}

func selfSignedClientCert(t *testing.T) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7),
		Subject:      pkix.Name{CommonName: "Nordkyst Sjømat ASA", SerialNumber: orgO3},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c
}

// Behind a TLS-terminating proxy, the certificate in Client-Cert counts exactly like one of the handshake.
func TestForwardedClientCertificate(t *testing.T) {
	trusting, ignoring := certServers(t)
	enterprise := loadCert(t, "enterprise.pem")
	hdr := func(extra ...string) map[string]string {
		h := map[string]string{"ApiKey": keyAll, "Client-Cert": clientCertHeader(enterprise)}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}

	// The organization of the certificate, as over TLS (TestEnterpriseCertificate).
	r := do(t, trusting, request{path: "/api/reportees", header: hdr()})
	assert.Equal(t, []string{orgO3}, reporteeNumbers(t, r))

	// The enterprise user logs in with the forwarded certificate, and its session is bound to it.
	r = do(t, trusting, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword?ForceEIAuthentication",
		header: hdr("Content-Type", "application/json"), body: `{"UserName":"NORDKYST_INTEGRASJON","UserPassword":"Demo-EU-Nordkyst!"}`})
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	session := r.Result().Cookies()[0].Value
	r = do(t, trusting, request{path: "/api/reportees", header: hdr("Cookie", ".ASPXAUTH="+session)})
	assert.Equal(t, []string{orgO3, orgO5}, reporteeNumbers(t, r))
	requireProblem(t, get(t, trusting, "/api/reportees", "ApiKey", keyAll, "Cookie", ".ASPXAUTH="+session), http.StatusForbidden)

	// Without POSTBOX_TRUST_CLIENT_CERT_HEADER the header is nobody's word.
	requireProblem(t, do(t, ignoring, request{path: "/api/reportees", header: hdr()}), http.StatusUnauthorized)

	// A request over TLS has its own handshake: a header on it is not believed.
	r = doWith(t, trusting, request{path: "/api/reportees", header: hdr()},
		func(r *http.Request) { r.TLS = &tls.ConnectionState{} })
	requireProblem(t, r, http.StatusUnauthorized)
}

// A forwarded certificate that does not parse or verify is refused with 401, on any route.
func TestForwardedClientCertificateRefused(t *testing.T) {
	trusting, ignoring := certServers(t)
	server := loadCert(t, "server.pem")
	enterprise := clientCertHeader(loadCert(t, "enterprise.pem"))
	for name, h := range map[string]map[string]string{
		"not a byte sequence":         {"Client-Cert": base64.StdEncoding.EncodeToString(loadCert(t, "enterprise.pem").Raw)},
		"not base64":                  {"Client-Cert": ":not base64!:"},
		"empty":                       {"Client-Cert": "::"},
		"not a certificate":           {"Client-Cert": ":" + base64.StdEncoding.EncodeToString([]byte("garbage")) + ":"},
		"not for client auth":         {"Client-Cert": clientCertHeader(server)},
		"not issued by the CA":        {"Client-Cert": clientCertHeader(selfSignedClientCert(t))},
		"a chain that does not parse": {"Client-Cert": enterprise, "Client-Cert-Chain": ":AAAA:, nonsense"},
	} {
		t.Run(name, func(t *testing.T) {
			h["ApiKey"] = keyAll
			p := requireProblem(t, do(t, trusting, request{path: "/api/reportees", header: h}), http.StatusUnauthorized)
			assert.Contains(t, p["detail"], "client certificate")
			requireProblem(t, do(t, trusting, request{path: "/api/metadata", header: h}), http.StatusUnauthorized)
			assert.Equal(t, http.StatusOK, do(t, ignoring, request{path: "/api/metadata", header: h}).Code, "ignored when not trusted")
		})
	}
}

func TestTrustingTheHeaderNeedsTheCA(t *testing.T) {
	_, err := api.New(api.Options{Pool: storetest.New(t), Logger: quiet, TrustClientCertHeader: true})
	assert.Error(t, err)
}
