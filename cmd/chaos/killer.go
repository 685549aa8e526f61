package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// killer crashes the components at random while the clients work.
type killer struct {
	st  *stack
	rng *rand.Rand
	// kills and midArchive count crashes per component; midArchive those made while an Archive
	// transaction was open.
	kills, midArchive map[string]int
	workerKills       []time.Time
	// crashes are every crash, when and of what.
	crashes []crash
	errors  []string
	// asked are crashes asked for by a client at a moment of its choosing (crashNow).
	asked chan component
	// askedCrashes counts those made.
	askedCrashes int
}

type crash struct {
	at        time.Time
	component string
}

func newKiller(st *stack, rng *rand.Rand) *killer {
	return &killer{st: st, rng: rng, kills: map[string]int{}, midArchive: map[string]int{}, asked: make(chan component, 1)}
}

// crashNow asks the killer to crash c as soon as it can, and says whether it took the request (it takes
// one at a time, and none once the clients are done).
func (k *killer) crashNow(c component) bool {
	select {
	case k.asked <- c:
		return true
	default:
		return false
	}
}

// loop crashes a component every 4 to 12 seconds, brings it back after 0.5 to 3 seconds, and stops
// when the clients are done. Each component's first crash waits for an Archive transaction to be open;
// those come 1 to 3 seconds apart, so that every component meets an open archive while the clients
// still work (300 tasks take them under a minute).
func (k *killer) loop(ctx context.Context, done <-chan struct{}) {
	comps := k.st.components()
	pending := k.rng.Perm(len(comps)) // components still to crash in the middle of an archive
	for {
		pause := 4*time.Second + time.Duration(k.rng.Int64N(int64(8*time.Second)))
		if len(pending) > 0 {
			pause = time.Second + time.Duration(k.rng.Int64N(int64(2*time.Second)))
		}
		var c component
		mid := false
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case c = <-k.asked:
			k.askedCrashes++
		case <-time.After(pause):
			mid = len(pending) > 0
			if mid {
				c = comps[pending[0]]
			} else {
				c = comps[k.rng.IntN(len(comps))]
			}
		}
		caught, err := k.crash(ctx, c, mid)
		if err != nil {
			k.errors = append(k.errors, fmt.Sprintf("crashing %s: %v", c.name(), err))
		}
		if caught {
			pending = pending[1:]
		}
		sleep(ctx, 500*time.Millisecond+time.Duration(k.rng.Int64N(int64(2500*time.Millisecond))))
		if err := c.restart(); err != nil {
			k.errors = append(k.errors, fmt.Sprintf("restarting %s: %v", c.name(), err))
		}
	}
}

// crash crashes c; with whileArchiving, it first waits (up to 15 s) for an Archive transaction to be
// open and crashes c inside it, and says whether it did.
func (k *killer) crash(ctx context.Context, c component, whileArchiving bool) (caught bool, err error) {
	if whileArchiving {
		release, held := k.holdArchive(ctx)
		defer release()
		caught = held
	}
	if err := c.crash(); err != nil {
		return caught, err
	}
	k.kills[c.name()]++
	k.crashes = append(k.crashes, crash{at: time.Now(), component: c.name()})
	if caught {
		k.midArchive[c.name()]++
	}
	if c.name() == "worker" {
		k.workerKills = append(k.workerKills, time.Now())
	}
	return caught, nil
}

// holdArchive makes the next Archive transaction wait, open, at its INSERT INTO archives: it locks the
// table against writes (reads go on) and watches pg_stat_activity until a backend waits there. release
// lets the transaction go on, or end with its connection.
func (k *killer) holdArchive(ctx context.Context) (release func(), held bool) {
	lockConn, err := pgx.Connect(ctx, k.st.pg.url("postbox"))
	if err != nil {
		return func() {}, false
	}
	watch, err := pgx.Connect(ctx, k.st.pg.url("postbox"))
	if err != nil {
		lockConn.Close(ctx)
		return func() {}, false
	}
	release = func() {
		// After a PostgreSQL crash both connections are gone already; the errors say nothing new.
		_, _ = lockConn.Exec(context.Background(), "ROLLBACK")
		_ = lockConn.Close(context.Background())
		_ = watch.Close(context.Background())
	}
	if _, err := lockConn.Exec(ctx, "BEGIN; LOCK TABLE archives IN EXCLUSIVE MODE"); err != nil {
		return release, false
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var waiting int
		err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO archives %'`).Scan(&waiting)
		if err != nil {
			return release, false
		}
		if waiting > 0 {
			return release, true
		}
		sleep(ctx, 100*time.Millisecond)
	}
	return release, false
}
