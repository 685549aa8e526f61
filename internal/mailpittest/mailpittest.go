// Package mailpittest starts a real Mailpit (an SMTP server with a web UI and an HTTP API) for tests and
// benchmarks, from the pinned binary the Makefile builds into ./bin (or $POSTBOX_MAILPIT), and reads the
// mails it received back through its API.
package mailpittest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/postbox/postbox/internal/freeport"
	"github.com/postbox/postbox/internal/testserver"
)

// BinaryPath is the Mailpit the tests run.
func BinaryPath() string { return testserver.BinaryPath("POSTBOX_MAILPIT", "mailpit") }

// Server is a running Mailpit.
type Server struct {
	SMTPAddr string // host:port of its SMTP server (no TLS, no auth)
	APIURL   string // base of its HTTP API and web UI
	proc     *testserver.Process
	dir      string
}

// Options tune a Mailpit; the zero value keeps every mail it gets.
type Options struct {
	// IgnoreDuplicateIDs drops a mail whose Message-ID it has already received, as receivers that
	// deduplicate by Message-ID do (make run and make chaos run it so).
	IgnoreDuplicateIDs bool
}

// Start starts Mailpit on free loopback ports, keeping every mail (no limit on their number).
func Start(ctx context.Context, opts Options) (*Server, error) {
	smtpPort, err := freeport.Loopback()
	if err != nil {
		return nil, err
	}
	httpPort, err := freeport.Loopback()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mailpit")
	if err != nil {
		return nil, err
	}
	s := &Server{SMTPAddr: "127.0.0.1:" + strconv.Itoa(smtpPort), APIURL: "http://127.0.0.1:" + strconv.Itoa(httpPort), dir: dir}
	args := []string{"--smtp", s.SMTPAddr, "--listen", "127.0.0.1:" + strconv.Itoa(httpPort), "--max", "0", "--quiet",
		"--disable-version-check", "--smtp-disable-rdns", "--database", filepath.Join(dir, "mailpit.db")}
	if opts.IgnoreDuplicateIDs {
		args = append(args, "--ignore-duplicate-ids")
	}
	s.proc, err = testserver.Start(ctx, BinaryPath(), args, func() bool {
		if _, err := s.Count(ctx); err != nil {
			return false
		}
		c, err := net.DialTimeout("tcp", s.SMTPAddr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Stop stops Mailpit and removes its database.
func (s *Server) Stop() {
	s.proc.Stop()
	_ = os.RemoveAll(s.dir)
}

// Message is a mail as Mailpit lists it.
type Message struct {
	ID        string
	MessageID string
	Subject   string
	To        []struct{ Address string }
}

// Full is a mail with its bodies and headers.
type Full struct {
	Message
	Text    string
	HTML    string
	Headers map[string][]string
}

func (s *Server) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.APIURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mailpit %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Count is how many mails Mailpit holds.
func (s *Server) Count(ctx context.Context) (int, error) {
	var page struct{ Total int }
	err := s.get(ctx, "/api/v1/messages?limit=1", &page)
	return page.Total, err
}

// Messages returns every mail Mailpit holds, newest first.
func (s *Server) Messages(ctx context.Context) ([]Message, error) {
	var all []Message
	for start := 0; ; {
		var page struct {
			Total    int
			Messages []Message
		}
		if err := s.get(ctx, "/api/v1/messages?limit=1000&start="+strconv.Itoa(start), &page); err != nil {
			return nil, err
		}
		all = append(all, page.Messages...)
		start += len(page.Messages)
		if len(page.Messages) == 0 || start >= page.Total {
			return all, nil
		}
	}
}

// Search returns the mails matching a Mailpit search (e.g. `to:"a@example.org"`).
func (s *Server) Search(ctx context.Context, query string) ([]Message, error) {
	var page struct{ Messages []Message }
	err := s.get(ctx, "/api/v1/search?limit=1000&query="+url.QueryEscape(query), &page)
	return page.Messages, err
}

// MailsTo returns every mail to address with its bodies and headers.
func (s *Server) MailsTo(ctx context.Context, address string) ([]Full, error) {
	list, err := s.Search(ctx, `to:"`+address+`"`)
	if err != nil {
		return nil, err
	}
	out := make([]Full, len(list))
	for i, m := range list {
		if out[i], err = s.Get(ctx, m.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Get returns one mail with its bodies and headers.
func (s *Server) Get(ctx context.Context, id string) (Full, error) {
	var f Full
	if err := s.get(ctx, "/api/v1/message/"+url.PathEscape(id), &f); err != nil {
		return f, err
	}
	err := s.get(ctx, "/api/v1/message/"+url.PathEscape(id)+"/headers", &f.Headers)
	return f, err
}

// WaitFor waits until Mailpit holds at least n mails and returns how many it holds.
func (s *Server) WaitFor(ctx context.Context, n int) (int, error) {
	for {
		got, err := s.Count(ctx)
		if err == nil && got >= n {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("mailpit holds %d mails, want %d: %w", got, n, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
