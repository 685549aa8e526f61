package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The integrator: person P1 of the demo dataset fills in and signs form tasks of service 4711/2 for
// organization O1, with the all-areas key.
const (
	apiKey        = "9D4E2680-50AB-47FB-A1E6-6AB8106A0FB6"
	integratorPID = "12857812326"
	reportee      = "310123455"
	statusSigning = "Signering"
	statusArchive = "Sendt og arkivert"
)

// task is one form task as its client saw it.
type task struct {
	index    int
	id       string // message id, once the creation was answered
	formData string // the form data sent, which must be stored byte for byte
	refs     map[string]bool
	signFrom time.Time // when the client began asking for the signature
	done     time.Time // when the client learned that the task is archived
	failure  string    // why the client gave up, if it did
}

// answer is one HTTP exchange the suite counts: its status, or the transport error in its place.
type answer struct {
	status    int
	transport string // "timeout", "connection" when no answer came
	retry     bool   // Retry-After was present
	noted     bool   // already counted as unexpected
	endpoint  string
	requestID string
	body      string
}

// stats collects what every client saw.
type stats struct {
	mu        sync.Mutex
	byStatus  map[int]int
	transport map[string]int
	bad5xx    []answer // 5xx answers that are not 503 with Retry-After
	odd       []answer // answers the flow did not expect (the task carried on)
}

func newStats() *stats {
	return &stats{byStatus: map[int]int{}, transport: map[string]int{}}
}

func (s *stats) record(a answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.transport != "" {
		s.transport[a.transport]++
		return
	}
	s.byStatus[a.status]++
	if a.status >= 500 && (a.status != http.StatusServiceUnavailable || !a.retry) {
		s.bad5xx = append(s.bad5xx, a)
	}
}

func (s *stats) unexpected(a answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.odd = append(s.odd, a)
}

// integrator submits form tasks through the REST API as a careful client does: every call that got no
// answer, a 503 or a 5xx is repeated after Retry-After or a growing, jittered pause.
type integrator struct {
	base   string
	token  string
	http   *http.Client
	stats  *stats
	rng    *rand.Rand
	giveUp time.Time // no task step is retried past this
	// readsFirst makes the client, after an answer lost to a fault, read the task before it repeats the
	// fill-in and go on from where the task is: a task already in Signering is signed as it is. A fill-in
	// whose Update Temporal lost after its projection committed is then signed against a workflow still in
	// Utfylling, which formtask resyncs (formtask.UpdateResync). The other clients repeat the step blindly.
	readsFirst bool
}

// response is what a call returned: the status and the JSON body.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) field(name string) string {
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	s, _ := m[name].(string)
	return s
}

// call sends one request and records its answer.
func (in *integrator) call(ctx context.Context, method, url, endpoint string, body []byte) (response, answer) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		panic(err) // the suite builds every URL itself
	}
	req.Header.Set("ApiKey", apiKey)
	req.Header.Set("Authorization", "Bearer "+in.token)
	req.Header.Set("Accept", "application/hal+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/hal+json")
	}
	a := answer{endpoint: method + " " + endpoint}
	res, err := in.http.Do(req)
	if err != nil {
		a.transport = "connection"
		var timeout interface{ Timeout() bool }
		if errors.As(err, &timeout) && timeout.Timeout() {
			a.transport = "timeout"
		}
		in.stats.record(a)
		return response{}, a
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.transport = "connection" // the answer broke off
		in.stats.record(a)
		return response{}, a
	}
	a.status, a.retry = res.StatusCode, res.Header.Get("Retry-After") != ""
	a.requestID, a.body = res.Header.Get("X-Request-Id"), string(b)
	in.stats.record(a)
	return response{status: res.StatusCode, header: res.Header, body: b}, a
}

// pause waits before a retry: Retry-After when the server gave one, else an exponential backoff from
// 200 ms to 5 s with jitter.
func (in *integrator) pause(ctx context.Context, attempt int, r response) {
	d := min(200*time.Millisecond<<min(attempt, 5), 5*time.Second)
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err == nil && s > 0 {
		d = time.Duration(s) * time.Second
	}
	d = d/2 + time.Duration(in.rng.Int64N(int64(d)))
	sleep(ctx, d)
}

// transient tells whether an answer is worth repeating the same request for.
func transient(a answer) bool {
	return a.transport != "" || a.status >= 500
}

// run takes the task through its life: create, fill in and send to signing, sign. It returns when the
// task is archived or the client gives up.
func (in *integrator) run(ctx context.Context, t *task) {
	t.refs = map[string]bool{}
	if err := in.create(ctx, t); err != nil {
		t.failure = err.Error()
		return
	}
	if err := in.fill(ctx, t); err != nil {
		t.failure = err.Error()
		return
	}
	t.signFrom = time.Now()
	if err := in.sign(ctx, t); err != nil {
		t.failure = err.Error()
		return
	}
	t.done = time.Now()
}

func (in *integrator) messagesURL() string { return in.base + "/api/" + reportee + "/messages" }

// step repeats attempt until it reports the step done or fails, pausing between attempts.
func (in *integrator) step(ctx context.Context, name string, attempt func() (done bool, r response, a answer, err error)) error {
	for n := 0; ; n++ {
		done, r, a, err := attempt()
		if done || err != nil {
			return err
		}
		if err := in.again(ctx, a, name); err != nil {
			return err
		}
		in.pause(ctx, n, r)
	}
}

// create is POST .../messages. A creation whose answer was lost leaves a task the client never learns of:
// the suite counts those as orphans.
func (in *integrator) create(ctx context.Context, t *task) error {
	body := []byte(`{"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2}`)
	return in.step(ctx, "create", func() (bool, response, answer, error) {
		r, a := in.call(ctx, http.MethodPost, in.messagesURL(), "/api/{who}/messages", body)
		if r.status != http.StatusCreated {
			return false, r, a, nil
		}
		loc := r.header.Get("Location")
		t.id = loc[strings.LastIndex(loc, "/")+1:]
		return true, r, a, nil
	})
}

// fill is PUT ?sign=false with the form data: the task goes to Signering. A 409 after a lost answer
// means the earlier PUT went through, which a GET confirms.
func (in *integrator) fill(ctx context.Context, t *task) error {
	body, err := json.Marshal(map[string]any{"Type": "FormTask", "ServiceCode": "4711", "ServiceEdition": 2,
		"_embedded": map[string]any{"forms": []map[string]any{{"Type": "MainForm", "DataFormatId": "3106",
			"DataFormatVersion": "21845", "FormData": t.formData}}}})
	if err != nil {
		return err
	}
	faulted := false
	return in.step(ctx, "fill in", func() (bool, response, answer, error) {
		if in.readsFirst && faulted {
			status, err := in.status(ctx, t)
			if err != nil || status == statusSigning {
				return err == nil, response{}, answer{}, err
			}
		}
		r, a := in.call(ctx, http.MethodPut, in.messagesURL()+"/"+t.id+"?sign=false", "/api/{who}/messages/{id}?sign=false", body)
		faulted = transient(a)
		return in.reached(ctx, t, r, statusSigning, a)
	})
}

// sign is PUT without a body on the task in Signering: it is signed and archived. A 409 after a lost
// answer means it is archived already; the GET tells its ArchiveReference.
func (in *integrator) sign(ctx context.Context, t *task) error {
	return in.step(ctx, "sign", func() (bool, response, answer, error) {
		r, a := in.call(ctx, http.MethodPut, in.messagesURL()+"/"+t.id, "/api/{who}/messages/{id}", nil)
		return in.reached(ctx, t, r, statusArchive, a)
	})
}

// reached tells whether a PUT's answer r shows the task in status want: a 200 that says so, or the 409
// of a repeated PUT whose step went through, whose members say so (taskStatus, and archiveReference once
// archived). Other refusals are noted as unexpected, and a GET tells where the task is.
func (in *integrator) reached(ctx context.Context, t *task, r response, want string, a answer) (bool, response, answer, error) {
	switch r.status {
	case http.StatusOK:
		if ref := r.field("ArchiveReference"); ref != "" {
			t.refs[ref] = true
		}
		return r.field("Status") == want, r, a, nil
	case http.StatusConflict:
		if ref := r.field("archiveReference"); ref != "" {
			t.refs[ref] = true
		}
		if r.field("taskStatus") == want && (want != statusArchive || r.field("archiveReference") != "") {
			return true, r, a, nil
		}
		fallthrough
	case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound:
		in.stats.unexpected(a)
		a.noted = true
		status, err := in.status(ctx, t)
		return status == want, r, a, err
	}
	return false, r, a, nil
}

// status GETs the task (repeating the GET like every call) and returns its status, noting its
// ArchiveReference.
func (in *integrator) status(ctx context.Context, t *task) (status string, err error) {
	err = in.step(ctx, "read", func() (bool, response, answer, error) {
		r, a := in.call(ctx, http.MethodGet, in.messagesURL()+"/"+t.id, "/api/{who}/messages/{id}", nil)
		if r.status != http.StatusOK {
			return false, r, a, nil
		}
		if ref := r.field("ArchiveReference"); ref != "" {
			t.refs[ref] = true
		}
		status = r.field("Status")
		return true, r, a, nil
	})
	return status, err
}

// again decides after an answer that did not move the task whether to repeat the step: every answer is
// repeated until giveUp, as the state may move under a lost answer; those that are not transient are
// noted as unexpected.
func (in *integrator) again(ctx context.Context, a answer, step string) error {
	if ctx.Err() != nil || time.Now().After(in.giveUp) {
		return fmt.Errorf("%s: gave up; last answer %s", step, describe(a))
	}
	if !transient(a) && !a.noted {
		in.stats.unexpected(a)
	}
	return nil
}

func describe(a answer) string {
	if a.transport != "" {
		return a.endpoint + ": " + a.transport
	}
	return fmt.Sprintf("%s: %d %s", a.endpoint, a.status, truncate(a.body, 300))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// formData is the main form of task i: valid against the form's schema, different for every task, with
// non-ASCII text and an escaped ampersand so that byte-equality means something.
func formData(rng *rand.Rand, i int) string {
	return fmt.Sprintf(`<Skjema dataFormatProvider="SERES" dataFormatId="3106" dataFormatVersion="21845">`+
		`<Innsender><Organisasjonsnummer>310123455</Organisasjonsnummer><Navn>Fjellheim Maskin AS</Navn></Innsender>`+
		`<Kontaktperson><Navn>Åse Ødegård &amp; Co %d</Navn><Telefon>+4740000001</Telefon></Kontaktperson>`+
		`<Regnskapsaar>2024</Regnskapsaar><Omsetning>%d</Omsetning><AntallAnsatte>%d</AntallAnsatte>`+
		`<Naeringstype>IND</Naeringstype><HarRevisor>false</HarRevisor><Fristdato>2025-05-31</Fristdato></Skjema>`,
		i, rng.IntN(900_000_000)+1000, i)
}
