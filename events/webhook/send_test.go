package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckEndpointRefusesWhatIsNotPublic(t *testing.T) {
	ctx := context.Background()
	strict, local := Guard{}, Guard{AllowPrivate: true}
	for _, raw := range []string{
		"https://127.0.0.1/hook", "https://[::1]/hook", "https://10.1.2.3/", "https://172.20.0.1/", "https://192.168.1.1/",
		"https://169.254.1.1/", "https://100.64.0.1/", "https://0.0.0.0/", "https://[::]/", "https://224.0.0.1/",
		"https://[fe80::1]/", "https://[fd12::1]/", "https://[::ffff:127.0.0.1]/", "https://[64:ff9b::a00:1]/",
		"https://localhost:8443/hook",
	} {
		_, err := strict.CheckEndpoint(ctx, raw)
		var e *EndpointError
		assert.ErrorAs(t, err, &e, raw)
	}
	for _, raw := range []string{"http://93.184.215.14/", "ftp://93.184.215.14/", "https://u:p@93.184.215.14/", "https://93.184.215.14/#x", "/hook", "https://"} {
		_, err := strict.CheckEndpoint(ctx, raw)
		assert.Error(t, err, raw)
	}
	got, err := strict.CheckEndpoint(ctx, "https://93.184.215.14/hook?x=1")
	require.NoError(t, err)
	assert.Equal(t, "https://93.184.215.14/hook?x=1", got)

	// Allowed private addresses allow http too; metadata addresses stay refused.
	for _, raw := range []string{"http://127.0.0.1:9/hook", "https://10.1.2.3/", "http://localhost/"} {
		_, err := local.CheckEndpoint(ctx, raw)
		assert.NoError(t, err, raw)
	}
	for _, raw := range []string{"http://169.254.169.254/latest/meta-data", "https://[fd00:ec2::254]/"} {
		_, err := local.CheckEndpoint(ctx, raw)
		assert.ErrorContains(t, err, "metadata", raw)
	}
}

func TestCheckAddrSeesThroughEmbeddings(t *testing.T) {
	for _, a := range []string{"::ffff:10.0.0.1", "64:ff9b::7f00:1", "::ffff:169.254.169.254"} {
		assert.Error(t, checkAddr(netip.MustParseAddr(a), false), a)
	}
	assert.NoError(t, checkAddr(netip.MustParseAddr("2606:4700::1111"), false))
}

// The address is checked again when connecting: a name that passed at subscription and now resolves to a
// loopback address (DNS rebinding) is refused before a byte is sent.
func TestSenderRefusesAPrivateAddressAtConnect(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	endpoint := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	s := NewSender(Guard{}, time.Second, "postbox.test")
	err := s.Deliver(context.Background(), endpoint, []string{NewSecret()}, "e1", []byte(`{}`))
	var f *Failure
	require.ErrorAs(t, err, &f)
	assert.Contains(t, f.Reason, "loopback")
	err = s.Handshake(context.Background(), endpoint)
	assert.ErrorContains(t, err, "loopback")
	assert.Zero(t, hits.Load())
}

func TestSenderHandshakeDeliveryAndFailures(t *testing.T) {
	secret := NewSecret()
	var out bytes.Buffer
	echo := &Echo{Secret: func() string { return secret }, Out: &out}
	srv := httptest.NewServer(echo)
	defer srv.Close()
	s := NewSender(Guard{AllowPrivate: true}, time.Second, "postbox.test")
	ctx := context.Background()

	require.NoError(t, s.Handshake(ctx, srv.URL))
	require.NoError(t, s.Deliver(ctx, srv.URL, []string{secret}, "e1", []byte(`{"type":"t.v1","subject":"/party/r1"}`)))
	assert.Contains(t, out.String(), "delivery e1 (t.v1, /party/r1): signature valid")
	// The echo refuses a delivery signed with another secret, and the failure says how it answered.
	err := s.Deliver(ctx, srv.URL, []string{NewSecret()}, "e2", []byte(`{}`))
	assert.ErrorContains(t, err, "401 Unauthorized: no webhook-signature matches")

	// An endpoint that does not answer the handshake as the specification says stays unvalidated.
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	assert.ErrorContains(t, s.Handshake(ctx, plain.URL), "without WebHook-Allowed-Origin")

	// A slow endpoint is cut at the timeout; a large answer is not read past its limit.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	quick := NewSender(Guard{AllowPrivate: true}, 100*time.Millisecond, "postbox.test")
	assert.ErrorContains(t, quick.Deliver(ctx, slow.URL, []string{secret}, "e3", []byte(`{}`)), "did not answer in time")
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(bytes.Repeat([]byte("x"), 1<<20))
	}))
	defer big.Close()
	err = s.Deliver(ctx, big.URL, []string{secret}, "e4", []byte(`{}`))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 300)
	assert.Contains(t, err.Error(), "500 Internal Server Error")
}
