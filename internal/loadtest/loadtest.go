// Package loadtest runs one call from many goroutines at once and measures it: the loop of the benchmarks
// that compare an endpoint with the bare query it runs (api's benchmarks, cmd/benchload).
package loadtest

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what a run measured.
type Result struct {
	Calls    int
	Elapsed  time.Duration
	Rate     float64 // calls per second
	P50, P99 time.Duration
}

// Run calls do from clients goroutines, back to back, until calls calls are done or, with calls = 0,
// for d. It stops at the first error, which it returns.
func Run(clients, calls int, d time.Duration, do func() error) (Result, error) {
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, calls)
		firstErr  error
		issued    atomic.Int64
		failed    atomic.Bool
		wg        sync.WaitGroup
	)
	start := time.Now()
	more := func() bool {
		switch {
		case failed.Load():
			return false
		case calls > 0:
			return issued.Add(1) <= int64(calls)
		default:
			return time.Since(start) < d
		}
	}
	for range clients {
		wg.Go(func() {
			var mine []time.Duration
			for more() {
				t := time.Now()
				if err := do(); err != nil {
					failed.Store(true)
					mu.Lock()
					firstErr = cmp(firstErr, err)
					mu.Unlock()
					break
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return Result{}, firstErr
	}
	if len(latencies) == 0 {
		return Result{Elapsed: elapsed}, nil
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	return Result{Calls: len(latencies), Elapsed: elapsed, Rate: float64(len(latencies)) / elapsed.Seconds(),
		P50: pct(0.50), P99: pct(0.99)}, nil
}

func cmp(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
