package webhook

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test vector of the Standard Webhooks specification (and its reference libraries): a signature that
// reproduces it is one a receiver's library accepts; a round trip through our own Verify would not show it.
func TestSignReproducesTheStandardWebhooksTestVector(t *testing.T) {
	sig, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	require.NoError(t, err)
	assert.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)
}

func TestVerify(t *testing.T) {
	secret, body, now := NewSecret(), []byte(`{"specversion":"1.0"}`), time.Now()
	require.True(t, strings.HasPrefix(secret, "whsec_"))
	signed := func() http.Header {
		h := http.Header{}
		require.NoError(t, SignHeaders(h, []string{secret}, "e1", now, body))
		return h
	}
	require.NoError(t, Verify(secret, signed(), body, now.Add(time.Minute)))

	// A receiver that rotates keys sends several; one match is enough.
	h := signed()
	h.Set(HeaderSignature, "v1,bm9wZQ== "+h.Get(HeaderSignature))
	require.NoError(t, Verify(secret, h, body, now))

	assert.Error(t, Verify(secret, signed(), []byte(`{"specversion":"1.1"}`), now), "another body")
	assert.Error(t, Verify(NewSecret(), signed(), body, now), "another secret")
	assert.Error(t, Verify(secret, signed(), body, now.Add(10*time.Minute)), "too old")
	h = signed()
	h.Set(HeaderID, "e2")
	assert.Error(t, Verify(secret, h, body, now), "another id")
	h = signed()
	h.Del(HeaderTimestamp)
	assert.Error(t, Verify(secret, h, body, now), "no timestamp")
	_, err := Sign("whsec_not base64!", "e1", 1, body)
	assert.Error(t, err)
}
