// Package every runs a function on a fixed period until its context ends: the one loop of Postbox's
// sweeps, fallback polls and watchers.
package every

import (
	"context"
	"time"
)

// Tick calls f every d until ctx ends or f returns false; the first call comes after d.
func Tick(ctx context.Context, d time.Duration, f func() bool) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !f() {
			return
		}
	}
}
