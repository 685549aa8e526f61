package api_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/store/storetest"
)

// A caller may have MaxSubscriptions subscriptions in an area, for all its reportees together; of
// concurrent POSTs beyond it exactly the limit succeed, the others are 409 subscription-limit-reached. A
// retry of a POST that made one still gets its 201; ending one makes room; other callers have their own.
func TestWebhookSubscriptionsAreLimitedPerCaller(t *testing.T) {
	const limit, tries = 4, 12
	pool := storetest.New(t)
	tokens, err := testTokens()
	require.NoError(t, err)
	srv, err := api.New(api.Options{Pool: pool, Files: storetest.FilesOf(pool), MaxBodyBytes: testBodyLimit, Logger: quiet, Tokens: tokens, MaxSubscriptions: limit})
	require.NoError(t, err)
	p1 := asPerson(t, ssnP1)
	post := func(header map[string]string, who, key string) response {
		h := maps.Clone(header)
		if key != "" {
			h["Idempotency-Key"] = key
		}
		return do(t, srv, request{method: http.MethodPost, path: "/api/" + who + "/events/subscriptions", header: h,
			body: `{"EndPoint": "https://93.184.215.14/hook"}`})
	}

	// Half for P1 itself, half for the organization it represents: one limit for both.
	answers := make([]response, tries)
	var wg sync.WaitGroup
	for i := range tries {
		who := "my"
		if i%2 == 1 {
			who = orgO1
		}
		wg.Go(func() { answers[i] = post(p1, who, fmt.Sprintf("limit-%d", i)) })
	}
	wg.Wait()
	var made []int
	for i, r := range answers {
		if r.Code == http.StatusCreated {
			made = append(made, i)
			continue
		}
		p := requireProblem(t, r, http.StatusConflict)
		assert.Equal(t, "urn:postbox:problem:subscription-limit-reached", p["type"])
		assert.Equal(t, fmt.Sprintf("you have %d webhook subscriptions here, the most a caller may have: DELETE one you no longer need first", limit), p["detail"])
	}
	require.Len(t, made, limit, "exactly the limit of the concurrent POSTs made a subscription")
	var stored int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_subscriptions`).Scan(&stored))
	assert.Equal(t, limit, stored)

	// The retry of one that was made is its 201 again, though no more may be made.
	first := made[0]
	who := map[bool]string{true: orgO1, false: "my"}[first%2 == 1]
	again := post(p1, who, fmt.Sprintf("limit-%d", first))
	require.Equal(t, http.StatusCreated, again.Code, again.Body.String())
	assert.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
	assert.Equal(t, answers[first].json(t)["Id"], again.json(t)["Id"])
	requireProblem(t, post(p1, "my", ""), http.StatusConflict)

	// Another caller has a limit of its own; an ended subscription makes room.
	require.Equal(t, http.StatusCreated, post(asPerson(t, ssnP2), "my", "").Code)
	ended := do(t, srv, request{method: http.MethodDelete, path: pathOf(t, answers[first].Header().Get("Location")), header: p1})
	require.Equal(t, http.StatusNoContent, ended.Code)
	require.Equal(t, http.StatusCreated, post(p1, "my", "").Code)
	requireProblem(t, post(p1, orgO1, ""), http.StatusConflict)
}
