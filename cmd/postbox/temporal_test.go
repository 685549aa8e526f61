package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/store/storetest"
)

// securedFrontend is a TLS front of a Temporal dev server, as a secured cluster or Temporal Cloud is: it
// requires a client certificate of the demo CA (mTLS) and the API key as a bearer token, and passes the
// gRPC calls on to the dev server in plain HTTP/2. The dev server of the pinned CLI serves no TLS itself.
type securedFrontend struct {
	addr     string
	apiKey   string
	accepted atomic.Int64 // calls that had the key and reached the dev server
}

func startSecuredFrontend(t *testing.T, devAddr, apiKey string) *securedFrontend {
	t.Helper()
	certs := filepath.Join(filepath.Dir(storetest.DemoDataset()), "certs")
	serverCert, err := tls.LoadX509KeyPair(filepath.Join(certs, "server.pem"), filepath.Join(certs, "server-key.pem"))
	require.NoError(t, err)
	caPEM, err := os.ReadFile(filepath.Join(certs, "ca.pem"))
	require.NoError(t, err)
	clientCAs := x509.NewCertPool()
	require.True(t, clientCAs.AppendCertsFromPEM(caPEM))

	f := &securedFrontend{apiKey: apiKey}
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: devAddr}) },
		Transport: &http.Transport{Protocols: &h2c},
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+f.apiKey {
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Grpc-Status", "16") // UNAUTHENTICATED
			w.Header().Set("Grpc-Message", "no valid API key")
			return
		}
		f.accepted.Add(1)
		proxy.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: handler, ErrorLog: log.New(io.Discard, "", 0), TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: clientCAs, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12,
	}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	f.addr = ln.Addr().String()
	return f
}

// The client options reach a secured frontend with TLS (the configured CA), a client certificate and
// an API key, and each missing piece is refused there.
func TestTemporalOverMutualTLSWithAPIKey(t *testing.T) {
	dev, err := temporaltest.StartDevServer(context.Background(), storetest.UnusedAddr(t), "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Stop() })
	front := startSecuredFrontend(t, dev.FrontendHostPort(), "test-api-key")

	certs := filepath.Join(filepath.Dir(storetest.DemoDataset()), "certs")
	secured := config.Config{TemporalAddress: front.addr, TemporalNamespace: "default",
		TemporalTLS: config.TemporalTLS{Enabled: true, CA: filepath.Join(certs, "ca.pem"),
			Cert: filepath.Join(certs, "enterprise.pem"), Key: filepath.Join(certs, "enterprise-key.pem")},
		TemporalAPIKey: "test-api-key"}
	check := func(cfg config.Config) error {
		opts, err := temporalOptions(cfg)
		require.NoError(t, err)
		opts.Logger = temporaltest.QuietLogger()
		c, err := client.NewLazyClient(opts)
		require.NoError(t, err)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		if err == nil {
			_, err = c.WorkflowService().GetSystemInfo(ctx, nil)
		}
		return err
	}

	require.NoError(t, check(secured))
	assert.Positive(t, front.accepted.Load(), "the calls went through the secured frontend")

	cases := map[string]func(c *config.Config){
		"plain text":            func(c *config.Config) { c.TemporalTLS, c.TemporalAPIKey = config.TemporalTLS{}, "" },
		"no client certificate": func(c *config.Config) { c.TemporalTLS.Cert, c.TemporalTLS.Key = "", "" },
		"the system's roots":    func(c *config.Config) { c.TemporalTLS.CA = "" },
		"no API key":            func(c *config.Config) { c.TemporalAPIKey = "" },
		"a wrong API key":       func(c *config.Config) { c.TemporalAPIKey = "guessed" },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := secured
			change(&cfg)
			before := front.accepted.Load()
			assert.Error(t, check(cfg))
			assert.Equal(t, before, front.accepted.Load(), "nothing reached the dev server")
		})
	}
}

func TestTemporalOptionsRefuseUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	for name, tt := range map[string]config.TemporalTLS{
		"POSTBOX_TEMPORAL_TLS_CA":   {Enabled: true, CA: filepath.Join(dir, "missing.pem")},
		"no PEM certificate":        {Enabled: true, CA: notPEM},
		"POSTBOX_TEMPORAL_TLS_CERT": {Enabled: true, Cert: notPEM, Key: notPEM},
	} {
		_, err := temporalOptions(config.Config{TemporalTLS: tt})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}
