package notification

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// SMSConfig is the SMS gateway (config.SMS*). The gateway speaks the shape of Twilio's Messages API, the
// most copied SMS HTTP API: POST {URL}/2010-04-01/Accounts/{Account}/Messages.json, a form with To, From
// and Body, HTTP basic auth with Account and Token, and the I-Twilio-Idempotency-Token header, which
// Twilio and gateways of its shape honour so that a request sent again is sent once.
type SMSConfig struct {
	URL     string // the API's base, e.g. https://api.twilio.com; empty: no SMS channel
	Account string
	Token   string
	From    string  // the sender: a number or an alphanumeric sender id
	Rate    float64 // the most SMS per second one worker sends (0: no limit)
}

// sendTimeout bounds one mail or SMS request.
const sendTimeout = 30 * time.Second

// SMSGateway sends SMS through the gateway.
type SMSGateway struct {
	conf    SMSConfig
	http    *http.Client
	limiter *rate.Limiter
}

// NewSMSGateway returns a gateway client for conf.
func NewSMSGateway(conf SMSConfig) *SMSGateway {
	g := &SMSGateway{conf: conf, http: &http.Client{Timeout: sendTimeout}}
	if conf.Rate > 0 {
		g.limiter = rate.NewLimiter(rate.Limit(conf.Rate), max(1, int(conf.Rate/10)))
	}
	return g
}

// Send sends text to the mobile number to with idempotency key key. Its error is a *SendError.
func (g *SMSGateway) Send(ctx context.Context, key, to, text string) error {
	if g.limiter != nil {
		if err := g.limiter.Wait(ctx); err != nil {
			return temporary("waiting for the SMS rate limit: %v", ctx.Err())
		}
	}
	form := url.Values{"To": {to}, "From": {g.conf.From}, "Body": {text}}
	endpoint := strings.TrimRight(g.conf.URL, "/") + "/2010-04-01/Accounts/" + url.PathEscape(g.conf.Account) + "/Messages.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return permanent("the SMS gateway's URL is malformed")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("I-Twilio-Idempotency-Token", key)
	req.SetBasicAuth(g.conf.Account, g.conf.Token)
	resp, err := g.http.Do(req)
	if err != nil {
		return temporary("the SMS gateway did not answer")
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 ||
		resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		// Overload and outages pass; so may a rotated credential, before the retries are spent.
		return temporary("the SMS gateway answered %d", resp.StatusCode)
	default:
		return permanent("the SMS gateway refused it (%d)", resp.StatusCode)
	}
}

// SendError is the outcome of a send that did not go: Permanent when trying again cannot help (the
// address or message was refused). Reason never holds the address.
type SendError struct {
	Permanent bool
	Reason    string
}

func (e *SendError) Error() string { return e.Reason }

func permanent(format string, args ...any) *SendError {
	return &SendError{Permanent: true, Reason: fmt.Sprintf(format, args...)}
}

func temporary(format string, args ...any) *SendError {
	return &SendError{Reason: fmt.Sprintf(format, args...)}
}
