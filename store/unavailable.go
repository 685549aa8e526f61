package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsUnavailable tells whether err means the database cannot serve right now — it is down, starting up,
// shutting down, out of connections, unreachable, or it aborted the transaction to resolve a conflict —
// as opposed to a refused value or a bug. A request that failed so may succeed when repeated a little
// later.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var (
		pgErr      *pgconn.PgError
		connectErr *pgconn.ConnectError
		netErr     net.Error
	)
	// Another dependency's outage (the object store's: files.Unavailable) says so itself.
	var dependency interface{ Unavailable() bool }
	if errors.As(err, &dependency) {
		return dependency.Unavailable()
	}
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr): // whatever the server said while refusing it
		return true
	case errors.As(err, &pgErr):
		return unavailableState(pgErr.Code)
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	// Failures before the query was sent (a lost connection, a pool being closed) are safe to retry.
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// unavailableState tells whether a SQLSTATE is the server's condition rather than the statement's.
func unavailableState(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"): // connection exception
		return true
	case strings.HasPrefix(code, "53"): // insufficient resources: too many connections, disk full, out of memory
		return true
	}
	switch code {
	case "57P01", // admin_shutdown: the backend was terminated or the server is stopping
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now: the server is starting up or in recovery
		"40001", // serialization_failure
		"40P01": // deadlock_detected
		return true
	}
	return false
}
