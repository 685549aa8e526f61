package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Echo is the tiny receiver of `postbox webhook-echo`, for trying deliveries locally: it answers the
// handshake for any origin, checks each delivery's signature with the secret Secret returns (when it
// returns one) and prints the delivery to Out.
type Echo struct {
	// Secret returns the subscription's secret, or "" to take deliveries unchecked; it is asked on every
	// delivery, so the secret can be given after the subscription is made.
	Secret func() string
	Out    io.Writer
	mu     sync.Mutex
}

// maxEchoBody bounds what Echo reads of a delivery.
const maxEchoBody = 1 << 20

func (e *Echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodOptions:
		origin := r.Header.Get(HeaderRequestOrigin)
		w.Header().Set("Allow", "POST, OPTIONS")
		w.Header().Set(HeaderAllowedOrigin, origin)
		e.printf("handshake from %s: allowed\n", origin)
	case http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxEchoBody))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		check := "signature not checked (no secret)"
		if secret := e.Secret(); secret != "" {
			if err := Verify(secret, r.Header, body, time.Now()); err != nil {
				e.printf("refused %s: %v\n", r.Header.Get(HeaderID), err)
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			check = "signature valid"
		}
		var ev struct{ Type, Subject string }
		_ = json.Unmarshal(body, &ev)
		e.printf("delivery %s (%s, %s): %s\n%s\n", r.Header.Get(HeaderID), ev.Type, ev.Subject, check, body)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		http.Error(w, "POST deliveries here", http.StatusMethodNotAllowed)
	}
}

func (e *Echo) printf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintf(e.Out, format, args...)
}
