package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/loadtest"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

const benchClients = 32

// loadRun runs do from benchClients goroutines until b.N calls are done and reports throughput and
// latency percentiles.
func loadRun(b *testing.B, do func() error) (perSecond float64) {
	b.Helper()
	b.ResetTimer()
	r, err := loadtest.Run(benchClients, b.N, 0, do)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.Rate, "req/s")
	b.ReportMetric(float64(r.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms")
	return r.Rate
}

// BenchmarkMailboxList times GET /api/{who}/messages?$top=50 with a filter on a mailbox of 100,000
// messages over 50 services, through the real router and PostgreSQL, with 32 concurrent clients, against
// the bare pgx query the endpoint runs under the same load; it reports the throughput ratio.
func BenchmarkMailboxList(b *testing.B) {
	pool, org := storetest.LargeMailbox(b, storetest.LargeMailboxMessages)
	srv, err := newAPI(pool)
	if err != nil {
		b.Fatal(err)
	}
	m, err := identity.LoadMinter(demoDir+"/certs/issuer-key.pem", "demo-1", testIssuer, testAudience)
	if err != nil {
		b.Fatal(err)
	}
	token, err := m.Mint(identity.TokenRequest{Org: storetest.LargeMailboxOrg, Scope: "platform:enduser"})
	if err != nil {
		b.Fatal(err)
	}
	// The organization reads its own mailbox; it needs an API key, which the empty database lacks.
	if _, err := pool.Exec(context.Background(), `INSERT INTO api_keys (key_hash, name, areas) VALUES (sha256($1), 'bench', '{mailbox}')`, []byte(keyMailbox)); err != nil {
		b.Fatal(err)
	}
	const filter = "ServiceOwner eq 'Etat 3' and CreatedDate gt DateTime'2024-07-01T00:00:00'"
	target := "http://postbox.test/api/" + storetest.LargeMailboxOrg + "/messages?$top=50&$filter=" + url.QueryEscape(filter)

	f, err := odata.ParseFilter(filter)
	if err != nil {
		b.Fatal(err)
	}
	sql, args, err := mailbox.ListMessagesSQL(org, store.Visibility{All: true}, store.ListQuery{Filter: f, Page: store.Page{Limit: 50}}, mailbox.Search{})
	if err != nil {
		b.Fatal(err)
	}
	var queryRate float64
	b.Run("pgx-query", func(b *testing.B) {
		queryRate = loadRun(b, func() error {
			rows, err := pool.Query(context.Background(), sql, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				if _, err := rows.Values(); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	})
	endpoint := func(srv *api.Server) func() error {
		return func() error {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			req.Header.Set("ApiKey", keyMailbox)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				return &httpError{rec.Code, rec.Body.String()}
			}
			return nil
		}
	}
	var endpointRate float64
	b.Run("endpoint", func(b *testing.B) {
		endpointRate = loadRun(b, endpoint(srv))
		if queryRate > 0 {
			b.ReportMetric(endpointRate/queryRate, "ratio-to-query")
		}
	})
	// The same with the rate limiter on (a limit no run reaches): its cost is the ratio to the endpoint.
	tokens, err := testTokens()
	if err != nil {
		b.Fatal(err)
	}
	limited, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: testBodyLimit, Logger: quiet, Tokens: tokens,
		RateLimit: api.RateLimit{Limit: 1 << 30, Window: time.Minute}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("endpoint-rate-limited", func(b *testing.B) {
		rate := loadRun(b, endpoint(limited))
		if endpointRate > 0 {
			b.ReportMetric(rate/endpointRate, "ratio-to-endpoint")
		}
	})
	// Both at once, every other request through the limiter: the same load on both halves, so the ratio of
	// their mean latencies is the limiter's cost whatever else the machine does meanwhile.
	b.Run("interleaved", func(b *testing.B) {
		var sent, plain, limitedTime atomic.Int64
		plainReq, limitedReq := endpoint(srv), endpoint(limited)
		loadRun(b, func() error {
			do, total := plainReq, &plain
			if sent.Add(1)%2 == 0 {
				do, total = limitedReq, &limitedTime
			}
			start := time.Now()
			err := do()
			total.Add(int64(time.Since(start)))
			return err
		})
		b.ReportMetric(float64(limitedTime.Load())/float64(plain.Load()), "latency-limited-to-plain")
	})
}

type httpError struct {
	code int
	body string
}

func (e *httpError) Error() string { return http.StatusText(e.code) + ": " + e.body }
