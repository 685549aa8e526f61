package api

import (
	"testing"

	"github.com/postbox/postbox/api/render/rendertest"
)

// A message resource writes itself as encoding/json writes it, every field set or none.
func TestMessageResourceAppendsAsEncodingJSON(t *testing.T) {
	for _, m := range []messageResource{{}, rendertest.Filled[messageResource]()} {
		rendertest.SameAsEncodingJSON(t, &m)
	}
}
