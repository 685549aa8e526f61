package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/api/render/rendertest"
)

// A message resource writes itself as encoding/json writes it, every field set or none; passed by value
// (as the single view answers it) it still writes itself, to the same bytes.
func TestMessageResourceAppendsAsEncodingJSON(t *testing.T) {
	for _, m := range []messageResource{{}, rendertest.Filled[messageResource]()} {
		rendertest.SameAsEncodingJSON(t, &m)
		byValue, err := render.AppendJSON(nil, m)
		require.NoError(t, err)
		byPointer, err := render.AppendJSON(nil, &m)
		require.NoError(t, err)
		assert.Equal(t, string(byPointer), string(byValue))
	}
}
