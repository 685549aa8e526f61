package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store/scaledata"
	"github.com/postbox/postbox/store/storetest"
)

// The download queue's benchmarks (make bench; not timed in make test). Both build their data with SQL,
// as the archive would have written it, for FJE's service 4711/2 and O1.

// benchArchive inserts archive ref and its submission with one attachment (id 1) of size bytes, saved in
// the object store, unless the database has it from an earlier benchmark of this run.
func benchArchive(b *testing.B, ref string, size int) {
	ctx := context.Background()
	_, pool := formTaskServer(b)
	var exists bool
	require.NoError(b, pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM archives WHERE archive_reference = $1)`, ref).Scan(&exists))
	if exists {
		return
	}
	fs := storetest.Files(b, pool)
	blob, err := fs.Save(ctx, io.LimitReader(repeating("postbox-archived-bytes-"), int64(size)), -1, "")
	require.NoError(b, err)
	print, err := fs.SaveBytes(ctx, []byte("%PDF-1.4 bench"), "application/pdf")
	require.NoError(b, err)
	attachments, err := json.Marshal([]map[string]any{{"ID": 1, "Name": "Stor", "FileName": "stor.bin", "AttachmentType": "Dokumentasjon",
		"FileSize": size, "SHA256": base64.StdEncoding.EncodeToString(blob.SHA256)}})
	require.NoError(b, err)
	_, err = pool.Exec(ctx, `WITH print AS (INSERT INTO prints (document_digest, pdf_sha256) VALUES (sha256('bench'::bytea), $4)
			ON CONFLICT DO NOTHING),
		archive AS (INSERT INTO archives (archive_reference, message_id, archived_at, archived_by, forms, attachments, print_digest)
			VALUES ($1, 'a' || substr($1, 3), now(), 'bench', '[{"ID":1,"Type":"MainForm","DataFormatID":"3106","DataFormatVersion":21845,"Name":"Skjema","FormData":"<Skjema/>"}]', $2, sha256('bench'::bytea))
			RETURNING archive_reference, message_id)
		INSERT INTO submissions (archive_reference, seq, message_id, service_owner_code, service_code, service_edition, reportee_id, archived_at, filled_by, signed_by)
		SELECT archive_reference, substr(archive_reference, 3)::bigint, message_id, 'FJE', '4711', 2,
			(SELECT id FROM parties WHERE organization_number = $3), now(), 'bench', 'bench' FROM archive`, ref, attachments, orgO1, print.SHA256)
	require.NoError(b, err)
	_, err = pool.Exec(ctx, `INSERT INTO archive_blobs (archive_reference, sha256) VALUES ($1, $2)`, ref, blob.SHA256)
	require.NoError(b, err)
}

// repeating is an endless reader of s over and over.
func repeating(s string) io.Reader {
	return &repeatReader{s: []byte(s)}
}

type repeatReader struct {
	s   []byte
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}

// peakRSS runs f and returns how much the process's resident memory grew at its highest while f ran,
// from a baseline with the freed memory returned to the system.
func peakRSS(b *testing.B, f func()) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	start := rss(b)
	return max(0, rssPeakDuring(b, f)-start)
}

// BenchmarkSubmissionDownload200MB streams a 200 MB archived attachment and the ZIP holding it through the
// real router over a real listener, and reports each one's growth of resident memory (target: under 32
// MB) and rate beside the bare read of the same bytes from the object store (one GET with the same SDK,
// read to its end) in the same run; ratio-* is the API's rate over the bare one (target: at least 0.8).
func BenchmarkSubmissionDownload200MB(b *testing.B) {
	const size = 200 << 20
	const ref = "AR990000001" // beyond the queue benchmark's scaledata run
	srv, pool := formTaskServer(b)
	benchArchive(b, ref, size)
	fs := storetest.Files(b, pool)
	web := httptest.NewServer(srv) // streamed as a client gets it, not held for the OpenAPI check
	defer web.Close()
	token := fjeQueue(b).token
	download := func(path, accept string) (int64, time.Duration) {
		req, err := http.NewRequest(http.MethodGet, web.URL+path, nil)
		require.NoError(b, err)
		req.Header.Set("ApiKey", keyFJE)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", accept)
		began := time.Now()
		res, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		defer res.Body.Close()
		require.Equal(b, http.StatusOK, res.StatusCode)
		n, err := io.Copy(io.Discard, res.Body)
		require.NoError(b, err)
		return n, time.Since(began)
	}
	for b.Loop() {
		var attN, zipN int64
		var attT, zipT, bareT time.Duration
		attGrowth := peakRSS(b, func() {
			attN, attT = download("/api/serviceowner/submissions/"+ref+"/attachments/1", "*/*")
		})
		zipGrowth := peakRSS(b, func() { zipN, zipT = download("/api/serviceowner/submissions/"+ref, "application/zip") })
		began := time.Now()
		var sum []byte
		require.NoError(b, pool.QueryRow(context.Background(), `SELECT sha256 FROM archive_blobs WHERE archive_reference = $1`, ref).Scan(&sum))
		r, err := fs.Open(context.Background(), sum, 0, -1)
		require.NoError(b, err)
		bareN, err := io.Copy(io.Discard, r)
		require.NoError(b, err)
		_ = r.Close()
		bareT = time.Since(began)
		require.EqualValues(b, size, bareN)
		require.EqualValues(b, size, attN)
		require.Greater(b, zipN, int64(size))
		mbps := func(n int64, d time.Duration) float64 { return float64(n) / (1 << 20) / d.Seconds() }
		b.ReportMetric(float64(attGrowth)/(1<<20), "attachment-rss-growth-MB")
		b.ReportMetric(float64(zipGrowth)/(1<<20), "zip-rss-growth-MB")
		b.ReportMetric(mbps(attN, attT), "attachment-MB/s")
		b.ReportMetric(mbps(zipN, zipT), "zip-MB/s")
		b.ReportMetric(mbps(size, bareT), "bare-MB/s")
		b.ReportMetric(mbps(attN, attT)/mbps(size, bareT), "ratio-attachment")
		b.ReportMetric(mbps(zipN, zipT)/mbps(size, bareT), "ratio-zip")
	}
}

// BenchmarkSubmissionQueuePages fills the queue to POSTBOX_BENCH_SUBMISSIONS archived submissions (default
// 1,000,000, each with a form, an attachment and a print: scaledata.Submissions, as postbox gen
// --submissions makes them; once per database) and measures the unconfirmed queue's first page and a page from the
// middle (by its continuation token) over real HTTP, 200 requests each, beside the bare statement of the
// same page run on the pool in the same run. Reported: p50 and p99 of each, and the API's p99 over the
// bare one's.
func BenchmarkSubmissionQueuePages(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("POSTBOX_BENCH_SUBMISSIONS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	srv, pool := formTaskServer(b)
	ctx := context.Background()
	var o1 int64
	require.NoError(b, pool.QueryRow(ctx, `SELECT id FROM parties WHERE organization_number = $1`, orgO1).Scan(&o1))
	_, err := scaledata.Submissions(ctx, pool, storetest.FilesOf(pool), scaledata.Queue{Count: n, Owner: "FJE", ServiceCode: "4711", ServiceEdition: 2,
		ReporteeID: o1, FirstSeq: scaledata.FirstSubmission})
	require.NoError(b, err)
	web := httptest.NewServer(srv) // streamed as a client gets it, not held for the OpenAPI check
	defer web.Close()
	token := fjeQueue(b).token
	get := func(path string) time.Duration {
		req, err := http.NewRequest(http.MethodGet, web.URL+path, nil)
		require.NoError(b, err)
		req.Header.Set("ApiKey", keyFJE)
		req.Header.Set("Authorization", "Bearer "+token)
		began := time.Now()
		res, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(b, http.StatusOK, res.StatusCode)
		return time.Since(began)
	}
	// The bare statement: the queue's own statement for the same page (submission/queries.go), straight
	// from the pool.
	bare := func(after int64) time.Duration {
		began := time.Now()
		rows, err := pool.Query(ctx, `SELECT su.archive_reference, su.seq, su.message_id, su.service_code, su.service_edition, su.archived_at,
				su.filled_by, su.signed_by, su.confirmed_at, COALESCE(su.confirmed_by, ''),
				p.id, p.name, COALESCE(p.organization_number, ''), COALESCE(p.ssn, ''),
				(SELECT COALESCE(json_agg(json_build_object('ID', f->'ID', 'Type', f->'Type', 'DataFormatID', f->'DataFormatID',
						'DataFormatVersion', f->'DataFormatVersion', 'Name', f->'Name',
						'Size', octet_length(convert_to(f->>'FormData', 'UTF8')),
						'SHA256', encode(sha256(convert_to(f->>'FormData', 'UTF8')), 'base64')) ORDER BY x.n), '[]')
					FROM jsonb_array_elements(a.forms) WITH ORDINALITY AS x(f, n)),
				a.attachments, (SELECT b.size FROM blobs b WHERE b.sha256 = pr.pdf_sha256), pr.pdf_sha256
			FROM submissions su JOIN archives a ON a.archive_reference = su.archive_reference
			JOIN parties p ON p.id = su.reportee_id JOIN prints pr ON pr.document_digest = a.print_digest
			WHERE su.service_owner_code = 'FJE' AND su.seq > $1 AND su.confirmed_at IS NULL ORDER BY su.seq LIMIT 51`, after)
		require.NoError(b, err)
		for rows.Next() {
		}
		require.NoError(b, rows.Err())
		return time.Since(began)
	}
	deepAfter := int64(scaledata.FirstSubmission + n/2)
	deep := "/api/serviceowner/submissions?continuation=" + base64.RawURLEncoding.EncodeToString([]byte("so1.submissions."+strconv.FormatInt(deepAfter, 10)))
	const samples = 200
	for b.Loop() {
		var firstPage, deepPage, bareFirst, bareDeep []time.Duration
		for range samples {
			firstPage = append(firstPage, get("/api/serviceowner/submissions"))
			deepPage = append(deepPage, get(deep))
			bareFirst = append(bareFirst, bare(0))
			bareDeep = append(bareDeep, bare(deepAfter))
		}
		q := func(d []time.Duration, p float64) float64 {
			slices.Sort(d)
			return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
		}
		b.ReportMetric(float64(n), "submissions")
		b.ReportMetric(q(firstPage, 0.5), "first-p50-ms")
		b.ReportMetric(q(firstPage, 0.99), "first-p99-ms")
		b.ReportMetric(q(deepPage, 0.5), "deep-p50-ms")
		b.ReportMetric(q(deepPage, 0.99), "deep-p99-ms")
		b.ReportMetric(q(bareFirst, 0.99), "bare-first-p99-ms")
		b.ReportMetric(q(bareDeep, 0.99), "bare-deep-p99-ms")
		b.ReportMetric(q(firstPage, 0.99)/q(bareFirst, 0.99), "ratio-first-p99")
		b.ReportMetric(q(deepPage, 0.99)/q(bareDeep, 0.99), "ratio-deep-p99")
		fmt.Fprintf(os.Stderr, "queue pages at %d submissions: first p99 %.1f ms (bare %.1f), deep p99 %.1f ms (bare %.1f)\n",
			n, q(firstPage, 0.99), q(bareFirst, 0.99), q(deepPage, 0.99), q(bareDeep, 0.99))
	}
}
