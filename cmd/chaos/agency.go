package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The agency's part: Fjordetaten, the owner of 4711, drains its download queue while the integrators submit
// and the components crash, as an agency's integration does: every part downloaded (one by one and as the
// ZIP) and checked against the digests the queue lists, then confirmed. After the run it drains what is
// left, and the checks demand every archive of the run in the queue once, confirmed exactly once, with the
// form data the filler sent.

const (
	agencyKey   = "2657029B-D422-4B56-A884-58A8056BD663" // FJE's API key in the demo dataset
	agencyOrg   = "310900028"
	agencyScope = "platform:serviceowner/submissions.read platform:serviceowner/submissions.write"
)

type agency struct {
	base, token string
	http        *http.Client
	stats       *stats

	mu       sync.Mutex
	formSHA  map[string]string // ArchiveReference → SHA-256 of the form data it downloaded, once confirmed
	problems []string
}

// queueEntry is what the agency reads of a submission in the queue.
type queueEntry struct {
	ArchiveReference string
	Forms            []struct{ SHA256 string }
	Print            struct{ SHA256 string }
	Links            map[string]json.RawMessage `json:"_links"`
}

func (a *agency) fail(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.problems = append(a.problems, fmt.Sprintf(format, args...))
}

// send sends one request of the agency and records its answer with the integrators'.
func (a *agency) send(ctx context.Context, method, path, accept string) (int, []byte, error) {
	return ownerRequest(ctx, a.http, a.stats, a.token, method, a.base+path, path, map[string]string{"Accept": accept}, nil)
}

// ownerRequest sends one request of Fjordetaten (its API key and token, and header) to url and records
// its answer, as endpoint, with the integrators'.
func ownerRequest(ctx context.Context, hc *http.Client, st *stats, token, method, url, endpoint string, header map[string]string,
	body io.Reader) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("ApiKey", agencyKey)
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	ans := answer{endpoint: method + " " + endpoint}
	res, err := hc.Do(req)
	if err != nil {
		ans.transport = "connection"
		st.record(ans)
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		ans.transport = "connection"
		st.record(ans)
		return 0, nil, err
	}
	ans.status, ans.retry, ans.body = res.StatusCode, res.Header.Get("Retry-After") != "", string(b)
	st.record(ans)
	return res.StatusCode, b, nil
}

// errTransient is a fault of the run (no answer, a 503): the submission is tried again on the next round.
var errTransient = errors.New("transient")

func (a *agency) call(ctx context.Context, method, path, accept string) ([]byte, error) {
	status, body, err := a.send(ctx, method, path, accept)
	switch {
	case err != nil || status >= 500:
		return nil, errTransient
	case status != http.StatusOK:
		return nil, fmt.Errorf("%s %s: %d %s", method, path, status, body)
	}
	return body, nil
}

// loop drains the queue every half second until the integrators are done.
func (a *agency) loop(ctx context.Context, clientsDone <-chan struct{}) {
	for {
		_, _ = a.drainOnce(ctx)
		select {
		case <-clientsDone:
			return
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// drain drains the queue until it is empty (or the deadline passes).
func (a *agency) drain(ctx context.Context, deadline time.Time) {
	for time.Now().Before(deadline) && ctx.Err() == nil {
		n, err := a.drainOnce(ctx)
		if n == 0 && err == nil {
			return
		}
		sleep(ctx, 200*time.Millisecond)
	}
	a.fail("agency: the queue was not drained before the deadline")
}

// drainOnce receives the first page of the unconfirmed queue and returns how long it was.
func (a *agency) drainOnce(ctx context.Context) (int, error) {
	body, err := a.call(ctx, http.MethodGet, "/api/serviceowner/submissions?serviceCode=4711", "application/hal+json")
	if err != nil {
		if !errors.Is(err, errTransient) {
			a.fail("agency: %v", err)
		}
		return 0, err
	}
	var page struct {
		Embedded struct{ Submissions []queueEntry } `json:"_embedded"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		a.fail("agency: the queue: %v", err)
		return 0, err
	}
	for _, s := range page.Embedded.Submissions {
		if err := a.receive(ctx, s); err != nil && !errors.Is(err, errTransient) {
			a.fail("agency: %s: %v", s.ArchiveReference, err)
		}
	}
	return len(page.Embedded.Submissions), nil
}

// receive downloads every part of s, checks it and confirms s.
func (a *agency) receive(ctx context.Context, s queueEntry) error {
	self := "/api/serviceowner/submissions/" + s.ArchiveReference
	if len(s.Forms) != 1 {
		return fmt.Errorf("%d forms, the run sends one", len(s.Forms))
	}
	var formLinks []struct{ Href string }
	if err := json.Unmarshal(s.Links["formdata"], &formLinks); err != nil || len(formLinks) != 1 {
		return fmt.Errorf("no formdata link: %v", err)
	}
	form, err := a.call(ctx, http.MethodGet, pathOf(formLinks[0].Href), "application/xml")
	if err != nil {
		return err
	}
	if got := hexSHA(form); got != s.Forms[0].SHA256 {
		return fmt.Errorf("form data has SHA-256 %s, the queue lists %s", got, s.Forms[0].SHA256)
	}
	pdf, err := a.call(ctx, http.MethodGet, self+"/print", "application/pdf")
	if err != nil {
		return err
	}
	if got := hexSHA(pdf); got != s.Print.SHA256 {
		return fmt.Errorf("print has SHA-256 %s, the queue lists %s", got, s.Print.SHA256)
	}
	z, err := a.call(ctx, http.MethodGet, self, "application/zip")
	if err != nil {
		return err
	}
	if err := checkZIP(z, hexSHA(form)); err != nil {
		return err
	}
	// What was received is recorded before the confirmation: a confirmation that commits and loses its
	// answer takes the submission off the queue, and it would not be downloaded again.
	a.mu.Lock()
	a.formSHA[s.ArchiveReference] = hexSHA(form)
	a.mu.Unlock()
	_, err = a.call(ctx, http.MethodPut, self+"/confirm", "application/hal+json")
	return err
}

// checkZIP checks that every entry of a submission's ZIP has the digest its manifest lists, and that the
// form in it is formSHA's.
func checkZIP(b []byte, formSHA string) error {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("the ZIP: %w", err)
	}
	entries := map[string]string{}
	var manifest struct {
		Parts []struct{ Path, Kind, SHA256 string }
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("the ZIP's %s: %w", f.Name, err)
		}
		if f.Name == "manifest.json" {
			if err := json.Unmarshal(data, &manifest); err != nil {
				return err
			}
			continue
		}
		entries[f.Name] = hexSHA(data)
	}
	if len(manifest.Parts) != len(entries) {
		return fmt.Errorf("the ZIP has %d parts, its manifest lists %d", len(entries), len(manifest.Parts))
	}
	for _, p := range manifest.Parts {
		if entries[p.Path] != p.SHA256 {
			return fmt.Errorf("the ZIP's %s has SHA-256 %s, its manifest lists %s", p.Path, entries[p.Path], p.SHA256)
		}
		if p.Kind == "Form" && p.SHA256 != formSHA {
			return fmt.Errorf("the ZIP's form differs from the one downloaded alone")
		}
	}
	return nil
}

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// pathOf is the path and query of an absolute link.
func pathOf(href string) string {
	for i := len("https://"); i < len(href); i++ {
		if href[i] == '/' {
			return href[i:]
		}
	}
	return href
}

// check demands of every archived task of the run: in the queue once, confirmed exactly once (one Confirm
// line in its log), downloaded by the agency with the form data its filler sent; and no queue entry
// without its archive.
func (a *agency) check(ctx context.Context, db *pgx.Conn, tasks []*task, v *verdict) error {
	for _, p := range a.problems {
		v.fail("%s", p)
	}
	received := 0
	for _, t := range tasks {
		if t.id == "" {
			continue
		}
		var ref *string
		var entries, confirms int
		err := db.QueryRow(ctx, `SELECT a.archive_reference,
				(SELECT count(*) FROM submissions s WHERE s.message_id = a.message_id),
				(SELECT count(*) FROM submission_log l WHERE l.archive_reference = a.archive_reference AND l.action = 'Confirm')
			FROM archives a WHERE a.message_id = $1`, t.id).Scan(&ref, &entries, &confirms)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // not archived: checkDatabase reports it
		}
		if err != nil {
			return err
		}
		switch {
		case entries != 1:
			v.fail("agency: %s (task %d) is in the queue %d times", *ref, t.index, entries)
		case confirms != 1:
			v.fail("agency: %s (task %d) was confirmed %d times", *ref, t.index, confirms)
		case a.formSHA[*ref] != hexSHA([]byte(t.formData)):
			v.fail("agency: %s (task %d): the form data received differs from what its filler sent", *ref, t.index)
		default:
			received++
		}
	}
	var orphans int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM submissions s
		WHERE NOT EXISTS (SELECT 1 FROM archives a WHERE a.archive_reference = s.archive_reference)`).Scan(&orphans); err != nil {
		return err
	}
	if orphans > 0 {
		v.fail("agency: %d queue entries without their archive", orphans)
	}
	v.received = received
	return nil
}
