package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/postbox/postbox/internal/telemetry"
)

// The admin listener serves Go's profiles only when asked to (POSTBOX_ADMIN_PPROF).
func TestAdminHandlerServesProfilesOnlyWhenAsked(t *testing.T) {
	for _, pprof := range []bool{false, true} {
		rec := httptest.NewRecorder()
		telemetry.AdminHandler(pprof).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
		if pprof {
			assert.Equal(t, http.StatusOK, rec.Code)
			assert.Contains(t, rec.Body.String(), "profile")
		} else {
			assert.Equal(t, http.StatusNotFound, rec.Code)
		}
		rec = httptest.NewRecorder()
		telemetry.AdminHandler(pprof).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		assert.Equal(t, http.StatusOK, rec.Code)
	}
}
