package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// A command's --help prints its usage and succeeds: it is no failure to log.
func TestHelpIsNotAFailure(t *testing.T) {
	for _, cmd := range []string{"token", "webhook-echo", "seed", "gen", "dev"} {
		assert.Equal(t, 0, command([]string{cmd, "--help"}), cmd)
	}
	assert.Equal(t, 2, command([]string{"no-such-command"}))
	assert.Equal(t, 1, command([]string{"seed"}), "seed without --file fails")
}

// `createdb` then `postbox seed` works: seed migrates the fresh database before it imports.
func TestSeedMigratesAFreshDatabase(t *testing.T) {
	cfg := startupConfig(t, storetest.NewBlank(t), storetest.UnusedAddr(t), 0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, runSeed(context.Background(), cfg, log, []string{"--file", storetest.DemoDataset()}))

	pool, err := store.Open(context.Background(), cfg.DatabaseURL)
	require.NoError(t, err)
	defer pool.Close()
	var parties int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM parties`).Scan(&parties))
	assert.Positive(t, parties)
}
