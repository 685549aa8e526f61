package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/internal/telemetry"
)

// A client that invents methods gets its 405 and no series of its own: the method label holds only the
// methods HTTP defines, and _OTHER.
func TestInventedMethodsShareOneSeries(t *testing.T) {
	srv, _ := newServer(t)
	for i := range 20 {
		r := do(t, srv, request{method: fmt.Sprintf("INVENTED%d", i), path: "/api/metadata"})
		requireProblem(t, r, http.StatusMethodNotAllowed)
	}
	require.Equal(t, http.StatusOK, get(t, srv, "/api/metadata").Code)

	families, err := telemetry.Registry.Gather()
	require.NoError(t, err)
	methods := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "postbox_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					methods[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	for method := range methods {
		assert.Contains(t, []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "_OTHER"}, method)
	}
	assert.GreaterOrEqual(t, methods["_OTHER"], 20.0)
	assert.GreaterOrEqual(t, methods["GET"], 1.0)
}
