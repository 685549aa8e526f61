// Package smstest is a stand-in for an SMS provider, the one third party the tests cannot run: a real
// HTTP server speaking the shape of Twilio's Messages API (notification.SMSGateway's), which records what
// it was asked to send and, as Twilio does, sends a request repeated with the same
// I-Twilio-Idempotency-Token once.
package smstest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Account and Token are the credentials the stand-in accepts.
const (
	Account = "AC-test"
	Token   = "test-token"
)

// SMS is one message the stand-in sent.
type SMS struct {
	To, From, Body, Key string
}

// Gateway is a running stand-in.
type Gateway struct {
	*httptest.Server
	mu       sync.Mutex
	sent     []SMS
	keys     map[string]bool
	repeats  int
	failNext int // answer so many requests with 503 first
}

// Start starts a stand-in on a loopback port; Close stops it.
func Start() *Gateway {
	g := &Gateway{keys: map[string]bool{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	return g
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+Account+"/Messages.json" {
		http.Error(w, `{"code":20404,"message":"not found"}`, http.StatusNotFound)
		return
	}
	if user, pass, ok := r.BasicAuth(); !ok || user != Account || pass != Token {
		http.Error(w, `{"code":20003,"message":"authenticate"}`, http.StatusUnauthorized)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("To") == "" || r.PostForm.Get("Body") == "" {
		http.Error(w, `{"code":21604,"message":"To and Body are required"}`, http.StatusBadRequest)
		return
	}
	if strings.HasPrefix(r.PostForm.Get("To"), "+000") { // a number no network serves
		http.Error(w, `{"code":21211,"message":"invalid To"}`, http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failNext > 0 {
		g.failNext--
		http.Error(w, `{"code":20503,"message":"unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	key := r.Header.Get("I-Twilio-Idempotency-Token")
	if key != "" && g.keys[key] {
		g.repeats++
	} else {
		g.keys[key] = true
		g.sent = append(g.sent, SMS{To: r.PostForm.Get("To"), From: r.PostForm.Get("From"), Body: r.PostForm.Get("Body"), Key: key})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"sid":"SM%d","status":"queued"}`, len(g.sent))
}

// Sent returns the SMS sent so far.
func (g *Gateway) Sent() []SMS {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]SMS(nil), g.sent...)
}

// Repeats is how many requests repeated a key already sent.
func (g *Gateway) Repeats() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.repeats
}

// FailNext makes the next n requests fail with 503.
func (g *Gateway) FailNext(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failNext = n
}
