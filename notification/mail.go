package notification

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"

	gomail "github.com/wneessen/go-mail"
	"golang.org/x/time/rate"
)

// SMTPConfig is the mail server notifications go through (config.SMTP*).
type SMTPConfig struct {
	Addr     string // host:port; empty: no e-mail channel
	Username string // with Password: SMTP AUTH (PLAIN or LOGIN, whichever the server offers)
	Password string
	// TLS is "none" (loopback and tests only), "starttls" (required, not opportunistic) or "tls" (implicit).
	TLS  string
	From string // the sender's address, e.g. "Postbox <varsling@postbox.example>"
	// Connections is how many connections one worker keeps to the server; Rate the most mails per second
	// it sends over all of them (0: no limit).
	Connections int
	Rate        float64
}

// Mail is one notification e-mail. Key becomes its Message-ID: a mail sent again after a crash carries
// the same one, so a receiver that drops duplicates by Message-ID shows it once.
type Mail struct {
	Key     string
	To      string
	Subject string
	Text    string
	HTML    string
}

// Mailer sends mails over a small pool of SMTP connections kept open between batches.
type Mailer struct {
	conf    SMTPConfig
	host    string
	port    int
	domain  string // of the From address: the Message-IDs' right-hand side
	limiter *rate.Limiter
	slots   chan struct{}       // one per connection
	idle    chan *gomail.Client // connected clients not in use
}

// NewMailer returns a mailer for conf, or an error naming what is malformed. It connects lazily.
func NewMailer(conf SMTPConfig) (*Mailer, error) {
	host, portText, err := net.SplitHostPort(conf.Addr)
	if err != nil {
		return nil, fmt.Errorf("the SMTP address %q is not host:port", conf.Addr)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("the SMTP address %q has no numeric port", conf.Addr)
	}
	from, err := mail.ParseAddress(conf.From)
	if err != nil {
		return nil, fmt.Errorf("the sender address is not an e-mail address")
	}
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	n := max(conf.Connections, 1)
	m := &Mailer{conf: conf, host: host, port: port, domain: domain, slots: make(chan struct{}, n), idle: make(chan *gomail.Client, n)}
	if conf.Rate > 0 {
		m.limiter = rate.NewLimiter(rate.Limit(conf.Rate), max(1, int(conf.Rate/10)))
	}
	return m, nil
}

// messageID is the Message-ID of key, without its angle brackets.
func (m *Mailer) messageID(key string) string { return key + "@" + m.domain }

func (m *Mailer) dial(ctx context.Context) (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithPort(m.port), gomail.WithTimeout(sendTimeout)}
	switch m.conf.TLS {
	case "tls":
		opts = append(opts, gomail.WithSSL())
	case "starttls":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if m.conf.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(m.conf.Username),
			gomail.WithPassword(m.conf.Password))
	}
	c, err := gomail.NewClient(m.host, opts...)
	if err != nil {
		return nil, err
	}
	if err := c.DialWithContext(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Send sends mails over up to Connections connections at once, each after the rate limit lets it, and
// returns one outcome per mail (nil: the server accepted it). An outcome is a *SendError saying whether
// a retry may help; it never holds the address.
func (m *Mailer) Send(ctx context.Context, mails []Mail) []error {
	out := make([]error, len(mails))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(cap(m.slots), len(mails)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.slots <- struct{}{}
			defer func() { <-m.slots }()
			var c *gomail.Client
			select {
			case c = <-m.idle:
			default:
			}
			for i := range next {
				c, out[i] = m.sendOne(ctx, c, mails[i])
			}
			if c != nil {
				m.idle <- c
			}
		}()
	}
	for i := range mails {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// sendOne sends one over c (dialling when nil), redialling once when a kept connection has gone stale.
// It returns the connection to keep (nil after an error on it).
func (m *Mailer) sendOne(ctx context.Context, c *gomail.Client, one Mail) (*gomail.Client, error) {
	if m.limiter != nil {
		if err := m.limiter.Wait(ctx); err != nil {
			return c, temporary("waiting for the e-mail rate limit: %v", ctx.Err())
		}
	}
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := msg.From(m.conf.From); err != nil {
		return c, permanent("the sender address is not an e-mail address")
	}
	if err := msg.To(one.To); err != nil {
		return c, permanent("the recipient's address is not an e-mail address")
	}
	msg.Subject(one.Subject)
	msg.SetMessageIDWithValue(m.messageID(one.Key))
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, one.Text)
	if one.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, one.HTML)
	}
	for attempt := 0; ; attempt++ {
		fresh := c == nil
		if fresh {
			var err error
			if c, err = m.dial(ctx); err != nil {
				return nil, temporary("connecting to the mail server failed")
			}
		}
		err := c.Send(msg)
		if err == nil {
			return c, nil
		}
		_ = c.Close()
		var se *gomail.SendError
		if errors.As(err, &se) && !se.IsTemp() && se.ErrorCode() >= 500 {
			return nil, permanent("the mail server refused it (%d %s)", se.ErrorCode(), se.EnhancedStatusCode())
		}
		if fresh || attempt > 0 {
			return nil, temporary("the mail server did not take it (%s)", smtpCode(se))
		}
		c = nil // a kept connection the server had closed: once more on a new one
	}
}

func smtpCode(se *gomail.SendError) string {
	if se == nil || se.ErrorCode() == 0 {
		return "connection lost"
	}
	return fmt.Sprintf("%d %s", se.ErrorCode(), se.EnhancedStatusCode())
}

// Close closes the kept connections.
func (m *Mailer) Close() {
	for {
		select {
		case c := <-m.idle:
			_ = c.Close()
		default:
			return
		}
	}
}
