package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/store/storetest"
)

// Real TLS handshakes against the listener `postbox api` serves enterprise certificates on.
func TestEnterpriseCertificatesOverTLS(t *testing.T) {
	certs := filepath.Join(filepath.Dir(storetest.DemoDataset()), "certs")
	cfg := config.Config{
		TLSCert: filepath.Join(certs, "server.pem"), TLSKey: filepath.Join(certs, "server-key.pem"),
		TLSClientCA: filepath.Join(certs, "ca.pem"),
	}
	tlsCfg, err := enterpriseTLS(cfg)
	require.NoError(t, err)
	srv, err := api.New(api.Options{Pool: storetest.New(t), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(srv)
	ts.TLS = tlsCfg
	ts.StartTLS()
	defer ts.Close()

	caPEM, err := os.ReadFile(filepath.Join(certs, "ca.pem"))
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
	}
	get := func(c *http.Client) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/reportees", nil)
		req.Header.Set("ApiKey", "9D4E2680-50AB-47FB-A1E6-6AB8106A0FB6")
		return c.Do(req)
	}

	enterprise, err := tls.LoadX509KeyPair(filepath.Join(certs, "enterprise.pem"), filepath.Join(certs, "enterprise-key.pem"))
	require.NoError(t, err)
	resp, err := get(client(enterprise))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	resp, err = get(client())
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no certificate, no login")

	// Go's client only offers certificates the server's CA list accepts; force the impostor's on it.
	impostor := selfSigned(t)
	forced := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &impostor, nil }}}}
	_, err = get(forced)
	assert.Error(t, err, "a certificate from another CA fails the handshake")
}

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Impostor AS", SerialNumber: "310246808"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
