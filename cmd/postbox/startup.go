package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/store"
)

// Waiting for a dependency: the first retry after startupFirstBackoff, doubling up to startupMaxBackoff;
// each attempt has startupAttemptTimeout.
const (
	startupFirstBackoff   = 500 * time.Millisecond
	startupMaxBackoff     = 10 * time.Second
	startupAttemptTimeout = 10 * time.Second
)

// startup is how long a starting process waits for each of its dependencies (POSTBOX_STARTUP_TIMEOUT; 0:
// for ever). A process started during an outage of the database or of Temporal waits for it rather than
// exiting, so a supervisor that restarts it does not loop; one that does not get it in time exits with an
// error that names it.
type startup struct {
	log     *slog.Logger
	timeout time.Duration
}

func newStartup(cfg config.Config, log *slog.Logger) startup {
	return startup{log: log, timeout: cfg.StartupTimeout}
}

// waitFor calls check until it succeeds, pausing with a jittered, growing backoff and logging every failed
// attempt as a warning. It fails when the timeout has passed, and with ctx's error when ctx ends.
func (s startup) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	var deadline time.Time
	if s.timeout > 0 {
		deadline = time.Now().Add(s.timeout)
	}
	backoff := startupFirstBackoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, startupAttemptTimeout)
		err := check(actx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			if attempt > 1 {
				s.log.Info(what+" answers; starting", "attempts", attempt)
			}
			return nil
		}
		pause := backoff/2 + rand.N(backoff)
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return fmt.Errorf("%s did not answer within POSTBOX_STARTUP_TIMEOUT (%s): %w", what, s.timeout, err)
			}
			pause = min(pause, left)
		}
		s.log.Warn("waiting for "+what, "attempt", attempt, "retry_in", pause.Round(time.Millisecond), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		backoff = min(2*backoff, startupMaxBackoff)
	}
}

// waitForDatabase waits until the database of pool answers.
func (s startup) waitForDatabase(ctx context.Context, pool *pgxpool.Pool) error {
	return s.waitFor(ctx, "the database", func(ctx context.Context) error { return store.Ping(ctx, pool) })
}

// openDatabase returns a pool on the configured database once it answers, for the commands that need it
// before they can do anything (migrate, seed, dev).
func (s startup) openDatabase(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	pool, err := store.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := s.waitForDatabase(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}
