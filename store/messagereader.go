package store

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// MessageReader answers concurrent single-message reads (GetMessage, GetTrashedMessage) with one statement
// for all of them, as a DataLoader does: under load a single-message read costs PostgreSQL far more per
// statement (a round trip, over TLS, a snapshot, the executor's start and end) than per row, and a
// statement for eight messages costs it little more than one for one.
//
// It never waits for company: a read that finds fewer than inFlight statements running runs its own at
// once, alone, so an idle server adds no latency. Reads that arrive while inFlight statements run queue;
// when a statement ends, its runner hands the queue (up to maxMessageBatch reads) to the first read in
// it, which runs one statement for them all. There are no goroutines of its own: the runners are the
// callers, and there is nothing to stop.
//
// No read is answered from the past: each is answered by a statement that began after the read was
// called (a queued read is only ever taken into a statement that has not started yet), so a change
// committed before the call is seen, as with GetMessage.
type MessageReader struct {
	q        *Queries
	inFlight int
	observe  func(reads int) // of each statement

	mu      sync.Mutex
	running int            // statements running, at most inFlight
	queue   []*messageRead // reads waiting for a statement; only while running == inFlight
}

// maxMessageBatch bounds the reads of one statement.
const maxMessageBatch = 64

// NewMessageReader returns a reader over db (a pool) that runs at most inFlight statements at once (the
// pool's size, or less to leave connections to other statements); observe, unless nil, is told the number
// of reads of each statement.
func NewMessageReader(db DBTX, inFlight int, observe func(reads int)) *MessageReader {
	if observe == nil {
		observe = func(int) {}
	}
	return &MessageReader{q: New(db), inFlight: max(1, inFlight), observe: observe}
}

// GetMessage is Queries.GetMessage, in a statement shared with the reads running beside it.
func (r *MessageReader) GetMessage(ctx context.Context, reporteeID int64, messageID string) (Message, error) {
	return r.read(ctx, reporteeID, messageID, false)
}

// GetTrashedMessage is Queries.GetTrashedMessage, in a statement shared with the reads running beside it.
func (r *MessageReader) GetTrashedMessage(ctx context.Context, reporteeID int64, messageID string) (Message, error) {
	return r.read(ctx, reporteeID, messageID, true)
}

// messageRead is one caller's read. wake is signalled once: when a statement answered it (m and err are
// set), or when the runner of the statement before handed it the reads of the next one (batch).
type messageRead struct {
	ctx        context.Context
	reporteeID int64
	id         string
	trashbin   bool

	wake  chan struct{}
	taken bool           // under mu: in a statement's batch, out of the queue
	batch []*messageRead // for the read that runs the statement: the reads it answers, itself first
	m     Message
	err   error
}

func (r *MessageReader) read(ctx context.Context, reporteeID int64, messageID string, trashbin bool) (Message, error) {
	// An id that is no text to PostgreSQL (invalid UTF-8, NUL) would fail the whole statement: it runs
	// alone, and fails as GetMessage does.
	if !utf8.ValidString(messageID) || strings.IndexByte(messageID, 0) >= 0 {
		return r.q.getMessage(ctx, reporteeID, messageID, trashbin)
	}
	r.mu.Lock()
	if r.running < r.inFlight {
		r.running++
		r.mu.Unlock()
		r.observe(1)
		m, err := r.q.getMessage(ctx, reporteeID, messageID, trashbin)
		r.handOff()
		return m, err
	}
	w := &messageRead{ctx: ctx, reporteeID: reporteeID, id: messageID, trashbin: trashbin, wake: make(chan struct{}, 1)}
	r.queue = append(r.queue, w)
	r.mu.Unlock()
	select {
	case <-w.wake:
	case <-ctx.Done():
		r.mu.Lock()
		taken, lead := w.taken, w.batch != nil
		if !taken {
			r.queue = slices.DeleteFunc(r.queue, func(q *messageRead) bool { return q == w })
		}
		r.mu.Unlock()
		if !lead {
			// Out of the queue, or in a statement another read runs, which answers the others without it.
			return Message{}, ctx.Err()
		}
		<-w.wake // handed a statement to run: it runs it for the others (ending when all of them have ended)
	}
	if w.batch != nil {
		r.run(w, w.batch)
	}
	return w.m, w.err
}

// run answers batch (self among them) with one statement, then hands the queue to the next runner.
func (r *MessageReader) run(self *messageRead, batch []*messageRead) {
	r.answer(self.ctx, batch)
	r.handOff()
	for _, w := range batch {
		if w != self {
			w.wake <- struct{}{}
		}
	}
}

// handOff ends a statement: the first queued read runs the next one for the reads queued (up to
// maxMessageBatch), or, when none are, one statement fewer runs.
func (r *MessageReader) handOff() {
	r.mu.Lock()
	var next *messageRead
	if len(r.queue) == 0 {
		r.running--
	} else {
		n := min(len(r.queue), maxMessageBatch)
		next = r.queue[0]
		next.batch = slices.Clone(r.queue[:n])
		for _, w := range next.batch {
			w.taken = true
		}
		r.queue = slices.Delete(r.queue, 0, n)
	}
	r.mu.Unlock()
	if next != nil {
		next.wake <- struct{}{}
	}
}

// messageBatchSQL reads the messages of parallel arrays of ids, reportees and trashbin flags, each row
// numbered by its place (from 1); a message not found has no row.
const messageBatchSQL = `SELECT r.n, ` + messageColumns + `
	FROM unnest($1::text[], $2::bigint[], $3::bool[]) WITH ORDINALITY r(id, reportee_id, trashbin, n)
	JOIN messages m ON m.id = r.id AND m.reportee_id = r.reportee_id AND (m.deleted_at IS NULL) <> r.trashbin` + messageJoins

// answer sets the message or error of each read of batch. A statement's error is every read's. The
// statement runs in a context that ends when every read's has (with the values of ctx, its runner's): a
// read that gives up does not fail the others.
func (r *MessageReader) answer(ctx context.Context, batch []*messageRead) {
	r.observe(len(batch))
	if len(batch) == 1 {
		w := batch[0]
		w.m, w.err = r.q.getMessage(ctx, w.reporteeID, w.id, w.trashbin)
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	left := int32(len(batch))
	ids, reportees, trashbin := make([]string, len(batch)), make([]int64, len(batch)), make([]bool, len(batch))
	for i, w := range batch {
		ids[i], reportees[i], trashbin[i] = w.id, w.reporteeID, w.trashbin
		stop := context.AfterFunc(w.ctx, func() {
			if atomic.AddInt32(&left, -1) == 0 {
				cancel()
			}
		})
		defer stop()
		w.err = ErrNotFound // until its row comes
	}
	rows, err := r.q.db.Query(ctx, messageBatchSQL, ids, reportees, trashbin)
	if err == nil {
		for rows.Next() {
			var (
				n int64
				m Message
			)
			if err = rows.Scan(append([]any{&n}, messageTargets(&m)...)...); err != nil {
				break
			}
			batch[n-1].m, batch[n-1].err = m, nil
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		for _, w := range batch {
			w.m, w.err = Message{}, err
		}
	}
}
