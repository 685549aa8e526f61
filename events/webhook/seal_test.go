package webhook

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/config"
)

func TestSealOpensWhatItSealedAndNothingElse(t *testing.T) {
	k1 := config.SealKey{ID: "k1", Key: bytes.Repeat([]byte{1}, 32)}
	k2 := config.SealKey{ID: "k2", Key: bytes.Repeat([]byte{2}, 32)}
	old, err := NewSealer([]config.SealKey{k1})
	require.NoError(t, err)
	rotated, err := NewSealer([]config.SealKey{k2, k1})
	require.NoError(t, err)

	secret := NewSecret()
	a, err := old.Seal(secret)
	require.NoError(t, err)
	b, err := old.Seal(secret)
	require.NoError(t, err)
	assert.NotEqual(t, a, b, "a fresh data key and nonce every time")
	assert.NotContains(t, a, strings.TrimPrefix(secret, secretPrefix))
	assert.True(t, strings.HasPrefix(a, "sealed:v1:k1:"))

	// The newest key seals; the older still opens.
	for _, s := range []*Sealer{old, rotated} {
		got, err := s.Open(a)
		require.NoError(t, err)
		assert.Equal(t, secret, got)
	}
	c, err := rotated.Seal(secret)
	require.NoError(t, err)
	assert.True(t, rotated.Current(c))
	assert.False(t, rotated.Current(a))
	_, err = old.Open(c)
	assert.ErrorContains(t, err, `key "k2"`)

	// Altered, truncated or plain: refused, and the error tells nothing of the secret.
	parts := strings.Split(a, ":")
	flip := []byte(parts[4])
	flip[5] ^= 1
	for _, bad := range []string{strings.Join(append(parts[:4:4], string(flip)), ":"), a[:len(a)-4], secret, "sealed:v1:k1:x:y"} {
		_, err := rotated.Open(bad)
		require.Error(t, err, bad)
		assert.NotContains(t, err.Error(), secret)
	}
	_, err = NewSealer(nil)
	assert.Error(t, err)
}
