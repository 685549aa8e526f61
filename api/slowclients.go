package api

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
)

// ClientLimits bound what a slow client can hold. The http.Server bounds the headers (ReadHeaderTimeout)
// and idle connections (IdleTimeout); these bound what comes after, per request and by progress rather
// than by a total time, so that a large attachment streamed at a fair pace is never cut off.
type ClientLimits struct {
	// ProgressWindow and ProgressMinBytes: a request body must bring at least ProgressMinBytes in every
	// ProgressWindow, or the request fails with 408; a response must be taken at the same pace, or the
	// connection is closed. Zero turns both off.
	ProgressWindow   time.Duration
	ProgressMinBytes int64
	// MaxHeaderBytes limits the request line and headers: larger ones get 431 as a problem document. The
	// http.Server's own limit (ServerMaxHeaderBytes) is set above it, since net/http answers its own
	// limit in plain text. Zero turns the check off.
	MaxHeaderBytes int64
}

// ServerMaxHeaderBytes is the http.Server.MaxHeaderBytes to serve with: well above MaxHeaderBytes, so
// that headers past the limit reach the API and get a problem, while the server still refuses a flood.
func (l ClientLimits) ServerMaxHeaderBytes() int {
	if l.MaxHeaderBytes <= 0 {
		return http.DefaultMaxHeaderBytes
	}
	return int(4 * l.MaxHeaderBytes)
}

// Wrap applies the progress rules to every request of next: the one body wrapper and the one response
// writer wrapper, both working through http.ResponseController deadlines on the connection. A writer
// without deadlines (a test recorder) is served unchanged.
func (l ClientLimits) Wrap(next http.Handler) http.Handler {
	if l.ProgressWindow <= 0 || l.ProgressMinBytes <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctl := http.NewResponseController(w)
		// A deadline a previous request left on the connection must not cut this one short.
		if err := ctl.SetWriteDeadline(time.Time{}); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		var body *progressBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &progressBody{ReadCloser: r.Body, ctl: ctl, limits: l}
			r.Body = body
		}
		next.ServeHTTP(&progressWriter{ResponseWriter: w, ctl: ctl, limits: l}, r)
		if body != nil && !body.done && !body.tooSlow {
			// net/http reads what is left of the body to keep the connection; bound that too. (After a
			// body too slow, the deadline has passed already, so the connection is simply closed.)
			_ = ctl.SetReadDeadline(time.Now().Add(l.ProgressWindow))
		}
		// What is still buffered is written when the handler returns.
		_ = ctl.SetWriteDeadline(time.Now().Add(l.ProgressWindow))
	})
}

// progressBody fails a body that brings fewer than ProgressMinBytes in a ProgressWindow: each window
// starts when the previous one's bytes have arrived, and is a read deadline on the connection.
type progressBody struct {
	io.ReadCloser
	ctl     *http.ResponseController
	limits  ClientLimits
	pending int64 // bytes still due in the current window
	started bool
	done    bool
	tooSlow bool
}

func (b *progressBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		b.nextWindow()
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		// The whole body is in. No read deadline from here on: net/http now watches the connection for
		// the client going away, and a deadline passing would read as that and cancel the request.
		b.done = true
		_ = b.ctl.SetReadDeadline(time.Time{})
	case isTimeout(err):
		b.tooSlow = true
		return n, slowBody(b.limits)
	default:
		if b.pending -= int64(n); b.pending <= 0 {
			b.nextWindow()
		}
	}
	return n, err
}

func (b *progressBody) nextWindow() {
	b.pending = b.limits.ProgressMinBytes
	_ = b.ctl.SetReadDeadline(time.Now().Add(b.limits.ProgressWindow))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func slowBody(l ClientLimits) *problem.Problem {
	return problem.New(http.StatusRequestTimeout, "body-too-slow",
		"the request body brought fewer than %d bytes in %s; send it faster or retry", l.ProgressMinBytes, l.ProgressWindow)
}

// progressWriter writes a response in pieces of ProgressMinBytes, each with a write deadline of one
// ProgressWindow: a client that stops taking the response is cut off, one that takes it slowly but
// steadily (a large attachment download) is not.
type progressWriter struct {
	http.ResponseWriter
	ctl    *http.ResponseController
	limits ClientLimits
}

func (w *progressWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		piece := p[:min(int64(len(p)), w.limits.ProgressMinBytes)]
		_ = w.ctl.SetWriteDeadline(time.Now().Add(w.limits.ProgressWindow))
		n, err := w.ResponseWriter.Write(piece)
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Flush keeps the writer a http.Flusher, as gin expects.
func (w *progressWriter) Flush() {
	_ = w.ctl.SetWriteDeadline(time.Now().Add(w.limits.ProgressWindow))
	_ = w.ctl.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// limitHeaders answers a request whose line and headers are larger than MaxHeaderBytes with 431.
func (s *Server) limitHeaders(c *gin.Context) {
	if limit := s.opts.Limits.MaxHeaderBytes; limit > 0 {
		r := c.Request
		size := int64(len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4)
		for name, values := range r.Header {
			for _, v := range values {
				size += int64(len(name) + len(v) + 4)
			}
		}
		if size > limit {
			c.Header("Connection", "close")
			abort(c, problem.New(http.StatusRequestHeaderFieldsTooLarge, "headers-too-large",
				"the request line and headers are larger than %d bytes", limit))
			return
		}
	}
	c.Next()
}
