package api_test

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/store/storetest"
)

// BenchmarkFileRoundTrip1GB uploads a 1 GiB attachment to a form task, streamed over a real listener into
// the object store, and downloads it again; it reports the growth of the process's resident memory for
// each (target: under 64 MB) and each rate beside the bare put and get of the same bytes to the same store
// with the same SDK and part size in the same run (ratio-*, target: at least 0.8), and the bytes each side
// keeps for the attachment: the store's folder and PostgreSQL's database, before and after (target: one
// copy); and the download again from the API configured to redirect large files to a pre-signed URL of
// the store (POSTBOX_FILES_PRESIGN_FROM), the client following the redirect. Run it once: go test -run '^$' -bench FileRoundTrip1GB -benchtime 1x ./api/ (make bench).
func BenchmarkFileRoundTrip1GB(b *testing.B) {
	const size = 1 << 30
	ctx := context.Background()
	srv, pool := formTaskServer(b)
	_, err := pool.Exec(ctx, `UPDATE attachment_rules SET max_file_size = 2 << 30, max_attachment_count = 1000 WHERE attachment_rule_id = 902`)
	require.NoError(b, err)
	web := httptest.NewServer(srv)
	defer web.Close()
	// The same API configured to redirect downloads of large files to a pre-signed URL of the store.
	tokens, err := testTokens()
	require.NoError(b, err)
	presigning, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), Logger: quiet, Tokens: tokens,
		PublicURL: testPublicURL, PresignFrom: 1 << 20, PresignExpiry: time.Minute})
	require.NoError(b, err)
	redirecting := httptest.NewServer(presigning)
	defer redirecting.Close()
	dbName := pool.Config().ConnConfig.Database
	cfg := storetest.FilesConfig(b, dbName)
	objects, err := storetest.ObjectServer()
	require.NoError(b, err)
	bare, err := minio.New(cfg.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Region: cfg.Region})
	require.NoError(b, err)
	token := personTokenTB(b, ssnP1)
	send := func(req *http.Request) *http.Response {
		req.Header.Set("ApiKey", keyAll)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		return res
	}
	storeBytes := func() int64 { return dirSize(b, filepath.Join(objects.Dir, cfg.Bucket, dbName)) }
	dbBytes := func() (n int64) {
		require.NoError(b, pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n))
		return n
	}
	mbps := func(d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }

	// The bare way: the same bytes put and got with the same SDK and part size, no API between; run
	// before and after the API's round trip, and averaged, so that neither side gains from going first.
	bareRound := func() (put, get time.Duration) {
		began := time.Now()
		_, err := bare.PutObject(ctx, cfg.Bucket, cfg.Prefix+"bare", pdfReader(size), -1, minio.PutObjectOptions{PartSize: uint64(cfg.PartSize)})
		require.NoError(b, err)
		put = time.Since(began)
		began = time.Now()
		obj, err := bare.GetObject(ctx, cfg.Bucket, cfg.Prefix+"bare", minio.GetObjectOptions{})
		require.NoError(b, err)
		n, err := io.Copy(io.Discard, obj)
		require.NoError(b, err)
		require.EqualValues(b, size, n)
		get = time.Since(began)
		require.NoError(b, bare.RemoveObject(ctx, cfg.Bucket, cfg.Prefix+"bare", minio.RemoveObjectOptions{}))
		return put, get
	}

	for b.Loop() {
		put1, get1 := bareRound()
		storeBefore, dbBefore := storeBytes(), dbBytes()
		var location string
		var upload time.Duration
		upGrowth := peakRSS(b, func() {
			req, err := http.NewRequest(http.MethodPost, web.URL+"/api/"+orgO1+
				"/messages/a3101172/attachments/streamedattachment?fileName=stor.pdf&attachmentType=Dokumentasjon", pdfReader(size))
			require.NoError(b, err)
			req.ContentLength = size
			req.Header.Set("Content-Type", "application/octet-stream")
			began := time.Now()
			res := send(req)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			upload = time.Since(began)
			require.Equal(b, http.StatusCreated, res.StatusCode, string(body))
			location = res.Header.Get("Location")
		})
		storeAfter, dbAfter := storeBytes(), dbBytes()

		loc, err := url.Parse(location)
		require.NoError(b, err)
		// get downloads the attachment from base, following a redirect as any HTTP client does.
		get := func(base string) (took time.Duration) {
			req, err := http.NewRequest(http.MethodGet, base+loc.Path, nil)
			require.NoError(b, err)
			began := time.Now()
			res := send(req)
			n, err := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			took = time.Since(began)
			require.NoError(b, err)
			require.Equal(b, http.StatusOK, res.StatusCode)
			require.EqualValues(b, size, n)
			return took
		}
		var download, redirected time.Duration
		downGrowth := peakRSS(b, func() { download = get(web.URL) })
		redirected = get(redirecting.URL)

		put2, get2 := bareRound()
		barePut, bareGet := (put1+put2)/2, (get1+get2)/2
		b.ReportMetric(float64(upGrowth)/(1<<20), "upload-rss-growth-MB")
		b.ReportMetric(float64(downGrowth)/(1<<20), "download-rss-growth-MB")
		b.ReportMetric(mbps(upload), "upload-MB/s")
		b.ReportMetric(mbps(barePut), "bare-put-MB/s")
		b.ReportMetric(mbps(download), "download-MB/s")
		b.ReportMetric(mbps(bareGet), "bare-get-MB/s")
		b.ReportMetric(barePut.Seconds()/upload.Seconds(), "ratio-upload")
		b.ReportMetric(bareGet.Seconds()/download.Seconds(), "ratio-download")
		b.ReportMetric(mbps(redirected), "download-presigned-MB/s")
		b.ReportMetric(bareGet.Seconds()/redirected.Seconds(), "ratio-download-presigned")
		b.ReportMetric(float64(storeAfter-storeBefore)/size, "store-copies")
		b.ReportMetric(float64(dbAfter-dbBefore)/(1<<20), "postgres-growth-MB")
	}
}

// dirSize is the bytes of the files under dir (0 when it does not exist yet).
func dirSize(b *testing.B, dir string) (n int64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil //nolint:nilerr // a folder not made yet holds nothing
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}
