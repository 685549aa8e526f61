package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// The CloudEvents HTTP webhook abuse protection (CloudEvents "HTTP 1.1 Web Hooks", section 4): before the
// first delivery Postbox asks the endpoint, with OPTIONS and WebHook-Request-Origin, whether it wants
// deliveries from this origin; it must answer 2xx with WebHook-Allowed-Origin naming the origin (or *).
const (
	HeaderRequestOrigin = "WebHook-Request-Origin"
	HeaderAllowedOrigin = "WebHook-Allowed-Origin"
)

// ContentType is the media type of a delivery: one CloudEvent in structured mode.
const ContentType = "application/cloudevents+json"

// Sender talks to endpoints: the handshake and signed deliveries, through the guard's client.
type Sender struct {
	client *http.Client
	// Origin is what WebHook-Request-Origin says Postbox is.
	origin string
	// now is the clock of webhook-timestamp.
	now func() time.Time
}

// NewSender returns a sender whose every request keeps to guard and is cut at timeout.
func NewSender(guard Guard, timeout time.Duration, origin string) *Sender {
	return &Sender{client: guard.Client(timeout), origin: origin, now: time.Now}
}

// Failure is an endpoint's refusal or failure, in words the subscriber can act on.
type Failure struct{ Reason string }

func (f *Failure) Error() string { return f.Reason }

// failure describes what went wrong with a request to endpoint: the guard's refusal, a transport error
// (never with the URL again, which the subscriber knows) or an answer.
func failure(err error, resp *http.Response) *Failure {
	if err != nil {
		var refusal *EndpointError
		var netErr net.Error
		switch {
		case errors.As(err, &refusal):
			return &Failure{Reason: refusal.Reason}
		case errors.As(err, &netErr) && netErr.Timeout():
			return &Failure{Reason: "the endpoint did not answer in time"}
		}
		return &Failure{Reason: "the endpoint could not be reached: " + transportCause(err)}
	}
	body := strings.TrimSpace(readAnswer(resp))
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	if body == "" {
		return &Failure{Reason: fmt.Sprintf("the endpoint answered %s", resp.Status)}
	}
	return &Failure{Reason: fmt.Sprintf("the endpoint answered %s: %s", resp.Status, body)}
}

// transportCause is the innermost text of a transport error, e.g. "connection refused".
func transportCause(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// Handshake asks endpoint whether it accepts deliveries from the sender's origin; nil when it does.
func (s *Sender) Handshake(ctx context.Context, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, endpoint, nil)
	if err != nil {
		return &Failure{Reason: "the endpoint is not a URL"}
	}
	req.Header.Set(HeaderRequestOrigin, s.origin)
	resp, err := s.client.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		f := failure(err, resp)
		return &Failure{Reason: "handshake: " + f.Reason}
	}
	readAnswer(resp)
	if allowed := resp.Header.Get(HeaderAllowedOrigin); allowed != "*" && !strings.EqualFold(allowed, s.origin) {
		return &Failure{Reason: fmt.Sprintf("handshake: the endpoint answered the OPTIONS request without %s: %s (or *)", HeaderAllowedOrigin, s.origin)}
	}
	return nil
}

// Deliver POSTs one CloudEvent (its JSON) to endpoint, signed with secret as id; nil when the endpoint
// answered 2xx, else a *Failure.
func (s *Sender) Deliver(ctx context.Context, endpoint string, secrets []string, id string, event []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(event))
	if err != nil {
		return &Failure{Reason: "the endpoint is not a URL"}
	}
	req.Header.Set("Content-Type", ContentType)
	if err := SignHeaders(req.Header, secrets, id, s.now(), event); err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return failure(err, resp)
	}
	readAnswer(resp)
	return nil
}
