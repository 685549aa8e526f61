package api_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/store/storetest"
)

// Each API key has a limit per area, counted in PostgreSQL so that every replica enforces the same one;
// every keyed answer says where the client stands, and one past the limit is 429 with Retry-After.
func TestRateLimits(t *testing.T) {
	_, pool := newServer(t)
	awayFromWindowEdge(t, pool)
	replica := func() *api.Server { return rateLimited(t, pool, 3) }
	one, two := replica(), replica()
	mailbox := "/api/" + orgO1 + "/messages"

	for i, srv := range []*api.Server{one, two, one} {
		r := getAs(t, srv, ssnP1, mailbox)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		assert.Equal(t, `"mailbox";q=3;w=60`, r.Header().Get("RateLimit-Policy"))
		assert.Regexp(t, `^"mailbox";r=`+strconv.Itoa(2-i)+`;t=([1-9]|[1-5][0-9]|60)$`, r.Header().Get("RateLimit"))
	}
	over := getAs(t, two, ssnP1, mailbox)
	p := requireProblem(t, over, http.StatusTooManyRequests)
	assert.Equal(t, "urn:postbox:problem:rate-limited", p["type"])
	after, err := strconv.Atoi(over.Header().Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, after >= 1 && after <= 60, after)
	assert.Regexp(t, `^"mailbox";r=0;t=`, over.Header().Get("RateLimit"))

	// Another area of the same key counts apart.
	r := getAs(t, one, ssnP1, "/api/reportees")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, `"reportees";q=3;w=60`, r.Header().Get("RateLimit-Policy"))

	// A key's own limit from the dataset wins over the default.
	r = get(t, one, mailbox, "ApiKey", keyMailbox, "Authorization", "Bearer "+personToken(t, ssnP1, "platform:enduser"))
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, `"mailbox";q=120;w=60`, r.Header().Get("RateLimit-Policy"))

	// The next window starts afresh (here for a replica that has not seen the full one: a replica that has
	// refuses until the window's end without asking).
	_, err = pool.Exec(context.Background(), `UPDATE rate_windows SET window_start = window_start - interval '1 minute'`)
	require.NoError(t, err)
	r = getAs(t, replica(), ssnP1, mailbox)
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Regexp(t, `^"mailbox";r=2;`, r.Header().Get("RateLimit"))

	// The open routes have no key to count: a login keeps its own lockout.
	login := do(t, one, request{method: http.MethodPost, path: "/api/authentication/authenticatewithpassword",
		header: map[string]string{"Content-Type": "application/json"}, body: `{"UserName":"nobody","UserPassword":"x"}`})
	assert.Empty(t, login.Header().Get("RateLimit"))
}

// A replica leases a share of a larger limit with one upsert and admits that many requests without asking
// again; the replicas' leases add up in PostgreSQL, so together they never admit more than the limit.
func TestRateLimitLeases(t *testing.T) {
	_, pool := newServer(t)
	awayFromWindowEdge(t, pool)
	replica := func() *api.Server { return rateLimited(t, pool, 640) } // leases of 640/64 = 10
	one, two := replica(), replica()
	counted := func() (n int) {
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT count FROM rate_windows WHERE area = 'reportees'`).Scan(&n))
		return n
	}
	for i := range 6 {
		r := getAs(t, one, ssnP1, "/api/reportees")
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		assert.Regexp(t, `^"reportees";r=`+strconv.Itoa(639-i)+`;`, r.Header().Get("RateLimit"))
	}
	assert.Equal(t, 10, counted(), "one lease served six requests")
	r := getAs(t, two, ssnP1, "/api/reportees")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Regexp(t, `^"reportees";r=629;`, r.Header().Get("RateLimit"), "the other replica's lease counts as used")
	assert.Equal(t, 20, counted())

	// Near the limit a lease is what is left, and a full window is refused without asking again.
	_, err := pool.Exec(context.Background(), `UPDATE rate_windows SET count = 636 WHERE area = 'reportees'`)
	require.NoError(t, err)
	three := replica()
	for range 4 {
		require.Equal(t, http.StatusOK, getAs(t, three, ssnP1, "/api/reportees").Code)
	}
	requireProblem(t, getAs(t, three, ssnP1, "/api/reportees"), http.StatusTooManyRequests)
	requireProblem(t, getAs(t, three, ssnP1, "/api/reportees"), http.StatusTooManyRequests)
	assert.Equal(t, 646, counted(), "the last lease was the 4 left, and a full window is refused without another upsert")
}

// rateLimited is another API replica on pool, limiting every key to limit requests a minute per area.
func rateLimited(t *testing.T, pool *pgxpool.Pool, limit int) *api.Server {
	t.Helper()
	tokens, err := testTokens()
	require.NoError(t, err)
	srv, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: testBodyLimit, Logger: quiet, Tokens: tokens,
		RateLimit: api.RateLimit{Limit: limit, Window: time.Minute}})
	require.NoError(t, err)
	return srv
}

// awayFromWindowEdge waits, when the database's current minute window has less than 15 seconds left,
// for the next one to begin: the tests count within one window, and a window that turns halfway through
// starts every count afresh (CI once met a 200 where the full window should have refused).
func awayFromWindowEdge(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var left float64
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT extract(epoch FROM date_bin('1 minute', now(), timestamptz 'epoch') + interval '1 minute' - now())`).Scan(&left))
	if left < 15 {
		time.Sleep(time.Duration(left*float64(time.Second)) + 100*time.Millisecond)
	}
}
