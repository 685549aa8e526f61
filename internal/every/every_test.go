package every_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/postbox/postbox/internal/every"
)

func TestTickStopsWhenTheFunctionSaysSo(t *testing.T) {
	calls := 0
	every.Tick(context.Background(), time.Millisecond, func() bool {
		calls++
		return calls < 3
	})
	assert.Equal(t, 3, calls)
}

func TestTickStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	every.Tick(ctx, time.Millisecond, func() bool {
		calls++
		if calls == 2 {
			cancel()
		}
		return true
	})
	assert.Equal(t, 2, calls)
}
