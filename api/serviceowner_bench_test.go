package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/serviceowner"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// BenchmarkServiceOwnerReportees times one page (50) of GET /api/serviceowner/reportees for a subject with
// 20,000 reportees, through the real router and PostgreSQL with FJE's organization token, against the bare
// pgx query the endpoint runs; the ratio is reported as throughput-ratio-to-query (1.0 would mean the HTTP
// layer costs nothing). Pages are timed at the start, deep in the list by continuation token (keyset), and
// equally deep by $skip (OFFSET) for comparison.
func BenchmarkServiceOwnerReportees(b *testing.B) {
	const n = 20_000
	pool := storetest.New(b)
	subject, subjectID, _ := bigReporteeList(b, pool, n)
	srv, err := newAPI(pool)
	if err != nil {
		b.Fatal(err)
	}
	token := orgToken(b, orgFJE, "platform:serviceowner")
	ctx := context.Background()
	// 300 pages of 50 hold the subject and reportees 0..14,998: the deep pages start at 15,000 entries.
	const pages, deep = 300, 300 * 50
	deepKey := int64(bigListFirstID + 2*(deep-2))

	rq := serviceowner.ReporteeQuery{SubjectID: subjectID, SelfID: subjectID}
	cases := []struct {
		name  string
		after int64
		skip  int
		query string
	}{
		{"first-page", 0, 0, ""},
		{"continuation-at-15000", deepKey, 0, "&continuation=" + continuationAfter(b, srv, token, subject, pages)},
		{"skip-15000", 0, deep, "&$skip=" + strconv.Itoa(deep)},
	}
	for _, tc := range cases {
		sql, args, err := serviceowner.ReporteesSQL(rq, store.ListQuery{Page: store.Page{Skip: tc.skip, Limit: 50}}, tc.after)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s:\n%s", tc.name, explainPlan(b, pool, sql, args))
		var queryNs float64
		b.Run(tc.name+"/pgx-query", func(b *testing.B) {
			for b.Loop() {
				rows, err := pool.Query(ctx, sql, args...)
				if err != nil {
					b.Fatal(err)
				}
				count := 0
				for rows.Next() {
					if _, err := rows.Values(); err != nil {
						b.Fatal(err)
					}
					count++
				}
				if rows.Err() != nil || count != 51 {
					b.Fatal(rows.Err(), count)
				}
			}
			queryNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(tc.name+"/endpoint", func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "http://postbox.test/api/serviceowner/reportees?subject="+subject+"&$top=50"+tc.query, nil)
			req.Header.Set("ApiKey", keyFJE)
			req.Header.Set("Authorization", "Bearer "+token)
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"next"`) {
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

// continuationAfter walks the first pages of 50 as a client does and returns the continuation token of
// the next link of the last one.
func continuationAfter(b *testing.B, h http.Handler, token, subject string, pages int) string {
	b.Helper()
	target := "http://postbox.test/api/serviceowner/reportees?subject=" + subject + "&$top=50"
	var next string
	for range pages {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("ApiKey", keyFJE)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
		var body struct {
			Links struct{ Next struct{ Href string } } `json:"_links"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Links.Next.Href == "" {
			b.Fatal("no next link", err)
		}
		target = body.Links.Next.Href
		u, err := url.Parse(target)
		if err != nil {
			b.Fatal(err)
		}
		next = u.Query().Get("continuation")
	}
	return next
}

func explainPlan(b *testing.B, pool *pgxpool.Pool, sql string, args []any) string {
	b.Helper()
	rows, err := pool.Query(context.Background(), "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
	if err != nil {
		b.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
