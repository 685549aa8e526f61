// Package telemetry is what Postbox tells its operators: structured logs (log/slog, with the request id of
// the request a line belongs to and a redacting safety net), Prometheus metrics (served on the admin
// listener with /healthz) and OpenTelemetry traces (exported by OTLP when configured).
package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// NewLogger returns the logger of the process: JSON or text on w, every line redacted (RedactHandler)
// and carrying the request id and trace id of its context (ContextHandler).
func NewLogger(w io.Writer, format string, level slog.Leveler) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(ContextHandler{RedactHandler{h}})
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request it serves.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ContextHandler adds request_id (WithRequestID) and, while a span is recording, trace_id and span_id
// to every record logged with a context, unless the record has them already.
type ContextHandler struct{ Next slog.Handler }

func (h ContextHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Next.Enabled(ctx, l)
}

func (h ContextHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx == nil {
		return h.Next.Handle(ctx, r)
	}
	id := RequestID(ctx)
	sc := trace.SpanContextFromContext(ctx)
	if id == "" && !sc.IsValid() {
		return h.Next.Handle(ctx, r)
	}
	var hasID, hasTrace bool
	r.Attrs(func(a slog.Attr) bool {
		hasID = hasID || a.Key == "request_id"
		hasTrace = hasTrace || a.Key == "trace_id"
		return true
	})
	r = r.Clone()
	if id != "" && !hasID {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc.IsValid() && !hasTrace {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Next.Handle(ctx, r)
}

func (h ContextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return ContextHandler{h.Next.WithAttrs(attrs)}
}

func (h ContextHandler) WithGroup(name string) slog.Handler {
	return ContextHandler{h.Next.WithGroup(name)}
}

// RedactHandler is a safety net under every log line: values of attributes whose key names a secret
// (password, token, cookie, authorization, API key, secret, ...) are replaced by "[REDACTED]", and every
// run of exactly 11 digits (the length of a national identity number) in the message, in string values
// and in errors is masked. Code should not log such things in the first place; this catches what slips
// through, e.g. an identity number a client wrote into a path that comes back in an error text.
type RedactHandler struct{ Next slog.Handler }

// Redacted replaces a secret attribute's value.
const Redacted = "[REDACTED]"

func (h RedactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.Next.Enabled(ctx, l) }

func (h RedactHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, RedactDigits(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(redactAttr(a))
		return true
	})
	return h.Next.Handle(ctx, nr)
}

func (h RedactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = redactAttr(a)
	}
	return RedactHandler{h.Next.WithAttrs(out)}
}

func (h RedactHandler) WithGroup(name string) slog.Handler {
	return RedactHandler{h.Next.WithGroup(name)}
}

// secretKeys are parts of attribute keys whose values are never logged (compared without case, "-" and
// "_").
var secretKeys = []string{"password", "passwd", "secret", "token", "cookie", "authorization", "apikey",
	"credential", "privatekey", "session", "bearer", "jwt", "ssn", "pid", "fnr", "identitynumber"}

// keySeparators are left out of a key before it is compared with secretKeys. Made once: every attribute of
// every log line is looked at, and building a replacer per key was most of the API's allocations per
// request at the info level.
var keySeparators = strings.NewReplacer("-", "", "_", "", ".", "")

// SecretKey reports whether an attribute key names a secret.
func SecretKey(key string) bool {
	k := keySeparators.Replace(strings.ToLower(key))
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func redactAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		attrs := a.Value.Group()
		out := make([]slog.Attr, len(attrs))
		for i, g := range attrs {
			out[i] = redactAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	}
	if SecretKey(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	if traceIdentifier(a) {
		return a
	}
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, RedactDigits(a.Value.String()))
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error:
			return slog.String(a.Key, RedactDigits(v.Error()))
		case []byte:
			return slog.String(a.Key, RedactDigits(string(v)))
		default:
			if s := fmt.Sprint(v); RedactDigits(s) != s {
				return slog.String(a.Key, RedactDigits(s))
			}
		}
	case slog.KindInt64, slog.KindUint64:
		if s := a.Value.String(); len(s) == 11 {
			return slog.String(a.Key, RedactDigits(s))
		}
	}
	return a
}

// traceIdentifier reports whether a is the trace or span id ContextHandler adds: hex of a fixed length, in
// which a run of 11 digits is chance (about one trace in fifty), not an identity number.
func traceIdentifier(a slog.Attr) bool {
	want := map[string]int{"trace_id": 32, "span_id": 16}[a.Key]
	if want == 0 || a.Value.Kind() != slog.KindString {
		return false
	}
	v := a.Value.String()
	if len(v) != want {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !('0' <= v[i] && v[i] <= '9' || 'a' <= v[i] && v[i] <= 'f') {
			return false
		}
	}
	return true
}

// RedactDigits masks every run of exactly 11 digits in s.
func RedactDigits(s string) string {
	var b *strings.Builder
	run := 0
	flush := func(end int) {
		if run == 11 {
			if b == nil {
				b = &strings.Builder{}
				b.Grow(len(s))
				b.WriteString(s[:end-run])
			}
			b.WriteString("***********")
		} else if b != nil {
			b.WriteString(s[end-run : end])
		}
		run = 0
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			run++
			continue
		}
		flush(i)
		if b != nil {
			b.WriteByte(c)
		}
	}
	flush(len(s))
	if b == nil {
		return s
	}
	return b.String()
}
