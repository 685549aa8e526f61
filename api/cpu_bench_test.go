package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// processCPU is the CPU time (user and system) this process has used so far.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkReadCPU measures the API's own CPU per request, one request at a time through the real router
// (no HTTP transport) with rights cached as `postbox api` keeps them, for a party's list with a $filter
// read by a person acting through roles, and for one message, each beside the statement it runs called
// bare: the test process's CPU per call ("cpu-µs/op"; PostgreSQL's is another process's) and the ratio of
// the endpoint's to the statement's. The database's and the other processes' load hardly moves it, as it
// moves rates and latencies.
func BenchmarkReadCPU(b *testing.B) {
	pool := storetest.New(b)
	rights := identity.NewRights(store.New(pool), quiet)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rights.Listen(ctx, pool.Config().ConnConfig)
	require.Eventually(b, rights.Listening, 10*time.Second, 10*time.Millisecond)
	tokens, err := testTokens()
	require.NoError(b, err)
	srv, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: testBodyLimit, Logger: quiet, Tokens: tokens, PublicURL: testPublicURL, Rights: rights})
	require.NoError(b, err)
	token := personTokenTB(b, ssnP3)
	q := store.New(pool)
	party, err := identity.NewStore(q).FindParty(ctx, orgO1)
	require.NoError(b, err)
	org := party.ID
	person, err := identity.NewStore(q).FindParty(ctx, ssnP3)
	require.NoError(b, err)
	set, err := rights.For(ctx, identity.Principal{Method: identity.MethodPersonToken, PersonID: person.ID}, org)
	require.NoError(b, err)
	vis := set.Visibility()
	const filter = "Status ne 'Arkivert' and CreatedDate gt DateTime'2020-01-01T00:00:00'"
	f, err := odata.ParseFilter(filter)
	require.NoError(b, err)
	var message string
	require.NoError(b, pool.QueryRow(ctx, `SELECT id FROM messages WHERE reportee_id = $1 AND type = 'FormTask'
		AND service_code = '4711' ORDER BY id LIMIT 1`, org).Scan(&message))

	for _, tc := range []struct {
		name, path string
		bare       func() error
	}{
		{"one party, $filter", "/api/" + orgO1 + "/messages?$filter=" + url.QueryEscape(filter), func() error {
			_, _, err := mailbox.NewLists(q).Messages(ctx, org, vis, store.ListQuery{Filter: f, Page: store.Page{Limit: 50}}, mailbox.Search{})
			return err
		}},
		{"one message", "/api/" + orgO1 + "/messages/" + message, func() error {
			_, err := q.GetMessage(ctx, org, message)
			return err
		}},
	} {
		var bareCPU float64
		b.Run(tc.name+"/bare", func(b *testing.B) {
			b.ReportAllocs()
			start := processCPU(b)
			for b.Loop() {
				if err := tc.bare(); err != nil {
					b.Fatal(err)
				}
			}
			bareCPU = float64((processCPU(b) - start).Microseconds()) / float64(b.N)
			b.ReportMetric(bareCPU, "cpu-µs/op")
		})
		b.Run(tc.name+"/endpoint", func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest(http.MethodGet, testPublicURL+tc.path, nil)
			req.Header.Set("ApiKey", keyAll)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept", "application/hal+json")
			start := processCPU(b)
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
			cpu := float64((processCPU(b) - start).Microseconds()) / float64(b.N)
			b.ReportMetric(cpu, "cpu-µs/op")
			if bareCPU > 0 {
				b.ReportMetric(cpu/bareCPU, "cpu-ratio-to-bare")
			}
		})
	}
}
