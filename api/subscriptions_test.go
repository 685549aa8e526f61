package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/api"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/worker"
)

// The webhook tests share a database of their own (its events are only theirs), the form-task tests' dev
// server and one events worker whose retry schedule runs in milliseconds, and an API that allows private
// endpoints, to deliver to local receivers.
var webhookEnv struct {
	once sync.Once
	err  error
	pool *pgxpool.Pool
	srv  *api.Server
	stop func()
}

// testRetries: three further attempts after a failed one, 4 in all, then a dead letter.
var testRetries = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}

func webhookServer(t *testing.T) (*api.Server, *pgxpool.Pool) {
	t.Helper()
	formTaskServer(t) // the dev server
	e := &webhookEnv
	e.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		url, _, drop, err := storetest.Create(ctx)
		if e.err = err; err != nil {
			cancel()
			return
		}
		if e.pool, e.err = store.Open(ctx, url); e.err != nil {
			cancel()
			drop()
			return
		}
		deliveries := webhook.NewDeliveries(e.pool, webhook.Options{AllowPrivate: true, PublicURL: "http://postbox.test",
			Policy: webhook.Policy{Retries: testRetries, PauseAfter: time.Hour, AttemptTimeout: 2 * time.Second, IdleCheck: time.Hour}}, quiet)
		ws := worker.New(formTaskEnv.dev.Client(), nil, worker.Options{Queues: []string{"events"}, Deliveries: deliveries, StopTimeout: 200 * time.Millisecond})
		done := make(chan error, 1)
		go func() { done <- worker.Run(ctx, ws, e.pool, slog.New(slog.DiscardHandler)) }()
		tokens, err := testTokens()
		if e.err = err; err != nil {
			cancel()
			return
		}
		e.srv, e.err = api.New(api.Options{Pool: e.pool, Files: storetest.FilesOf(e.pool), MaxBodyBytes: testBodyLimit, Logger: quiet, Tokens: tokens,
			Webhooks: webhook.Guard{AllowPrivate: true}})
		e.stop = func() { cancel(); <-done; e.pool.Close(); drop() }
	})
	require.NoError(t, e.err)
	return e.srv, e.pool
}

// stopWebhookEnv ends what webhookServer started.
func stopWebhookEnv() {
	if webhookEnv.stop != nil {
		webhookEnv.stop()
	}
}

// receiver is a webhook endpoint: it answers the handshake, checks each delivery's signature with the
// subscription's secret, fails while told to, and records what it took.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	secret string
	// failFirst makes the receiver answer 500 to the first event it gets (failing), again and again.
	failFirst bool
	failing   string
	attempts  map[string]int
	got       []delivery
	bad       []string
}

type delivery struct {
	ID    string // webhook-id
	Event events.CloudEvent
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{attempts: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodOptions {
		w.Header().Set(webhook.HeaderAllowedOrigin, req.Header.Get(webhook.HeaderRequestOrigin))
		return
	}
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	id := req.Header.Get(webhook.HeaderID)
	r.attempts[id]++
	if err := webhook.Verify(r.secret, req.Header, body, time.Now()); err != nil || req.Header.Get("Content-Type") != webhook.ContentType {
		r.bad = append(r.bad, fmt.Sprintf("%s: %v (%s)", id, err, req.Header.Get("Content-Type")))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.failFirst && r.failing == "" {
		r.failing = id
	}
	if r.failFirst && r.failing == id {
		http.Error(w, "not now", http.StatusInternalServerError)
		return
	}
	var ev events.CloudEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		r.bad = append(r.bad, id+": "+err.Error())
	}
	r.got = append(r.got, delivery{ID: id, Event: ev})
}

func (r *receiver) setSecret(s string) {
	r.mu.Lock()
	r.secret = s
	r.mu.Unlock()
}

func (r *receiver) setFailFirst(fail bool) {
	r.mu.Lock()
	r.failFirst = fail
	r.mu.Unlock()
}

// waitFor waits until the receiver took n deliveries and returns them.
func (r *receiver) waitFor(t *testing.T, n int) []delivery {
	t.Helper()
	var got []delivery
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		got = append([]delivery(nil), r.got...)
		return len(got) >= n
	}, 30*time.Second, 10*time.Millisecond, "deliveries: %d of %d", len(got), n)
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Empty(t, r.bad, "deliveries that were not signed or typed right")
	return got
}

func asPerson(t *testing.T, ssn string) map[string]string {
	return map[string]string{"ApiKey": keyAll, "Authorization": "Bearer " + personToken(t, ssn, "platform:enduser"), "Content-Type": "application/json"}
}

// subscribe makes a subscription as the caller of header and gives the receiver its secret.
func subscribe(t *testing.T, h http.Handler, header map[string]string, path, endpoint string, types ...string) (id int64, location string, r map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"EndPoint": endpoint, "Types": types})
	require.NoError(t, err)
	res := do(t, h, request{method: http.MethodPost, path: path, header: header, body: string(body)})
	require.Equal(t, http.StatusCreated, res.Code, res.Body.String())
	r = res.json(t)
	assert.True(t, strings.HasPrefix(r["Secret"].(string), "whsec_"))
	return int64(r["Id"].(float64)), res.Header().Get("Location"), r
}

// appendEvents commits events of reportee (one transaction each) and returns them as stored.
func appendEvents(t *testing.T, pool *pgxpool.Pool, reportee int64, eventType string, n int) []store.Event {
	t.Helper()
	return appendMessageEvents(t, pool, eventType, n, events.Message{ReporteeID: reportee, Type: "Correspondence",
		ServiceCode: "7001", ServiceEdition: 1, Status: "Lest"})
}

// appendMessageEvents commits n events of message m (one transaction each) and returns them as stored.
func appendMessageEvents(t *testing.T, pool *pgxpool.Pool, eventType string, n int, m events.Message) []store.Event {
	t.Helper()
	ctx := context.Background()
	b := events.NewBuilder("http://postbox.test")
	q := store.New(pool)
	before, err := q.LastEventSeq(ctx)
	require.NoError(t, err)
	for i := range n {
		m.MessageID = fmt.Sprintf("a%d", 9000000+i)
		require.NoError(t, q.AppendEvents(ctx, b.MessageEvent(eventType, m)))
	}
	stored, err := q.EventsAfter(ctx, before, 1000)
	require.NoError(t, err)
	return stored
}

func partyID(t *testing.T, ssn string) int64 {
	id, err := strconv.ParseInt(strings.TrimPrefix(selfReporteeID(t, ssn), "r"), 10, 64)
	require.NoError(t, err)
	return id
}

// waitForStatus waits until the subscription at path has status.
func waitForStatus(t *testing.T, h http.Handler, header map[string]string, path, status string) map[string]any {
	t.Helper()
	var last map[string]any
	require.Eventually(t, func() bool {
		r := do(t, h, request{path: path, header: header})
		if r.Code != http.StatusOK {
			return false
		}
		last = r.json(t)
		return last["Status"] == status
	}, 30*time.Second, 10*time.Millisecond, "status of %s: %v", path, last)
	return last
}

// A local receiver gets every event of the subscriber's reportee in order, signed, with webhook-id the
// event's id; events of other reportees and of other types are not sent.
func TestWebhookDeliversEachEventInOrderSigned(t *testing.T) {
	srv, pool := webhookServer(t)
	rcv, typed := newReceiver(t), newReceiver(t)
	p1 := asPerson(t, ssnP1)
	_, all, created := subscribe(t, srv, p1, "/api/my/events/subscriptions", rcv.URL)
	rcv.setSecret(created["Secret"].(string))
	assert.Nil(t, created["Types"], "every type")
	_, only, c2 := subscribe(t, srv, p1, "/api/my/events/subscriptions", typed.URL, events.CorrespondenceConfirmed)
	typed.setSecret(c2["Secret"].(string))
	waitForStatus(t, srv, p1, pathOf(t, all), webhook.StatusActive)
	waitForStatus(t, srv, p1, pathOf(t, only), webhook.StatusActive)

	me, other := partyID(t, ssnP1), partyID(t, ssnP2)
	var want []store.Event
	want = append(want, appendEvents(t, pool, me, events.CorrespondenceRead, 10)...)
	appendEvents(t, pool, other, events.CorrespondenceRead, 3)
	confirmed := appendEvents(t, pool, me, events.CorrespondenceConfirmed, 5)
	want = append(want, confirmed...)

	got := rcv.waitFor(t, len(want))
	require.Len(t, got, len(want))
	for i, e := range want {
		assert.Equal(t, e.ID, got[i].ID, "webhook-id is the event id, in order")
		assert.Equal(t, e.ID, got[i].Event.ID)
		assert.Equal(t, strconv.FormatInt(e.Seq, 10), got[i].Event.Sequence)
		assert.Equal(t, fmt.Sprintf("/party/r%d", me), got[i].Event.Subject)
	}
	gotTyped := typed.waitFor(t, len(confirmed))
	for i, e := range confirmed {
		assert.Equal(t, e.ID, gotTyped[i].ID)
		assert.Equal(t, events.CorrespondenceConfirmed, gotTyped[i].Event.Type)
	}
	// Nothing more: a last event of the subscriber's arrives right after the others, in order.
	last := appendEvents(t, pool, me, events.CorrespondenceRead, 1)
	got = rcv.waitFor(t, len(want)+1)
	require.Len(t, got, len(want)+1, "nothing more")
	assert.Equal(t, last[0].ID, got[len(want)].ID)
}

// A subscriber gets only what it may read in the mailbox: P4 holds Read on 7102/1 for O1 and nothing else,
// so of O1's events it gets those of 7102/1 that are not archived, and none of roles.
func TestWebhookDeliversOnlyWhatTheSubscriberMayRead(t *testing.T) {
	srv, pool := webhookServer(t)
	rcv := newReceiver(t)
	p4 := asPerson(t, ssnP4)
	_, location, created := subscribe(t, srv, p4, "/api/"+orgO1+"/events/subscriptions", rcv.URL)
	rcv.setSecret(created["Secret"].(string))
	waitForStatus(t, srv, p4, pathOf(t, location), webhook.StatusActive)

	var o1 int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM parties WHERE organization_number = $1`, orgO1).Scan(&o1))
	msg := func(code string, status string) events.Message {
		return events.Message{ReporteeID: o1, Type: "Correspondence", ServiceCode: code, ServiceEdition: 1, Status: status}
	}
	appendMessageEvents(t, pool, events.CorrespondenceRead, 2, msg("7001", "Lest"))
	appendMessageEvents(t, pool, events.CorrespondenceArchived, 2, msg("7102", "Arkivert"))
	require.NoError(t, store.New(pool).AppendEvents(context.Background(), events.NewBuilder("http://postbox.test").
		RoleEvent(events.RoleDelegated, events.Role{RoleID: 1, RoleDefinitionID: 1, ReporteeID: o1, HolderPartyID: partyID(t, ssnP2)})))
	want := appendMessageEvents(t, pool, events.CorrespondenceRead, 3, msg("7102", "Lest"))

	// Deliveries are in order: once a last readable event has arrived, every event before it has been
	// delivered or passed over.
	want = append(want, appendMessageEvents(t, pool, events.CorrespondenceRead, 1, msg("7102", "Lest"))...)
	got := rcv.waitFor(t, len(want))
	require.Len(t, got, len(want), "only the unarchived events of 7102")
	for i, e := range want {
		assert.Equal(t, e.ID, got[i].ID)
	}
}

// A receiver that fails an event gets it on the retry schedule, four times, then the event is a dead
// letter and the next ones go on; a replay sends it again, with the same webhook-id.
func TestWebhookRetriesThenDeadLettersAndReplays(t *testing.T) {
	srv, pool := webhookServer(t)
	rcv := newReceiver(t)
	p1 := asPerson(t, ssnP1)
	_, location, created := subscribe(t, srv, p1, "/api/my/events/subscriptions", rcv.URL)
	rcv.setSecret(created["Secret"].(string))
	path := pathOf(t, location)
	waitForStatus(t, srv, p1, path, webhook.StatusActive)

	me := partyID(t, ssnP1)
	rcv.setFailFirst(true)
	first := appendEvents(t, pool, me, events.CorrespondenceRead, 1)[0]
	rest := appendEvents(t, pool, me, events.CorrespondenceRead, 2)
	got := rcv.waitFor(t, 2)
	assert.Equal(t, []string{rest[0].ID, rest[1].ID}, []string{got[0].ID, got[1].ID})
	rcv.mu.Lock()
	assert.Equal(t, 1+len(testRetries), rcv.attempts[first.ID], "the first attempt and one per retry")
	rcv.mu.Unlock()

	r := do(t, srv, request{path: path + "/deadletters", header: p1})
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	dead := r.embedded(t, "deadletters")
	require.Len(t, dead, 1)
	assert.Equal(t, first.ID, dead[0]["EventId"])
	assert.EqualValues(t, first.Seq, dead[0]["Sequence"])
	assert.EqualValues(t, 4, dead[0]["Attempts"])
	assert.Contains(t, dead[0]["Reason"], "500 Internal Server Error: not now")
	subscription := path[strings.LastIndex(path, "/")+1:]
	assert.EqualValues(t, 1+len(testRetries), testutil.ToFloat64(telemetry.WebhookDeliveries.WithLabelValues(subscription, "failed")))
	assert.EqualValues(t, 2, testutil.ToFloat64(telemetry.WebhookDeliveries.WithLabelValues(subscription, "delivered")))
	assert.EqualValues(t, 1, testutil.ToFloat64(telemetry.WebhookDeadLetters.WithLabelValues(subscription)))
	assert.Positive(t, testutil.ToFloat64(telemetry.WebhookLag.WithLabelValues(subscription)), "the last delivery's lag")

	rcv.setFailFirst(false)
	r = do(t, srv, request{method: http.MethodPost, path: path + "/deadletters/replay", header: p1})
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	assert.EqualValues(t, 1, r.json(t)["Replaying"])
	got = rcv.waitFor(t, 3)
	assert.Equal(t, first.ID, got[2].ID, "the replay, with the event's webhook-id")
	require.Eventually(t, func() bool {
		return len(do(t, srv, request{path: path + "/deadletters", header: p1}).embedded(t, "deadletters")) == 0
	}, 10*time.Second, 10*time.Millisecond, "a delivered replay is no dead letter")
}

// An endpoint that does not answer the handshake leaves the subscription pending with the reason, and
// nothing is delivered to it.
func TestWebhookHandshakeRefusedStaysPending(t *testing.T) {
	srv, _ := webhookServer(t)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	p1 := asPerson(t, ssnP1)
	_, location, _ := subscribe(t, srv, p1, "/api/my/events/subscriptions", plain.URL)
	require.Eventually(t, func() bool {
		r := do(t, srv, request{path: pathOf(t, location), header: p1}).json(t)
		return r["Status"] == webhook.StatusPending && strings.Contains(fmt.Sprint(r["StatusReason"]), "WebHook-Allowed-Origin")
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, http.StatusNoContent, do(t, srv, request{method: http.MethodDelete, path: pathOf(t, location), header: p1}).Code)
}

// Endpoints must be https and public: loopback, private, link-local and metadata addresses are refused
// (without POSTBOX_WEBHOOK_ALLOW_PRIVATE), and nothing is stored.
func TestWebhookPrivateEndpointsAreRefused(t *testing.T) {
	srv, pool := newServer(t)
	p1 := asPerson(t, ssnP1)
	for _, endpoint := range []string{"https://127.0.0.1:8443/hook", "https://localhost/hook", "https://10.0.0.7/hook",
		"https://192.168.1.1/", "https://169.254.169.254/latest/meta-data", "https://[::1]/", "https://[fd00:ec2::254]/",
		"https://100.64.1.1/", "http://93.184.215.14/hook", "ftp://93.184.215.14/", "https://user:pw@93.184.215.14/", "not a url"} {
		body, _ := json.Marshal(map[string]any{"EndPoint": endpoint})
		r := do(t, srv, request{method: http.MethodPost, path: "/api/my/events/subscriptions", header: p1, body: string(body)})
		p := requireProblem(t, r, http.StatusBadRequest)
		assert.Equal(t, "urn:postbox:problem:endpoint-not-allowed", p["type"], endpoint)
	}
	for _, body := range []string{`{}`, `{"EndPoint": "https://93.184.215.14/", "Types": ["no.such.type.v1"]}`} {
		requireProblem(t, do(t, srv, request{method: http.MethodPost, path: "/api/my/events/subscriptions", header: p1, body: body}), http.StatusBadRequest)
	}
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_subscriptions`).Scan(&n))
	assert.Zero(t, n)
}

// A subscription is its subscriber's: another caller does not see it; DELETE ends it; Idempotency-Key
// makes the POST safe to retry; a service owner subscribes under its own area.
func TestWebhookSubscriptionsAreTheSubscribers(t *testing.T) {
	srv, _ := newServer(t)
	p1, p2 := asPerson(t, ssnP1), asPerson(t, ssnP2)
	id, location, _ := subscribe(t, srv, p1, "/api/my/events/subscriptions", "https://93.184.215.14/hook")
	path := pathOf(t, location)
	assert.Equal(t, fmt.Sprintf("/api/my/events/subscriptions/%d", id), path)
	r := do(t, srv, request{path: path, header: p1})
	require.Equal(t, http.StatusOK, r.Code)
	assert.Nil(t, r.json(t)["Secret"], "the secret is shown once")
	assert.Equal(t, webhook.StatusPending, r.json(t)["Status"])
	require.Len(t, do(t, srv, request{path: "/api/my/events/subscriptions", header: p1}).embedded(t, "subscriptions"), 1)
	assert.Empty(t, do(t, srv, request{path: "/api/my/events/subscriptions", header: p2}).embedded(t, "subscriptions"))
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		requireProblem(t, do(t, srv, request{method: method, path: path, header: p2}), http.StatusNotFound)
	}
	requireProblem(t, do(t, srv, request{method: http.MethodPost, path: path + "/deadletters/replay", header: p2}), http.StatusNotFound)

	keyed := map[string]string{"Idempotency-Key": "sub-1"}
	for k, v := range p1 {
		keyed[k] = v
	}
	body := `{"EndPoint": "https://93.184.215.14/other"}`
	first := do(t, srv, request{method: http.MethodPost, path: "/api/my/events/subscriptions", header: keyed, body: body})
	again := do(t, srv, request{method: http.MethodPost, path: "/api/my/events/subscriptions", header: keyed, body: body})
	require.Equal(t, http.StatusCreated, first.Code, first.Body.String())
	require.Equal(t, http.StatusCreated, again.Code, again.Body.String())
	assert.Equal(t, first.json(t)["Id"], again.json(t)["Id"])
	assert.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))

	require.Equal(t, http.StatusNoContent, do(t, srv, request{method: http.MethodDelete, path: path, header: p1}).Code)
	requireProblem(t, do(t, srv, request{path: path, header: p1}), http.StatusNotFound)
	requireProblem(t, do(t, srv, request{method: http.MethodDelete, path: path, header: p1}), http.StatusNotFound)

	owner := map[string]string{"ApiKey": keyFJE, "Authorization": "Bearer " + orgToken(t, orgFJE, "platform:serviceowner/events"),
		"Content-Type": "application/json"}
	soID, soLocation, _ := subscribe(t, srv, owner, "/api/serviceowner/events/subscriptions", "https://93.184.215.14/fje", events.FormTaskStatusChanged)
	assert.Equal(t, fmt.Sprintf("/api/serviceowner/events/subscriptions/%d", soID), pathOf(t, soLocation))
	got := do(t, srv, request{path: pathOf(t, soLocation), header: owner}).json(t)
	assert.Equal(t, []any{events.FormTaskStatusChanged}, got["Types"])
	requireProblem(t, do(t, srv, request{path: "/api/my/events/subscriptions/" + strconv.FormatInt(soID, 10), header: p1}), http.StatusNotFound)
}

// Subscription secrets are sealed at rest: the table holds neither the secret nor anything of the
// Standard Webhooks form. A rotation gives a new secret, shown once; for the overlap both the new and the
// previous secret sign every delivery, so a receiver that knows either verifies. Another caller cannot
// rotate it.
func TestWebhookSecretsAreSealedAndRotate(t *testing.T) {
	srv, pool := webhookServer(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	p1 := asPerson(t, ssnP1)
	id, location, created := subscribe(t, srv, p1, "/api/my/events/subscriptions", rcv.URL)
	first := created["Secret"].(string)
	rcv.setSecret(first)
	waitForStatus(t, srv, p1, pathOf(t, location), webhook.StatusActive)

	stored := func() (secret, previous string) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT secret, COALESCE(previous_secret, '') FROM webhook_subscriptions WHERE id = $1`, id).
			Scan(&secret, &previous))
		return secret, previous
	}
	secret, previous := stored()
	assert.True(t, strings.HasPrefix(secret, "sealed:v1:demo-1:"), secret)
	assert.NotContains(t, secret, first)
	assert.NotContains(t, secret, strings.TrimPrefix(first, "whsec_"))
	assert.Empty(t, previous)
	var plaintext int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM webhook_subscriptions WHERE secret LIKE '%whsec_%' OR previous_secret LIKE '%whsec_%'`).Scan(&plaintext))
	assert.Zero(t, plaintext, "no secret in plaintext in the table")

	// Another caller does not find it; its owner rotates it.
	requireProblem(t, do(t, srv, request{method: http.MethodPost, path: pathOf(t, location) + "/secret", header: asPerson(t, ssnP2)}), http.StatusNotFound)
	r := do(t, srv, request{method: http.MethodPost, path: pathOf(t, location) + "/secret", header: p1})
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	rotated := r.json(t)
	second := rotated["Secret"].(string)
	assert.NotEqual(t, first, second)
	assert.NotEmpty(t, rotated["PreviousSecretExpires"])
	secret, previous = stored()
	for _, sealed := range []string{secret, previous} {
		assert.True(t, strings.HasPrefix(sealed, "sealed:v1:"), sealed)
		assert.NotContains(t, sealed, "whsec_")
	}
	got := do(t, srv, request{path: pathOf(t, location), header: p1}).json(t)
	assert.Nil(t, got["Secret"], "a secret is shown only in the answer that made it")

	// Both sign: the receiver verifies a delivery with the old secret, then one with the new.
	me := partyID(t, ssnP1)
	one := appendEvents(t, pool, me, events.CorrespondenceRead, 1)
	require.Equal(t, one[0].ID, rcv.waitFor(t, 1)[0].ID, "verified with the previous secret")
	rcv.setSecret(second)
	two := appendEvents(t, pool, me, events.CorrespondenceRead, 1)
	require.Equal(t, two[0].ID, rcv.waitFor(t, 2)[1].ID, "verified with the new secret")
}

// Secrets stored in plaintext (before sealing) or under an older key are sealed anew with the newest key,
// and open to what they were; a secret under a key no longer configured does not open.
func TestResealTakesSecretsToTheNewestKey(t *testing.T) {
	srv, pool := webhookServer(t)
	ctx := context.Background()
	p1 := asPerson(t, ssnP1)
	id, _, _ := subscribe(t, srv, p1, "/api/my/events/subscriptions", newReceiver(t).URL)
	legacy := webhook.NewSecret()
	_, err := pool.Exec(ctx, `UPDATE webhook_subscriptions SET secret = $2 WHERE id = $1`, id, legacy)
	require.NoError(t, err)

	newest := config.SealKey{ID: "k2", Key: bytes.Repeat([]byte{7}, 32)}
	demo := mustDemoKey(t)
	sealer, err := webhook.NewSealer([]config.SealKey{newest, demo})
	require.NoError(t, err)
	n, err := webhook.Reseal(ctx, webhook.NewStore(store.New(pool)), sealer)
	require.NoError(t, err)
	assert.Positive(t, n)
	var secret string
	require.NoError(t, pool.QueryRow(ctx, `SELECT secret FROM webhook_subscriptions WHERE id = $1`, id).Scan(&secret))
	assert.True(t, strings.HasPrefix(secret, "sealed:v1:k2:"), secret)
	opened, err := sealer.Open(secret)
	require.NoError(t, err)
	assert.Equal(t, legacy, opened)
	again, err := webhook.Reseal(ctx, webhook.NewStore(store.New(pool)), sealer)
	require.NoError(t, err)
	assert.Zero(t, again, "all are sealed with the newest key")

	_, err = webhook.DemoSealer().Open(secret)
	assert.ErrorContains(t, err, `key "k2"`, "the demo key alone does not open what k2 sealed")

	// Back to the demo key for the other tests of this database.
	n, err = webhook.Reseal(ctx, webhook.NewStore(store.New(pool)), mustSealer(t, demo, newest))
	require.NoError(t, err)
	assert.Positive(t, n)
}

func mustDemoKey(t *testing.T) config.SealKey {
	id, b64, _ := strings.Cut(config.DemoSealKey, ":")
	key, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	return config.SealKey{ID: id, Key: key}
}

func mustSealer(t *testing.T, keys ...config.SealKey) *webhook.Sealer {
	s, err := webhook.NewSealer(keys)
	require.NoError(t, err)
	return s
}
