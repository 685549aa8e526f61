package api

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/internal/telemetry"
)

// routeOf is the route template of a request (gin's FullPath), never the raw path: paths carry identity
// numbers and would make a series per message.
func routeOf(c *gin.Context) string {
	if r := c.FullPath(); r != "" {
		return r
	}
	return "unmatched"
}

// otherMethod names every method HTTP does not define, as OpenTelemetry's conventions do.
const otherMethod = "_OTHER"

// methodOf is the method of a request as metrics and span names know it: one HTTP defines, or otherMethod,
// so that a client inventing methods cannot make a series or a span name per method.
func methodOf(c *gin.Context) string {
	switch m := c.Request.Method; m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return otherMethod
}

// traceRequests starts the server span of a request (continuing a W3C traceparent the client sent) and
// puts it into the request's context, so Temporal calls and database queries of the request join its
// trace. Only the method, the route template and the status are recorded: no path, query or header.
func (s *Server) traceRequests(c *gin.Context) {
	route, method := routeOf(c), methodOf(c)
	ctx := c.Request.Context()
	if s.opts.Propagator != nil {
		ctx = s.opts.Propagator.Extract(ctx, propagation.HeaderCarrier(c.Request.Header))
	}
	attrs := []attribute.KeyValue{attribute.String("http.request.method", method), attribute.String("http.route", route)}
	if method != c.Request.Method {
		attrs = append(attrs, attribute.String("http.request.method_original", c.Request.Method))
	}
	ctx, span := s.tracer.Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

// measure counts the request and its latency by route template, method and status.
func (s *Server) measure(c *gin.Context) {
	start := time.Now()
	c.Next()
	m := s.series.of(routeOf(c), methodOf(c), c.Writer.Status())
	m.requests.Inc()
	m.duration.Observe(time.Since(start).Seconds())
}

// requestSeries are the series of measure, each looked up once: WithLabelValues checks and hashes its
// labels and locks its vector on every call, twice a request.
type requestSeries struct{ m sync.Map } // seriesKey → seriesPair

type seriesKey struct {
	route, method string
	status        int
}

type seriesPair struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func (r *requestSeries) of(route, method string, status int) seriesPair {
	k := seriesKey{route, method, status}
	if p, ok := r.m.Load(k); ok {
		return p.(seriesPair)
	}
	labels := []string{route, method, strconv.Itoa(status)}
	p := seriesPair{telemetry.HTTPRequests.WithLabelValues(labels...), telemetry.HTTPDuration.WithLabelValues(labels...)}
	r.m.Store(k, p)
	return p
}

type proxyCertKey struct{}

// clientCertHeader believes the client certificate a TLS-terminating proxy forwards in the RFC 9440
// Client-Cert header (`:base64-DER:`, intermediates in Client-Cert-Chain), when
// Options.TrustClientCertHeader is set: it verifies it as the TLS listener would (chain to ClientCAs,
// extended key usage clientAuth) and then treats it exactly like a certificate of the handshake
// (clientCertificate). A header that does not parse or verify is refused with 401. Requests that arrive
// over TLS themselves never use the header: only the plain listener sits behind the proxy.
func (s *Server) clientCertHeader(c *gin.Context) {
	if !s.opts.TrustClientCertHeader || c.Request.TLS != nil {
		c.Next()
		return
	}
	raw := c.GetHeader("Client-Cert")
	if raw == "" {
		c.Next()
		return
	}
	cert, err := s.verifyForwardedCert(raw, c.GetHeader("Client-Cert-Chain"))
	if err != nil {
		s.log.InfoContext(c.Request.Context(), "forwarded client certificate refused", "err", err)
		abort(c, problem.Unauthorized("the client certificate is not valid: %s", err.Error()))
		return
	}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), proxyCertKey{}, cert))
	c.Next()
}

func (s *Server) verifyForwardedCert(raw, chain string) (*x509.Certificate, error) {
	cert, err := sfCertificate("Client-Cert", raw)
	if err != nil {
		return nil, err
	}
	intermediates := x509.NewCertPool()
	if strings.TrimSpace(chain) != "" {
		for _, item := range strings.Split(chain, ",") {
			ic, err := sfCertificate("Client-Cert-Chain", item)
			if err != nil {
				return nil, err
			}
			intermediates.AddCert(ic)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{
		Roots:         s.opts.ClientCAs,
		Intermediates: intermediates,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return nil, errors.New("Client-Cert: not issued for client authentication by a trusted CA, or expired")
	}
	return cert, nil
}

// sfCertificate reads a DER certificate the proxy forwards in header as a structured-field byte sequence.
func sfCertificate(header, item string) (*x509.Certificate, error) {
	der, err := sfBinary(item)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", header, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%s: not a DER certificate", header)
	}
	return cert, nil
}

// sfBinary decodes a structured-field byte sequence (RFC 8941): base64 between colons.
func sfBinary(item string) ([]byte, error) {
	item = strings.TrimSpace(item)
	if len(item) < 2 || item[0] != ':' || item[len(item)-1] != ':' {
		return nil, errors.New("not a byte sequence (:base64:)")
	}
	b64 := item[1 : len(item)-1]
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(b64)
	}
	if err != nil || len(b) == 0 {
		return nil, errors.New("not base64")
	}
	return b, nil
}
