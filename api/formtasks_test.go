package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/workflows"
)

// With Temporal away, a submission is a 503 the client may retry, and its revision does not stay behind.
func TestFormTasksTemporalUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	c, err := client.NewLazyClient(client.Options{HostPort: addr})
	require.NoError(t, err)
	defer c.Close()
	pool := storetest.New(t)
	ft := &FormTasks{Client: c, Pool: pool}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	caller := workflows.Caller{Name: "Ingrid Fjellheim", Write: true, Sign: true, SecurityLevel: 1}
	_, err = ft.Submit(ctx, "a3101102", caller, FormTaskSubmission{Complete: false, Sign: true,
		Forms: []store.RevisionForm{{Type: "MainForm", DataFormatID: "3106", DataFormatVersion: 21845, Name: "x", FormData: "<Skjema/>"}}})
	var rp *RetryableProblem
	require.True(t, errors.As(err, &rp), "got %v", err)
	assert.Equal(t, http.StatusServiceUnavailable, rp.Status)
	assert.Equal(t, 5*time.Second, rp.After)
	var p *Problem
	require.True(t, errors.As(err, &p), "the problem mapper finds the problem")

	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions`).Scan(&n))
	assert.Zero(t, n)
}
