// Package refusal is the typed error a room answers a refused request with: a kind of its own, which the
// API maps to an HTTP status in one place (api/problem), and a detail a client can act on.
package refusal

import (
	"errors"
	"fmt"
)

// Error is a refused request of a room whose kinds are K.
type Error[K comparable] struct {
	Kind   K
	Detail string
	Err    error // the cause, when there is one (an outage)
	// Items are what the refusal names one by one (the rights a caller lacks), for the problem's errors.
	Items []string
}

func (e *Error[K]) Error() string { return e.Detail }
func (e *Error[K]) Unwrap() error { return e.Err }

// New is a refusal of kind with its detail.
func New[K comparable](kind K, format string, args ...any) *Error[K] {
	return &Error[K]{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Is tells whether err is a refusal of kind.
func Is[K comparable](err error, kind K) bool {
	var e *Error[K]
	return errors.As(err, &e) && e.Kind == kind
}
