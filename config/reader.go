// The reader of POSTBOX_* variables: each kind of setting parsed, checked, and its failure said.

package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"

	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

type reader struct {
	lookup func(string) (string, bool)
	err    error
}

func (r *reader) getenv(name string) string {
	v, _ := r.lookup(name)
	return v
}

func (r *reader) fail(name, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

// TokenIssuer is a trusted token issuer and where its signing keys are.
type TokenIssuer struct {
	Issuer string
	JWKS   string
}

// issuers pairs a list of issuers with a list of key sources, both comma-separated.
func (r *reader) issuers(issuerVar, issuerDef, jwksVar, jwksDef string) []TokenIssuer {
	split := func(v string) []string {
		var out []string
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	iss, keys := split(r.str(issuerVar, issuerDef)), split(r.str(jwksVar, jwksDef))
	if len(iss) != len(keys) {
		r.fail(jwksVar, "names %d key sources for the %d issuers of %s", len(keys), len(iss), issuerVar)
		return nil
	}
	out := make([]TokenIssuer, len(iss))
	for i := range iss {
		out[i] = TokenIssuer{Issuer: iss[i], JWKS: keys[i]}
	}
	return out
}

func (r *reader) boolean(name string, def bool) bool {
	return parsed(r, name, def, strconv.ParseBool, "true or false")
}

func (r *reader) integer(name string, def int64) int64 {
	return parsed(r, name, def, func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }, "a whole number")
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	return parsed(r, name, def, func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = errors.New("negative")
		}
		return d, err
	}, "a duration like 30s or 2m")
}

// durations reads a comma-separated list of positive durations.
func (r *reader) durations(name, def string) []time.Duration {
	v := r.str(name, def)
	var out []time.Duration
	for _, part := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			r.fail(name, "%q is not a comma-separated list of durations like 10s,1m,1h", v)
			return nil
		}
		out = append(out, d)
	}
	return out
}

func (r *reader) level(name string, def slog.Level) slog.Level {
	return parsed(r, name, def, func(v string) (l slog.Level, err error) {
		err = l.UnmarshalText([]byte(v))
		return l, err
	}, "one of debug, info, warn, error")
}

// parsed reads name with parse, or returns def when it is not set; a value parse refuses is a failure that
// says what the value should be.
func parsed[T any](r *reader, name string, def T, parse func(string) (T, error), want string) T {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil {
		r.fail(name, "%q is not %s", v, want)
	}
	return x
}

func (r *reader) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(r.getenv(name))
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(name, "%q is not one of %s", v, strings.Join(allowed, ", "))
	return def
}

// addr reads a listen address (host:port). Set but empty turns the listener off; unset is def.
func (r *reader) addr(name, def string) string {
	v, set := r.lookup(name)
	if !set {
		return def
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		r.fail(name, "%q is not an address like 0.0.0.0:9090 (leave it empty to turn the listener off)", v)
	}
	return v
}

// queues reads a comma-separated subset of QueueGroups; unset or empty means all of them.
func (r *reader) queues(name string) []string {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return append([]string(nil), QueueGroups...)
	}
	var out []string
	for _, q := range strings.Split(v, ",") {
		q = strings.ToLower(strings.TrimSpace(q))
		if q == "" {
			continue
		}
		known := false
		for _, g := range QueueGroups {
			known = known || g == q
		}
		if !known {
			r.fail(name, "%q is not a queue group; use a comma-separated list of %s", q, strings.Join(QueueGroups, ", "))
			return nil
		}
		dup := false
		for _, o := range out {
			dup = dup || o == q
		}
		if !dup {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		r.fail(name, "%q names no queue group; use a comma-separated list of %s", v, strings.Join(QueueGroups, ", "))
	}
	return out
}

// SealKey is a key-encryption key of subscription secrets: its id, stored with what it seals, and 32 bytes.
type SealKey struct {
	ID  string
	Key []byte
}

// DemoSealKey is the default of POSTBOX_WEBHOOK_SEAL_KEYS: a published key, for make run and the tests.
const DemoSealKey = "demo-1:FPatyNC3Kz7lbDHn4e52wYCoTCfd+V9sLYyOzYxG8i8="

// sealKeys reads comma-separated id:base64 keys of 32 bytes, with distinct ids of letters, digits and -.
func (r *reader) sealKeys(name, def string) []SealKey {
	var out []SealKey
	seen := map[string]bool{}
	for _, item := range strings.Split(r.str(name, def), ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(item), ":")
		key, err := base64.StdEncoding.DecodeString(b64)
		if !ok || err != nil || len(key) != 32 || !sealKeyID.MatchString(id) || seen[id] {
			r.fail(name, "each key is id:base64 of 32 bytes (openssl rand -base64 32), with a distinct id of letters, digits and -")
			return nil
		}
		seen[id] = true
		out = append(out, SealKey{ID: id, Key: key})
	}
	return out
}

var sealKeyID = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// baseURL reads an absolute http:// or https:// URL without query or fragment, returned without a
// trailing slash.
func (r *reader) baseURL(name, def string) string {
	v := r.str(name, def)
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		r.fail(name, "%q is not an http:// or https:// base URL", v)
	}
	return strings.TrimRight(v, "/")
}

// endpoint reads an OTLP/gRPC endpoint: host:port (plain text) or an http:// or https:// URL.
func (r *reader) endpoint(name string) string {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return ""
	}
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.fail(name, "%q is not an http:// or https:// URL or a host:port", v)
		}
		return v
	}
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		r.fail(name, "%q is not an http:// or https:// URL or a host:port", v)
	}
	return v
}
