package password

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHashVerify(t *testing.T) {
	h, err := Hash("Demo-1-Fjellheim!")
	require.NoError(t, err)
	assert.Contains(t, h, "$argon2id$")
	assert.NotContains(t, h, "Demo-1")

	ok, err := Verify(h, "Demo-1-Fjellheim!")
	require.NoError(t, err)
	assert.True(t, ok)

	ok, err = Verify(h, "demo-1-fjellheim!")
	require.NoError(t, err)
	assert.False(t, ok)

	h2, err := Hash("Demo-1-Fjellheim!")
	require.NoError(t, err)
	assert.NotEqual(t, h, h2, "each hash has its own salt")

	_, err = Verify("plaintext", "x")
	assert.Error(t, err)
}
