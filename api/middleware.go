package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store"
)

const (
	ctxRequestID = "postbox.requestID"
	ctxLanguage  = "postbox.language"
	ctxAPIKey    = "postbox.apiKey"
	ctxBaseURL   = "postbox.baseURL"
	ctxViaProxy  = "postbox.viaProxy"
)

// saneRequestID tells whether a client's X-Request-Id is 1 to 64 of A-Z, a-z, 0-9, '.', '_' and '-' (a
// loop, not a regular expression: it runs on every request).
func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// requestID takes a sane X-Request-Id from the client or makes one, and echoes it.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if !saneRequestID(id) {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	// Every log line of the request carries it (telemetry.ContextHandler).
	c.Request = c.Request.WithContext(telemetry.WithRequestID(c.Request.Context(), id))
	c.Next()
}

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// logRequests logs one line per request. The query string is left out: it can carry identity numbers.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	if !s.log.Enabled(c.Request.Context(), slog.LevelInfo) {
		return // what the logger would do with the line, without making its attributes first
	}
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	s.log.InfoContext(c.Request.Context(), "request", "method", c.Request.Method, "route", route,
		"status", c.Writer.Status(), "duration_ms", float64(time.Since(start).Microseconds())/1000, "request_id", requestID(c))
}

// recoverPanics turns a panic into a 500 problem and logs it; the client never sees a stack trace.
func (s *Server) recoverPanics(c *gin.Context) {
	defer func() {
		if rec := recover(); rec != nil {
			if rec == http.ErrAbortHandler { // a streamed answer that broke off: the connection is cut
				if len(c.Errors) > 0 {
					s.log.WarnContext(c.Request.Context(), "a streamed answer broke off", "err", c.Errors.Last().Err,
						"request_id", requestID(c), "route", c.FullPath())
				}
				panic(rec)
			}
			s.log.ErrorContext(c.Request.Context(), "panic while serving a request", "panic", rec, "request_id", requestID(c), "route", c.FullPath())
			if !c.Writer.Written() {
				s.writeProblem(c, problem.Internal())
			}
			c.Abort()
		}
	}()
	c.Next()
}

// streamedRoutes take bodies as large as their attachment rule or room allows, and limit them themselves.
var streamedRoutes = map[string]bool{
	"/api/:who/messages/:messageId/attachments/streamedattachment": true,
	"/api/serviceowner/correspondence/attachments":                 true,
}

// limitBody refuses bodies over the limit: at once when Content-Length says so, else while reading.
func (s *Server) limitBody(c *gin.Context) {
	if streamedRoutes[c.FullPath()] {
		c.Next()
		return
	}
	if c.Request.ContentLength > s.opts.MaxBodyBytes {
		abort(c, problem.New(http.StatusRequestEntityTooLarge, "body-too-large", "the request body is larger than %d bytes", s.opts.MaxBodyBytes))
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes)
	c.Next()
}

// Languages the interface has texts in: bokmål, nynorsk and English.
var languages = []int{1044, 2068, 1033}

// language checks the optional `language` query parameter everywhere; handlers read it with languageOf.
func (s *Server) language(c *gin.Context) {
	if v, ok := c.GetQuery("language"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || !slices.Contains(languages, n) {
			abort(c, problem.New(http.StatusBadRequest, "invalid-language", "language %q is not one of 1044 (bokmål), 2068 (nynorsk), 1033 (English)", v))
			return
		}
		c.Set(ctxLanguage, n)
	}
	c.Next()
}

// languageOf returns the requested language id, or 0 when none was asked for.
func languageOf(c *gin.Context) int { return c.GetInt(ctxLanguage) }

// apiKeyOf returns the verified API key of the request; only set behind requireKey.
func apiKeyOf(c *gin.Context) (store.APIKey, bool) {
	k, ok := c.Get(ctxAPIKey)
	if !ok {
		return store.APIKey{}, false
	}
	return k.(store.APIKey), true
}

// requireKey admits requests whose ApiKey header holds a registered key limited to area, and answers
// CORS for the origins registered on that key.
func (s *Server) requireKey(area string) gin.HandlerFunc {
	return func(c *gin.Context) {
		raw := c.GetHeader("ApiKey")
		if raw == "" {
			abort(c, problem.New(http.StatusUnauthorized, "missing-api-key", "the ApiKey header is required"))
			return
		}
		key, err := s.keys.Find(c.Request.Context(), raw)
		if errors.Is(err, store.ErrNotFound) {
			abort(c, problem.New(http.StatusUnauthorized, "invalid-api-key", "the API key is not registered"))
			return
		}
		if err != nil {
			abort(c, err)
			return
		}
		if slices.Contains(key.Origins, c.GetHeader("Origin")) {
			allowOrigin(c.Writer.Header(), c.GetHeader("Origin"))
		}
		if !slices.Contains(key.Areas, area) {
			abort(c, problem.New(http.StatusForbidden, "api-key-area", "the API key is not registered for the %s area", area))
			return
		}
		c.Set(ctxAPIKey, key)
		s.limitRate(c, key, area)
	}
}

// openCORS answers CORS on the open areas (metadata, authentication) for any origin registered on any key.
func (s *Server) openCORS(c *gin.Context) {
	if origin := c.GetHeader("Origin"); origin != "" {
		ok, err := s.keys.OriginRegistered(c.Request.Context(), origin)
		if err != nil {
			abort(c, err)
			return
		}
		if ok {
			allowOrigin(c.Writer.Header(), origin)
		}
	}
	c.Next()
}

func allowOrigin(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Expose-Headers", "Location, X-Request-Id, Retry-After, ETag, Idempotent-Replayed, RateLimit, RateLimit-Policy")
	h.Add("Vary", "Origin")
}

// preflight answers a CORS preflight. Browsers send no ApiKey with it, so any origin registered on some
// key is allowed here; the real request is then held to the origins of its own key.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	w.Header().Add("Vary", "Origin")
	if origin != "" {
		ok, err := s.keys.OriginRegistered(r.Context(), origin)
		if err != nil {
			s.log.ErrorContext(r.Context(), "preflight failed", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if ok {
			allowOrigin(w.Header(), origin)
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "ApiKey, Authorization, Content-Type, Accept, X-Request-Id, Idempotency-Key, If-Match, If-None-Match")
			w.Header().Set("Access-Control-Max-Age", "600")
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

var hostPattern = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)

// lastHost is the last host validHost passed: nearly every request names the same one, and the regular
// expression was a percent of a request.
var lastHost atomic.Pointer[string]

// validHost tells whether h is a host name or address with an optional port (hostPattern).
func validHost(h string) bool {
	if last := lastHost.Load(); last != nil && *last == h {
		return true
	}
	if !hostPattern.MatchString(h) {
		return false
	}
	lastHost.Store(&h)
	return true
}

// trustProxy marks requests whose links follow X-Forwarded-Proto and X-Forwarded-Host (Options.TrustProxy).
func (s *Server) trustProxy(c *gin.Context) {
	if s.opts.TrustProxy {
		c.Set(ctxViaProxy, true)
	}
	c.Next()
}

// baseURL is the absolute address links are built from: the request's own, or the proxy's when trusted.
// It is worked out once per request.
func baseURL(c *gin.Context) string {
	if base := c.GetString(ctxBaseURL); base != "" {
		return base
	}
	base := requestBase(c)
	c.Set(ctxBaseURL, base)
	return base
}

func requestBase(c *gin.Context) string {
	scheme, host := "http", c.Request.Host
	if c.Request.TLS != nil {
		scheme = "https"
	}
	if c.GetBool(ctxViaProxy) {
		if p := strings.ToLower(strings.TrimSpace(strings.Split(c.GetHeader("X-Forwarded-Proto"), ",")[0])); p == "http" || p == "https" {
			scheme = p
		}
		if h := strings.TrimSpace(strings.Split(c.GetHeader("X-Forwarded-Host"), ",")[0]); validHost(h) {
			host = h
		}
	}
	if !validHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host
}

// errorsToProblems renders, once the rest of the chain has run, the first error a middleware or handler
// recorded with c.Error as a problem, and logs the cause of server errors with the request id.
func (s *Server) errorsToProblems(c *gin.Context) {
	c.Next()
	s.renderErrors(c)
}

// renderErrors writes the problem of the first recorded error, unless an answer was written.
func (s *Server) renderErrors(c *gin.Context) {
	if len(c.Errors) == 0 || c.Writer.Written() {
		return
	}
	err := c.Errors[0].Err
	p, internal := problem.From(err)
	if after, ok := problem.RetryAfter(err); ok {
		problem.SetRetryAfter(c.Writer.Header(), after)
	}
	if p.Status == http.StatusRequestTimeout {
		c.Header("Connection", "close") // what is left of a slow body is not worth waiting for
	}
	if p.Status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", challenge(p.Type))
	}
	switch {
	case internal:
		s.log.ErrorContext(c.Request.Context(), "request failed", "err", err, "request_id", requestID(c),
			"method", c.Request.Method, "route", c.FullPath())
	case store.IsUnavailable(err):
		s.log.WarnContext(c.Request.Context(), "request failed: database unavailable", "err", err, "request_id", requestID(c),
			"method", c.Request.Method, "route", c.FullPath())
	default:
		s.log.DebugContext(c.Request.Context(), "request refused", "status", p.Status, "detail", p.Detail, "request_id", requestID(c))
	}
	s.writeProblem(c, p)
}

func (s *Server) writeProblem(c *gin.Context, p *problem.Problem) {
	if p.Instance == "" {
		p.Instance = c.Request.URL.Path
	}
	status := p.Status
	if status == problem.ClientClosed { // nobody is listening
		c.Status(status)
		return
	}
	if render.WantsXML(c) {
		c.Header("Content-Type", "application/problem+xml; charset=utf-8")
		c.Status(status)
		if err := render.WritePlainXML(c.Writer, "problem", problem.Namespace, p); err != nil {
			slog.Default().ErrorContext(c.Request.Context(), "writing a problem failed", "err", err)
		}
		return
	}
	c.Header("Content-Type", "application/problem+json; charset=utf-8")
	c.JSON(status, p)
}

// negotiate picks the response media type from Accept, or answers 406 when none of ours is acceptable.
func (s *Server) negotiate(c *gin.Context) { negotiateOf(c, render.MediaTypes) }

// negotiateOf picks the response's media type among those offered, or answers 406 naming them.
func negotiateOf(c *gin.Context, offered []string) {
	mt, ok := render.PickMediaTypeOf(c.GetHeader("Accept"), offered)
	if !ok {
		abort(c, problem.New(http.StatusNotAcceptable, "not-acceptable", "this resource is available as %s", strings.Join(offered, ", ")))
		return
	}
	render.SetFormat(c, mt)
	c.Next()
}

// respond writes v in the negotiated media type.
func respond(c *gin.Context, status int, v any) {
	if err := render.Write(c, status, v); err != nil {
		abort(c, err)
	}
}

// found tells whether a lookup succeeded; if not, it ends the request: a missing row with the problem
// missing makes (naming what the client asked for), any other error through the problem mapper.
func found(c *gin.Context, err error, missing func() *problem.Problem) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, store.ErrNotFound):
		abort(c, missing())
	default:
		abort(c, err)
	}
	return false
}

// abort ends the request with err rendered as a problem.
func abort(c *gin.Context, err error) {
	_ = c.Error(err)
	c.Abort()
}

// challenge is the WWW-Authenticate of a 401 (RFC 9110 §11.6.1): the API key's own scheme when the key is
// missing or unknown, else the logins a client can retry with (a bearer token, RFC 6750, marked
// invalid_token when one was sent and refused; a session cookie from the password login).
func challenge(problemType string) string {
	switch problemType {
	case problem.TypeURI("missing-api-key"), problem.TypeURI("invalid-api-key"):
		return `ApiKey realm="postbox", header="ApiKey"`
	}
	return `Bearer realm="postbox", Cookie realm="postbox", cookie-name="` + sessionCookie + `"`
}
