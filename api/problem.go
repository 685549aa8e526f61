package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// Problem is an RFC 9457 problem detail, the one shape of every error response.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Errors   any    `json:"errors,omitempty" xmlitem:"error"`
	// TaskStatus and ArchiveReference are the state of the form task a change was refused on (409): a
	// client that repeats a submission learns from them that, and how, it went through.
	TaskStatus       string `json:"taskStatus,omitempty"`
	ArchiveReference string `json:"archiveReference,omitempty"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// RetryableProblem is a problem the client may retry after a while; it is answered with Retry-After.
type RetryableProblem struct {
	*Problem
	After time.Duration
}

func (p *RetryableProblem) Unwrap() error { return p.Problem }

const problemNamespace = "urn:ietf:rfc:7807"

// problem builds a Problem of a kind; the kind becomes the type URI and names the problem for clients.
func problem(status int, kind, format string, args ...any) *Problem {
	typ := "about:blank"
	if kind != "" {
		typ = "urn:postbox:problem:" + kind
	}
	return &Problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: fmt.Sprintf(format, args...)}
}

// unavailableRetryAfter is how long a client is asked to wait when the database cannot serve: about the time
// PostgreSQL takes to restart or a pool to reconnect.
const unavailableRetryAfter = 5 * time.Second

// databaseUnavailable is the answer while the database is down, starting up, out of connections or
// aborted a conflicting transaction: neither the client's fault nor a bug, so the client may retry.
func databaseUnavailable() *Problem {
	return problem(http.StatusServiceUnavailable, "database-unavailable", "the database cannot serve requests right now; try again shortly")
}

// retryAfter is how long the client should wait before it repeats a request that failed with err, when
// repeating it may succeed.
func retryAfter(err error) (time.Duration, bool) {
	var (
		retry   *RetryableProblem
		refused *formtask.Error
	)
	switch {
	case errors.As(err, &retry):
		return retry.After, true
	case errors.As(err, &refused) && refused.Kind == formtask.Unavailable:
		return formtask.RetryAfter, true
	case store.IsUnavailable(err):
		return unavailableRetryAfter, true
	}
	return 0, false
}

// setRetryAfter tells the client to wait d (whole seconds, at least one) before it repeats the request.
func setRetryAfter(c *gin.Context, d time.Duration) {
	c.Header("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}

func badRequest(format string, args ...any) *Problem {
	return problem(http.StatusBadRequest, "bad-request", format, args...)
}

func notFound(format string, args ...any) *Problem {
	return problem(http.StatusNotFound, "not-found", format, args...)
}

// toProblem maps an error to what the client is told. A database that cannot serve is a 503 on every
// endpoint; other errors that are not the client's doing become a bare 500. Causes are logged, never returned.
func toProblem(err error) (p *Problem, internal bool) {
	var (
		prob     *Problem
		syntax   *odata.SyntaxError
		param    *odata.ParamError
		unknown  *odatasql.UnknownFieldError
		mismatch *odatasql.TypeError
		maxBytes *http.MaxBytesError
		refused  *formtask.Error
	)
	switch {
	case errors.As(err, &prob):
		return prob, false
	case errors.As(err, &refused):
		return formTaskProblem(refused), false
	case errors.As(err, &syntax):
		return problem(http.StatusBadRequest, "invalid-query", "%s: %s", syntax.Option, syntax.Error()), false
	case errors.As(err, &param):
		return problem(http.StatusBadRequest, "invalid-query", "%s", param.Error()), false
	case errors.As(err, &unknown):
		return problem(http.StatusBadRequest, "invalid-query", "%s", unknown.Error()), false
	case errors.As(err, &mismatch):
		return problem(http.StatusBadRequest, "invalid-query", "%s", mismatch.Error()), false
	case errors.As(err, &maxBytes):
		return problem(http.StatusRequestEntityTooLarge, "body-too-large", "the request body is larger than %d bytes", maxBytes.Limit), false
	case errors.Is(err, store.ErrNotFound):
		return notFound("the resource does not exist"), false
	case store.IsUnavailable(err):
		return databaseUnavailable(), false
	case errors.Is(err, context.Canceled):
		return problem(499, "", "the client closed the request"), false
	}
	return problem(http.StatusInternalServerError, "", "the server could not complete the request; it has been logged"), true
}

// formTaskKinds are the problems of refused form-task changes.
var formTaskKinds = map[formtask.Kind]struct {
	status int
	kind   string
}{
	formtask.BadInput:            {http.StatusBadRequest, "bad-request"},
	formtask.Invalid:             {http.StatusBadRequest, "validation-failed"},
	formtask.Forbidden:           {http.StatusForbidden, "forbidden"},
	formtask.SignRefused:         {http.StatusForbidden, "sign-refused"},
	formtask.NotFound:            {http.StatusNotFound, "not-found"},
	formtask.Conflict:            {http.StatusConflict, "conflict"},
	formtask.TooLarge:            {http.StatusRequestEntityTooLarge, "attachment-too-large"},
	formtask.UnsupportedFileType: {http.StatusUnsupportedMediaType, "file-type-not-allowed"},
	formtask.Unavailable:         {http.StatusServiceUnavailable, "temporal-unavailable"},
}

func formTaskProblem(e *formtask.Error) *Problem {
	k, ok := formTaskKinds[e.Kind]
	if !ok {
		k.status = http.StatusInternalServerError
	}
	p := problem(k.status, k.kind, "%s", e.Detail)
	p.TaskStatus, p.ArchiveReference = e.Status, e.ArchiveReference
	if e.Validation != nil {
		p.Errors = e.Validation.ValidationErrors
	}
	return p
}

// errorsToProblems renders, once the rest of the chain has run, the first error a middleware or handler
// recorded with c.Error as a problem, and logs the cause of server errors with the request id.
func (s *Server) errorsToProblems(c *gin.Context) {
	c.Next()
	if len(c.Errors) == 0 || c.Writer.Written() {
		return
	}
	err := c.Errors[0].Err
	p, internal := toProblem(err)
	if after, ok := retryAfter(err); ok {
		setRetryAfter(c, after)
	}
	if p.Status == http.StatusRequestTimeout {
		c.Header("Connection", "close") // what is left of a slow body is not worth waiting for
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

func (s *Server) writeProblem(c *gin.Context, p *Problem) {
	if p.Instance == "" {
		p.Instance = c.Request.URL.Path
	}
	status := p.Status
	if status == 499 { // nobody is listening
		c.Status(status)
		return
	}
	if wantsXML(c) {
		c.Header("Content-Type", "application/problem+xml; charset=utf-8")
		c.Status(status)
		if err := writePlainXML(c.Writer, "problem", problemNamespace, p); err != nil {
			slog.Default().ErrorContext(c.Request.Context(), "writing a problem failed", "err", err)
		}
		return
	}
	c.Header("Content-Type", "application/problem+json; charset=utf-8")
	c.JSON(status, p)
}

// abort ends the request with err rendered as a problem.
func abort(c *gin.Context, err error) {
	_ = c.Error(err)
	c.Abort()
}
