package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Idempotent retries (IETF httpapi Idempotency-Key draft): a POST that creates, sent with an
// Idempotency-Key, keeps its first complete answer for IdempotencyTTL; a retry of the same request with
// the same key gets that answer again, with Idempotent-Replayed: true, and creates nothing.
const (
	// IdempotencyTTL is how long an answer is kept for its key.
	IdempotencyTTL = 24 * time.Hour
	// idempotencyAbandoned is how long a claim may go unrenewed before a retry takes its key: its process
	// died without releasing it. The running request renews it every idempotencyRenew, however long it
	// runs (a large upload), so a retry after a crash waits this long at most.
	idempotencyAbandoned = 30 * time.Second
	idempotencyRenew     = idempotencyAbandoned / 3
	// maxIdempotencyKey bounds a key; a key is printable ASCII (the draft's sf-string).
	maxIdempotencyKey = 255
	// maxKeptAnswer bounds a kept answer's body: the answers of creations are small; a larger one is not
	// kept, and its retry runs again.
	maxKeptAnswer = 1 << 20
)

// keptHeaders are the headers of an answer that a replay repeats.
var keptHeaders = []string{"Content-Type", "Content-Language", "Location", "ETag", "Last-Modified"}

// idempotent guards a creating route (routeGroup.create): without an Idempotency-Key it does nothing;
// with one it runs the request once per key and replays its answer to retries. It runs behind requireKey
// and authentication, since a key is kept per API key and caller.
func (s *Server) idempotent(c *gin.Context) {
	values := c.Request.Header.Values("Idempotency-Key")
	if len(values) == 0 {
		c.Next()
		return
	}
	key, err := idempotencyKey(values)
	if err != nil {
		abort(c, err)
		return
	}
	apiKey, _ := apiKeyOf(c)
	scope := store.IdempotencyScope{APIKey: apiKey.KeyHash, Caller: callerKey(principalOf(c)), Key: key}
	claim, kept, ok, err := s.q.ClaimIdempotencyKey(c.Request.Context(), scope, IdempotencyTTL, idempotencyAbandoned)
	switch {
	case err != nil:
		abort(c, err)
	case !ok && !kept.Done:
		problem.SetRetryAfter(c.Writer.Header(), time.Second)
		abort(c, problem.New(http.StatusConflict, "idempotency-key-in-use",
			"a request with this Idempotency-Key is still running; retry when it has been answered"))
	case !ok:
		s.replay(c, kept)
	default:
		s.runOnce(c, claim)
	}
}

// idempotencyKey reads the key: an sf-string ("…") as the draft writes it, or the bare value many clients
// send; 400 for more than one, an empty or over-long one, or one with other than printable ASCII.
func idempotencyKey(values []string) (string, error) {
	if len(values) > 1 {
		return "", problem.BadRequest("send one Idempotency-Key, not %d", len(values))
	}
	key := values[0]
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		unquoted, err := strconv.Unquote(key)
		if err != nil {
			return "", problem.BadRequest("the Idempotency-Key is not a valid quoted string")
		}
		key = unquoted
	}
	if key == "" || len(key) > maxIdempotencyKey {
		return "", problem.BadRequest("the Idempotency-Key must be 1 to %d characters", maxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", problem.BadRequest("the Idempotency-Key must be printable ASCII")
		}
	}
	return key, nil
}

// callerKey names the caller a key is kept for: the same person or organization however it logs in.
func callerKey(p identity.Principal) string {
	s := p.Subject()
	return fmt.Sprintf("party:%d/login:%d", s.PartyID, s.LoginID)
}

// replay answers with a kept answer, after checking that the retry is the same request.
func (s *Server) replay(c *gin.Context, kept store.IdempotentResponse) {
	// A longer body than the first is already another request: read no further than one byte past it.
	d := newRequestDigest(c.Request)
	if _, err := io.Copy(d, io.LimitReader(c.Request.Body, kept.RequestBytes+1)); err != nil {
		abort(c, err)
		return
	}
	if !bytes.Equal(d.Sum(nil), kept.RequestDigest) {
		abort(c, problem.New(http.StatusUnprocessableEntity, "idempotency-key-reused",
			"this Idempotency-Key was used for another request (method, path, query or body); use a new key for a new request"))
		return
	}
	h := c.Writer.Header()
	for name, values := range kept.Header {
		h[name] = values
	}
	h.Set("Idempotent-Replayed", "true")
	c.Writer.WriteHeader(kept.Status)
	if _, err := c.Writer.Write(kept.Body); err != nil {
		s.log.DebugContext(c.Request.Context(), "replaying a kept answer failed", "err", err, "request_id", requestID(c))
	}
	c.Abort()
}

// runOnce runs the request holding claim, and keeps its answer when it is complete: a 2xx or a 4xx the
// client cannot cure by waiting, to a body read to its end. Anything else (5xx, 408, 429, a panic, a body
// not read) gives the key up, so that a retry runs again.
func (s *Server) runOnce(c *gin.Context, claim store.IdempotencyClaim) {
	body := &digestingBody{ReadCloser: c.Request.Body, digest: newRequestDigest(c.Request), done: c.Request.ContentLength == 0}
	c.Request.Body = body
	w := &keepingWriter{ResponseWriter: c.Writer}
	c.Writer = w
	kept := false
	// Store writes below outlive a client that went away: the key must not stay claimed. Each gets its
	// own few seconds, counted when it starts, not when the request did.
	base := context.WithoutCancel(c.Request.Context())
	stopRenewing := s.renewWhileRunning(base, claim)
	defer func() {
		stopRenewing()
		c.Writer = w.ResponseWriter
		if !kept {
			ctx, cancel := context.WithTimeout(base, 5*time.Second)
			defer cancel()
			if err := s.q.ReleaseIdempotencyKey(ctx, claim); err != nil {
				s.log.WarnContext(ctx, "releasing an idempotency key failed", "err", err, "request_id", requestID(c))
			}
		}
	}()
	c.Next()
	s.renderErrors(c) // the problem of a refusal is part of the answer to keep
	status := c.Writer.Status()
	if !body.done || w.overflow || !keepable(status) {
		return
	}
	answer := store.IdempotentResponse{RequestDigest: body.digest.Sum(nil), RequestBytes: body.n, Status: status,
		Header: map[string][]string{}, Body: w.body.Bytes()}
	for _, name := range keptHeaders {
		if v := c.Writer.Header().Values(name); len(v) > 0 {
			answer.Header[name] = v
		}
	}
	ctx, cancel := context.WithTimeout(base, 5*time.Second)
	defer cancel()
	if err := s.q.CompleteIdempotencyKey(ctx, claim, answer); err != nil {
		s.log.WarnContext(ctx, "keeping an idempotent answer failed", "err", err, "request_id", requestID(c))
		return
	}
	kept = true
}

// renewWhileRunning renews claim every idempotencyRenew until the returned stop is called (and has
// waited for the last renewal, so none follows the answer being kept).
func (s *Server) renewWhileRunning(ctx context.Context, claim store.IdempotencyClaim) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(idempotencyRenew)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				rctx, cancel := context.WithTimeout(ctx, idempotencyRenew)
				if _, err := s.q.RenewIdempotencyClaim(rctx, claim); err != nil {
					s.log.WarnContext(rctx, "renewing an idempotency claim failed", "err", err)
				}
				cancel()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

func keepable(status int) bool {
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status == problem.ClientClosed:
		return false
	case status >= 200 && status < 300, status >= 400 && status < 500:
		return true
	}
	return false
}

// newRequestDigest starts the digest of a request with what names it besides its body.
func newRequestDigest(r *http.Request) hash.Hash {
	d := sha256.New()
	fmt.Fprintf(d, "%s %s?%s\n", r.Method, strings.ToLower(r.URL.Path), r.URL.RawQuery)
	return d
}

// digestingBody digests a request body as the handler reads it, so that a streamed body is never held.
type digestingBody struct {
	io.ReadCloser
	digest hash.Hash
	n      int64
	done   bool // read to its end
}

func (b *digestingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.digest.Write(p[:n])
	b.n += int64(n)
	if errors.Is(err, io.EOF) {
		b.done = true
	}
	return n, err
}

// keepingWriter keeps a copy of the answer's body, up to maxKeptAnswer.
type keepingWriter struct {
	gin.ResponseWriter
	body     bytes.Buffer
	overflow bool
}

func (w *keepingWriter) Write(p []byte) (int, error) {
	w.keep(p)
	return w.ResponseWriter.Write(p)
}

func (w *keepingWriter) WriteString(s string) (int, error) {
	w.keep([]byte(s))
	return w.ResponseWriter.WriteString(s)
}

func (w *keepingWriter) keep(p []byte) {
	if w.overflow || w.body.Len()+len(p) > maxKeptAnswer {
		w.overflow = true
		return
	}
	w.body.Write(p)
}
