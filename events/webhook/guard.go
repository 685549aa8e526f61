package webhook

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Server-side request forgery: an endpoint is a URL a subscriber chose, so Postbox must not be made to
// POST into its own network. An endpoint must be https and every address its host resolves to must be a
// public one; this is checked when the subscription is made (CheckEndpoint) and again on every connection
// (the dialer's Control hook sees the address actually dialled), so a name that resolves to a public
// address at subscription and to a private one later (DNS rebinding) is refused then. AllowPrivate (for
// local receivers: make run, the tests) lifts the address check and allows plain http; the cloud metadata
// addresses stay refused even then.

// EndpointError says why an endpoint is refused; its text is safe to show the subscriber.
type EndpointError struct{ Reason string }

func (e *EndpointError) Error() string { return e.Reason }

func refused(format string, args ...any) error {
	return &EndpointError{Reason: fmt.Sprintf(format, args...)}
}

// refusedPrefixes are the addresses no endpoint may resolve to, with what they are.
var refusedPrefixes = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// metadataAddrs are the cloud instance metadata services (AWS, GCP, Azure, OpenStack; AWS over IPv6):
// refused even where private addresses are allowed.
var metadataAddrs = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// nat64 embeds an IPv4 address in its last 32 bits (RFC 6052), which is checked as that address.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// checkAddr refuses an address an endpoint must not reach.
func checkAddr(a netip.Addr, allowPrivate bool) error {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	for _, m := range metadataAddrs {
		if a == m {
			return refused("the endpoint resolves to %s, a cloud metadata address", a)
		}
	}
	if allowPrivate {
		return nil
	}
	for _, p := range refusedPrefixes {
		if p.prefix.Contains(a) {
			return refused("the endpoint resolves to %s, a %s address", a, p.what)
		}
	}
	return nil
}

// Guard holds the endpoint rules and makes the HTTP client that keeps to them.
type Guard struct {
	// AllowPrivate allows private, loopback and link-local addresses and plain http
	// (POSTBOX_WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
	// Resolver resolves endpoint hosts; nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// maxEndpointLength bounds an endpoint URL.
const maxEndpointLength = 2048

// CheckEndpoint refuses (with an *EndpointError) a URL that is not https (or http, where private
// addresses are allowed), carries credentials or a fragment, or whose host resolves to no address or to an
// address it must not reach. It returns the URL as it will be called.
func (g Guard) CheckEndpoint(ctx context.Context, raw string) (string, error) {
	if len(raw) > maxEndpointLength {
		return "", refused("the endpoint is longer than %d characters", maxEndpointLength)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "", refused("the endpoint %q is not an absolute URL", raw)
	case u.Scheme != "https" && !(g.AllowPrivate && u.Scheme == "http"):
		return "", refused("the endpoint must be an https URL, not %s", u.Scheme)
	case u.User != nil:
		return "", refused("the endpoint must not carry a user name or password")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", refused("the endpoint must not have a #fragment")
	}
	if err := g.checkHost(ctx, u.Hostname()); err != nil {
		return "", err
	}
	return u.String(), nil
}

func (g Guard) checkHost(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		return checkAddr(a, g.AllowPrivate)
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return refused("the endpoint's host %q does not resolve", host)
	}
	for _, a := range addrs {
		if err := checkAddr(a, g.AllowPrivate); err != nil {
			return err
		}
	}
	return nil
}

// control is the dialer's hook: it sees the address about to be connected, after resolution.
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refused("cannot tell the address of %q", address)
	}
	return checkAddr(ap.Addr(), g.AllowPrivate)
}

// Client returns the HTTP client of deliveries and handshakes: every connection is checked by the guard,
// no proxy from the environment (the guard would see the proxy, not the endpoint), no redirects (a 3xx is
// the endpoint's answer, not a way elsewhere) and each request cut at timeout.
func (g Guard) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: g.control, Resolver: g.Resolver}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// maxResponseBody is as much of an endpoint's answer as is read (then the connection is dropped): the
// status is what counts, the body only shows in a failure's reason.
const maxResponseBody = 4 << 10

// readAnswer reads at most maxResponseBody of a response and closes it, returning its start.
func readAnswer(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	return string(b)
}
