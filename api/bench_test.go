package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// BenchmarkFormTaskMetadata times GET /api/metadata/formtask/{code}/{edition} through the real router
// and database, against the bare pgx query the endpoint wraps; the ratio is reported as
// endpoint-vs-query (1.0 would mean the HTTP layer costs nothing).
func BenchmarkFormTaskMetadata(b *testing.B) {
	pool := storetest.New(b)
	srv, err := newAPI(pool)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var queryNs float64
	b.Run("pgx-query", func(b *testing.B) {
		q := store.New(pool)
		for b.Loop() {
			if _, err := q.GetService(ctx, "6120", 1); err != nil {
				b.Fatal(err)
			}
		}
		queryNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	for _, accept := range []string{"application/hal+json", "application/hal+xml"} {
		b.Run("endpoint-"+accept[len("application/"):], func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "http://postbox.test/api/metadata/formtask/6120/1", nil)
			req.Header.Set("Accept", accept)
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if queryNs > 0 {
				b.ReportMetric(queryNs/ns, "throughput-ratio-to-query")
			}
		})
	}
}
