package loadtest_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/internal/loadtest"
)

func TestRunMakesTheCallsAskedForAndMeasuresThem(t *testing.T) {
	var calls, running, most atomic.Int64
	r, err := loadtest.Run(4, 200, 0, func() error {
		calls.Add(1)
		now := running.Add(1)
		for old := most.Load(); now > old && !most.CompareAndSwap(old, now); old = most.Load() {
		}
		time.Sleep(time.Millisecond)
		running.Add(-1)
		return nil
	})
	require.NoError(t, err)
	assert.EqualValues(t, 200, calls.Load())
	assert.Equal(t, 200, r.Calls)
	assert.LessOrEqual(t, most.Load(), int64(4))
	assert.Greater(t, most.Load(), int64(1), "calls ran concurrently")
	assert.GreaterOrEqual(t, r.P50, time.Millisecond)
	assert.GreaterOrEqual(t, r.P99, r.P50)
	assert.InDelta(t, float64(r.Calls)/r.Elapsed.Seconds(), r.Rate, 0.001)
}

func TestRunForADuration(t *testing.T) {
	r, err := loadtest.Run(2, 0, 50*time.Millisecond, func() error { time.Sleep(time.Millisecond); return nil })
	require.NoError(t, err)
	assert.Positive(t, r.Calls)
	assert.GreaterOrEqual(t, r.Elapsed, 50*time.Millisecond)
}

func TestRunStopsAtTheFirstError(t *testing.T) {
	var calls atomic.Int64
	boom := errors.New("boom")
	_, err := loadtest.Run(4, 1000, 0, func() error {
		if calls.Add(1) == 10 {
			return boom
		}
		return nil
	})
	assert.ErrorIs(t, err, boom)
	assert.Less(t, calls.Load(), int64(1000))
}
