package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

// batches records the reads of each statement of a MessageReader.
type batches struct {
	mu    sync.Mutex
	sizes []int
}

func (b *batches) observe(reads int) {
	b.mu.Lock()
	b.sizes = append(b.sizes, reads)
	b.mu.Unlock()
}

func (b *batches) all() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.sizes...)
}

// Many concurrent reads of every kind — found, missing, another reportee's, in and out of the trashbin, an
// id PostgreSQL refuses — answered in shared statements, each as the single statement answers it alone.
func TestMessageReaderAnswersEachReadAsGetMessage(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	o1, p1 := storetest.PartyID(t, pool, o1), storetest.PartyID(t, pool, p1)
	require.NoError(t, q.MoveToTrashbin(ctx, "a3100150", "test", time.Now()))

	type read struct {
		reportee int64
		id       string
		trashbin bool
	}
	reads := []read{
		{o1, "a3100808", false}, // Correspondence with reply options and attachments
		{p1, "a3101116", false}, // FormTask with two forms
		{o1, "a3101116", false}, // another reportee's
		{o1, "a999", false},     // no such message
		{o1, "a3100150", false}, // in the trashbin
		{o1, "a3100150", true},
		{o1, "a3100808", true}, // not in the trashbin
		{o1, "a31\xff", false}, // no text to PostgreSQL: fails alone
		{p1, "a3101116", false},
	}
	type answer struct {
		m   store.Message
		err error
	}
	single := func(r read) answer {
		var a answer
		if r.trashbin {
			a.m, a.err = q.GetTrashedMessage(ctx, r.reportee, r.id)
		} else {
			a.m, a.err = q.GetMessage(ctx, r.reportee, r.id)
		}
		return a
	}
	want := make([]answer, len(reads))
	for i, r := range reads {
		want[i] = single(r)
	}
	require.NoError(t, want[0].err)
	require.NotEmpty(t, want[0].m.Attachments)
	require.Len(t, want[1].m.Forms, 2)
	require.ErrorIs(t, want[2].err, store.ErrNotFound)
	require.ErrorIs(t, want[3].err, store.ErrNotFound)
	require.ErrorIs(t, want[4].err, store.ErrNotFound)
	require.NoError(t, want[5].err)
	require.NotNil(t, want[5].m.DeletedAt)
	require.ErrorIs(t, want[6].err, store.ErrNotFound)
	require.Error(t, want[7].err)
	require.NotErrorIs(t, want[7].err, store.ErrNotFound)

	var b batches
	reader := store.NewMessageReader(pool, 2, b.observe)
	const n = 400
	got := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := reads[i%len(reads)]
			if r.trashbin {
				got[i].m, got[i].err = reader.GetTrashedMessage(ctx, r.reportee, r.id)
			} else {
				got[i].m, got[i].err = reader.GetMessage(ctx, r.reportee, r.id)
			}
		})
	}
	wg.Wait()
	for i, a := range got {
		w := want[i%len(reads)]
		if w.err != nil {
			assert.Equal(t, w.err.Error(), fmt.Sprint(a.err), "read %d", i)
			continue
		}
		assert.NoError(t, a.err, "read %d", i)
		assert.Equal(t, w.m, a.m, "read %d", i)
	}
	sizes, total, most := b.all(), 0, 0
	for _, s := range sizes {
		total, most = total+s, max(most, s)
	}
	assert.Equal(t, n-n/len(reads), total, "every read but the refused ids' was one statement's")
	assert.Greater(t, most, 1, "reads shared statements")
	assert.LessOrEqual(t, most, 64)
	t.Logf("%d reads in %d statements, the largest of %d", total, len(sizes), most)
}

// gatedDB holds each statement until the test releases it (or its context ends), and tells of each one
// that arrives: the number of reads it answers.
type gatedDB struct {
	store.DBTX
	arrived chan int
	release chan struct{}
}

func newGatedDB(db store.DBTX) *gatedDB {
	return &gatedDB{DBTX: db, arrived: make(chan int, 16), release: make(chan struct{})}
}

func (g *gatedDB) wait(ctx context.Context, reads int) error {
	g.arrived <- reads
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := g.wait(ctx, 1); err != nil {
		return errRow{err}
	}
	return g.DBTX.QueryRow(ctx, sql, args...)
}

func (g *gatedDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := g.wait(ctx, len(args[0].([]string))); err != nil {
		return nil, err
	}
	return g.DBTX.Query(ctx, sql, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// gatedReader is a reader of one statement at a time over a test database behind a gate, with a first
// read of a message of O1 running alone, held at the gate.
func gatedReader(t *testing.T) (pool *pgxpool.Pool, org int64, g *gatedDB, reader *store.MessageReader, first chan result) {
	pool = storetest.New(t)
	org = storetest.PartyID(t, pool, o1)
	g = newGatedDB(pool)
	reader = store.NewMessageReader(g, 1, nil)
	first = goRead(context.Background(), reader, org, "a3100808")
	require.Equal(t, 1, arrived(t, g), "the first read runs alone, at once")
	return pool, org, g, reader, first
}

// result is what a read returned, on a channel.
type result struct {
	m   store.Message
	err error
}

func goRead(ctx context.Context, r *store.MessageReader, reportee int64, id string) chan result {
	ch := make(chan result, 1)
	go func() {
		m, err := r.GetMessage(ctx, reportee, id)
		ch <- result{m, err}
	}()
	return ch
}

func waitQueued(t *testing.T, r *store.MessageReader, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return r.Queued() == n }, 5*time.Second, time.Millisecond)
}

func arrived(t *testing.T, g *gatedDB) int {
	t.Helper()
	select {
	case n := <-g.arrived:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no statement arrived")
		return 0
	}
}

func received(t *testing.T, ch chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the read did not return")
		return result{}
	}
}

// A read runs at once when no statement runs; reads that come while one runs wait for it and go together
// in the next; a read whose context ends leaves the queue at once, and one in a running statement returns
// at once without failing the others; a statement whose reads have all given up is cancelled.
func TestMessageReaderQueuesAndCancels(t *testing.T) {
	_, o1, g, reader, first := gatedReader(t)
	bg := context.Background()

	ctxs, cancels := make([]context.Context, 5), make([]context.CancelFunc, 5)
	reads := make([]chan result, 5)
	for i := range reads {
		ctxs[i], cancels[i] = context.WithCancel(bg)
		defer cancels[i]()
		reads[i] = goRead(ctxs[i], reader, o1, "a3100808")
		waitQueued(t, reader, i+1)
	}
	cancels[0]()
	assert.ErrorIs(t, received(t, reads[0]).err, context.Canceled, "a queued read that gives up returns")
	waitQueued(t, reader, 4)

	g.release <- struct{}{}
	require.NoError(t, received(t, first).err)
	assert.Equal(t, 4, arrived(t, g), "the queued reads go in one statement")
	cancels[2]()
	assert.ErrorIs(t, received(t, reads[2]).err, context.Canceled, "a read in a running statement that gives up returns")
	g.release <- struct{}{}
	for _, i := range []int{1, 3, 4} {
		r := received(t, reads[i])
		require.NoError(t, r.err, "the others are answered")
		assert.Equal(t, "a3100808", r.m.MessageID)
	}

	// Every read of a statement gives up: the statement is cancelled.
	first = goRead(bg, reader, o1, "a3100808")
	arrived(t, g)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	a, b := goRead(ctx, reader, o1, "a3100808"), goRead(ctx, reader, o1, "a999")
	waitQueued(t, reader, 2)
	g.release <- struct{}{}
	require.NoError(t, received(t, first).err)
	assert.Equal(t, 2, arrived(t, g))
	cancel()
	assert.ErrorIs(t, received(t, a).err, context.Canceled)
	assert.ErrorIs(t, received(t, b).err, context.Canceled)
	assert.Zero(t, reader.Queued())

	// The reader is idle again: the next read runs at once.
	next := goRead(bg, reader, o1, "a999")
	assert.Equal(t, 1, arrived(t, g))
	g.release <- struct{}{}
	assert.ErrorIs(t, received(t, next).err, store.ErrNotFound)
}

// A statement's error reaches every read it answers: the database goes down under queued reads, and each
// fails as unavailable (the API's 503).
func TestMessageReaderErrorReachesEveryRead(t *testing.T) {
	pool, o1, g, reader, first := gatedReader(t)
	bg := context.Background()
	var reads []chan result
	for i := range 6 {
		reads = append(reads, goRead(bg, reader, o1, []string{"a3100808", "a999", "a3101116"}[i%3]))
		waitQueued(t, reader, i+1)
	}
	storetest.TakeDown(t, pool)
	g.release <- struct{}{}
	assert.True(t, store.IsUnavailable(received(t, first).err))
	assert.Equal(t, 6, arrived(t, g))
	g.release <- struct{}{}
	for _, ch := range reads {
		err := received(t, ch).err
		assert.True(t, store.IsUnavailable(err), "%v", err)
	}
}

// No read is answered from before it was called: a change committed before a read is seen by it, while
// other reads of the message keep the statements busy.
func TestMessageReaderReadsAfterWrites(t *testing.T) {
	pool := storetest.New(t)
	o1 := storetest.PartyID(t, pool, o1)
	ctx := context.Background()
	var b batches
	reader := store.NewMessageReader(pool, 2, b.observe)

	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				_, err := reader.GetMessage(ctx, o1, "a3100808")
				assert.NoError(t, err)
			}
		})
	}
	for i := range 50 {
		subject := fmt.Sprintf("subject %d", i)
		_, err := pool.Exec(ctx, `UPDATE messages SET subject = $1 WHERE id = 'a3100808'`, subject)
		require.NoError(t, err)
		m, err := reader.GetMessage(ctx, o1, "a3100808")
		require.NoError(t, err)
		require.Equal(t, subject, m.Subject)
	}
	close(done)
	wg.Wait()
	shared := 0
	for _, s := range b.all() {
		if s > 1 {
			shared++
		}
	}
	assert.Positive(t, shared, "the reads shared statements")
}
