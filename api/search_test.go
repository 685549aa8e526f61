package api_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/store/storetest"
)

var xmlMessageID = regexp.MustCompile(`<MessageId>(a[0-9]+)</MessageId>`)

// messageIDs are the ids of the messages of a list page in any of the media types.
func messageIDs(t *testing.T, r response) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	var ids []string
	if regexp.MustCompile(`xml`).MatchString(r.Header().Get("Content-Type")) {
		requireWellFormedXML(t, r.Body.Bytes())
		for _, m := range xmlMessageID.FindAllStringSubmatch(r.Body.String(), -1) {
			ids = append(ids, m[1])
		}
		return ids
	}
	for _, m := range r.embedded(t, "messages") {
		ids = append(ids, m["MessageId"].(string))
	}
	return ids
}

func TestMessageSearch(t *testing.T) {
	// From the dataset: every message of Nordlys skatteforvaltning (45) has "skatt" in its owner's name,
	// and of those P4 (INNSK: Read on 7102, no ArchiveRead) sees the unarchived ones of service 7102.
	for _, accept := range []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"} {
		t.Run(accept, func(t *testing.T) {
			path := "/api/" + orgO1 + "/messages?search=" + url.QueryEscape("Skatt")
			assert.Len(t, messageIDs(t, getAs(t, shared, ssnP1, path, "Accept", accept)), 45)
			assert.Len(t, messageIDs(t, getAs(t, shared, ssnP4, path, "Accept", accept)), 19)
			both := "/api/" + orgO1 + "/messages?search=" + url.QueryEscape("årsoppgave 2023") + "&$filter=" + url.QueryEscape("startswith(tolower(Subject),'årsoppgave')")
			assert.Len(t, messageIDs(t, getAs(t, shared, ssnP1, both, "Accept", accept)), 13)
		})
	}
	t.Run("paging keeps the search", func(t *testing.T) {
		r := getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages?search=skatt&$top=20")
		next := link(t, r.json(t), "next")
		assert.Contains(t, next, "search=skatt")
		assert.Len(t, walk(t, shared, ssnP1, pathOf(t, next)), 25)
	})
	for search, detail := range map[string]string{
		"!!! ---":           "search: give at least one word of letters or digits",
		"a b c d e f g h i": "search: at most 8 words",
	} {
		p := requireProblem(t, getAs(t, shared, ssnP1, "/api/"+orgO1+"/messages?search="+url.QueryEscape(search)), http.StatusBadRequest)
		assert.Equal(t, "urn:postbox:problem:invalid-query", p["type"], search)
		assert.Equal(t, detail, p["detail"], search)
	}
}

// TestListTooBroad: a list PostgreSQL cuts off at the list timeout is a 400 naming what to narrow. A lock
// on messages makes the list wait however fast the machine is; the one connection of the server's pool
// has prepared the statement before, so only its execution waits.
func TestListTooBroad(t *testing.T) {
	ctx := context.Background()
	seeded := storetest.New(t)
	cfg, err := pgxpool.ParseConfig(seeded.Config().ConnString())
	require.NoError(t, err)
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	tokens, err := testTokens()
	require.NoError(t, err)
	srv, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), Logger: quiet, Tokens: tokens, ListTimeout: 300 * time.Millisecond})
	require.NoError(t, err)

	path := "/api/" + orgO1 + "/messages?search=skatt&$filter=" + url.QueryEscape("ServiceCode ne '1'")
	assert.Len(t, messageIDs(t, getAs(t, srv, ssnP1, path)), 45)

	lock, err := seeded.Begin(ctx)
	require.NoError(t, err)
	defer lock.Rollback(ctx) //nolint:errcheck
	_, err = lock.Exec(ctx, "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	p := requireProblem(t, getAs(t, srv, ssnP1, path), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:query-too-broad", p["type"])
	assert.Equal(t, `the list took longer than 300ms to find: search "skatt" with $filter "ServiceCode ne '1'" finds or walks too many messages; `+
		`narrow it with more search words or a $filter (CreatedDate, ServiceCode, ReporteeId)`, p["detail"])

	require.NoError(t, lock.Rollback(ctx))
	assert.Len(t, messageIDs(t, getAs(t, srv, ssnP1, path)), 45, "the connection is not left with the timeout")
}
