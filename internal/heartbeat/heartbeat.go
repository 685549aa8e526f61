// Package heartbeat keeps a long activity's heartbeats going while it works.
package heartbeat

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/postbox/postbox/internal/every"
)

// Start records heartbeats every fifth of the activity's HeartbeatTimeout until stop is called, so that
// a worker that dies in a long activity is noticed within HeartbeatTimeout and the attempt goes to another
// worker. The first beat comes after that fifth: an activity that ends sooner costs no call. Activities
// scheduled without a HeartbeatTimeout (the local ones) do not heartbeat.
func Start(ctx context.Context) (stop func()) {
	period := activity.GetInfo(ctx).HeartbeatTimeout / 5
	if period <= 0 {
		return func() {}
	}
	beating, stop := context.WithCancel(ctx)
	go every.Tick(beating, period, func() bool {
		activity.RecordHeartbeat(ctx)
		return true
	})
	return stop
}
