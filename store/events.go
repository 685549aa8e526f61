package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// Event is one CloudEvent of the outbox (table events) with what the feeds filter on. The events package
// builds them and turns them into CloudEvents; the store only keeps and reads them.
type Event struct {
	Seq             int64 // gap-free and strictly increasing in commit order; set by AppendEvents
	ID              string
	Type            string
	Source          string // the absolute URI of the resource
	Subject         string // the reportee: /party/r50001
	Time            time.Time
	DataContentType string
	Data            json.RawMessage
	ReporteeID      int64
	MessageID       string     // "" for events of roles and role definitions
	Service         ServiceKey // the message's service; zero for events of roles and role definitions
	Archived        bool       // the message is archived after the change: seeing it needs ArchiveRead
}

// AppendEvents writes events to the outbox in the order given, with the next seqs of the one counter;
// ID and Time are the database's (a random UUID, the transaction's start). Call it in the transaction of
// the change the events record, as late as possible: it holds the counter's row lock until that
// transaction ends, which is what keeps the sequence gap-free and in commit order. It is one statement.
func (q *Queries) AppendEvents(ctx context.Context, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	n := len(events)
	types, sources, subjects, data := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	reportees, messages, codes := make([]int64, n), make([]string, n), make([]string, n)
	editions, archived := make([]int32, n), make([]bool, n)
	for i, e := range events {
		types[i], sources[i], subjects[i], data[i] = e.Type, e.Source, e.Subject, string(e.Data)
		reportees[i], messages[i], codes[i] = e.ReporteeID, e.MessageID, e.Service.Code
		editions[i], archived[i] = int32(e.Service.Edition), e.Archived
	}
	_, err := q.db.Exec(ctx, `WITH counter AS (
			UPDATE event_sequence SET last_seq = last_seq + $10 RETURNING last_seq - $10 AS base)
		INSERT INTO events (seq, type, source, subject, data, reportee_id, message_id, service_code, service_edition, archived)
		SELECT counter.base + e.ord, e.type, e.source, e.subject, e.data::jsonb, e.reportee_id, NULLIF(e.message_id, ''),
			NULLIF(e.service_code, ''), NULLIF(e.service_edition, 0), e.archived
		FROM counter, unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::int[], $9::bool[])
			WITH ORDINALITY AS e(type, source, subject, data, reportee_id, message_id, service_code, service_edition, archived, ord)`,
		types, sources, subjects, data, reportees, messages, codes, editions, archived, n)
	return err
}

// EventColumns are the columns of an Event, in ScanEvent's order.
const EventColumns = `e.seq, e.id::text, e.type, e.source, e.subject, e.time, e.datacontenttype, e.data, e.reportee_id,
	COALESCE(e.message_id, ''), COALESCE(e.service_code, ''), COALESCE(e.service_edition, 0), e.archived`

// ScanEvent reads a row of EventColumns.
func ScanEvent(row pgx.CollectableRow) (Event, error) {
	var e Event
	err := row.Scan(&e.Seq, &e.ID, &e.Type, &e.Source, &e.Subject, &e.Time, &e.DataContentType, &e.Data, &e.ReporteeID,
		&e.MessageID, &e.Service.Code, &e.Service.Edition, &e.Archived)
	return e, err
}

// EventsAfter returns up to limit events with a seq above after, oldest first. Every event a reader gets
// has all events of lower seqs committed before it, so a reader that continues after the last seq it got
// misses none.
func (q *Queries) EventsAfter(ctx context.Context, after int64, limit int) ([]Event, error) {
	rows, err := q.db.Query(ctx, `SELECT `+EventColumns+` FROM events e WHERE e.seq > $1 ORDER BY e.seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, ScanEvent)
}

// LastEventSeq is the seq of the last committed event, 0 for none: every event up to it is committed.
func (q *Queries) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := q.db.QueryRow(ctx, `SELECT last_seq FROM event_sequence`).Scan(&seq)
	return seq, err
}
