package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/internal/mailpittest"
)

// The agency's sending: Fjordetaten sends one correspondence to shipmentRecipients organizations while the
// integrators submit and the components crash, retrying the request (with its IdempotentKey) until it is
// answered. Its batches would take a second; so that the kills meet them, the sender then holds them, open
// and waiting on their recipients' rows, for a few seconds at a time (holdBatches). The checks demand one
// shipment for the key, and every recipient with exactly one message and one published event.
//
// The shipment comes with an e-mail notification order. While its notices go out, the sender watches for
// mails that went before their record committed and has the worker crashed then (crashWhileUnrecorded);
// such a mail is sent again after the crash with the same Message-ID, which Mailpit (run with
// --ignore-duplicate-ids, as a receiver that deduplicates) drops. The checks demand every recipient's
// notice in Mailpit exactly once and recorded sent once, with one notification.sent event; the report
// counts the sends begun more than once.

const (
	shipmentRecipients = 2_000
	firstRecipient     = 800_000_001 // organization numbers of the recipients the run adds
	senderScope        = "platform:serviceowner/correspondence.read platform:serviceowner/correspondence.write"
)

type sender struct {
	base, token, key string
	mailpit          *mailpittest.Server
	// crashWorker asks for the worker to be crashed now (killer.crashNow); crashedUnrecorded says the
	// request was taken, while mails had gone out whose record was held.
	crashWorker       func() bool
	crashedUnrecorded bool
	dbURL             string
	http              *http.Client
	stats             *stats
	shipmentID        string
	problems          []string
	// held are the windows in which the shipment's batches were held open (holdBatches).
	held [][2]time.Time
}

// crashesWhileHeld names the crashes that came while the shipment's batches were held open.
func (s *sender) crashesWhileHeld(crashes []crash) []string {
	var out []string
	for _, c := range crashes {
		for _, w := range s.held {
			if !c.at.Before(w[0]) && !c.at.After(w[1]) {
				out = append(out, c.component)
			}
		}
	}
	return out
}

// addRecipients adds the shipment's recipients to the database before the run.
func addRecipients(ctx context.Context, db *pgx.Conn) error {
	_, err := db.Exec(ctx, `INSERT INTO parties (kind, organization_number, name, email_address)
		SELECT 'Organization', ($1::bigint + g)::text, 'Chaos mottaker ' || g, 'post' || g || '@chaos.example'
		FROM generate_series(0, $2 - 1) g
		ON CONFLICT DO NOTHING`, firstRecipient, shipmentRecipients)
	return err
}

// run sends the shipment once the integrators are under way, and again after every answer that is not
// the shipment's (no answer, a 5xx), until it has it or giveUp passes.
func (s *sender) run(ctx context.Context, giveUp time.Time) {
	recipients := make([]string, shipmentRecipients)
	for i := range recipients {
		recipients[i] = fmt.Sprint(firstRecipient + i)
	}
	body, _ := json.Marshal(map[string]any{"ServiceCode": "7001", "ServiceEdition": 1, "Recipients": recipients,
		"Subject": "Vedtak i kaos", "Body": "<p>Sendt mens alt krasjet.</p>", "IdempotentKey": s.key,
		"Notification": map[string]any{"Channel": "Email", "EmailSubject": "Nytt vedtak: $subject$"}})
	sleep(ctx, 5*time.Second)
	for time.Now().Before(giveUp) && ctx.Err() == nil {
		status, answer, err := s.post(ctx, body)
		switch {
		case err != nil || status >= 500:
		case status == http.StatusAccepted:
			var a struct {
				ShipmentID string `json:"ShipmentId"`
				Accepted   int
			}
			if err := json.Unmarshal(answer, &a); err != nil || a.Accepted != shipmentRecipients {
				s.problems = append(s.problems, fmt.Sprintf("sender: the answer accepts %d of %d: %.200s", a.Accepted, shipmentRecipients, answer))
			}
			s.shipmentID = a.ShipmentID
			// The shipment's batches, then the notices' outcomes: a batch's mails go out, and its record of
			// them (with their events) waits on the outbox's counter.
			watched := make(chan struct{})
			go func() { s.crashWhileUnrecorded(ctx); close(watched) }()
			s.holdBatches(ctx)
			<-watched
			return
		default:
			s.problems = append(s.problems, fmt.Sprintf("sender: %d %.300s", status, answer))
			return
		}
		sleep(ctx, 500*time.Millisecond)
	}
	s.problems = append(s.problems, "sender: the shipment was never accepted")
}

// holdBatches makes the shipment's batch transactions wait, open, at their lock of the recipients' rows,
// for 8 s at a time, three times with a moment between: the worker, Temporal or PostgreSQL crashing
// meanwhile cuts a batch that has begun.
func (s *sender) holdBatches(ctx context.Context) {
	for range 3 {
		conn, err := pgx.Connect(ctx, s.dbURL)
		for tries := 0; err != nil && tries < 40 && ctx.Err() == nil; tries++ { // PostgreSQL may be down a moment
			sleep(ctx, 250*time.Millisecond)
			conn, err = pgx.Connect(ctx, s.dbURL)
		}
		if err == nil {
			if _, err = conn.Exec(ctx, "BEGIN; LOCK TABLE shipment_recipients IN EXCLUSIVE MODE"); err == nil {
				from := time.Now()
				sleep(ctx, 8*time.Second)
				s.held = append(s.held, [2]time.Time{from, time.Now()})
			}
			// After a PostgreSQL crash the connection is gone already; the lock went with it.
			_, _ = conn.Exec(context.Background(), "ROLLBACK")
			_ = conn.Close(context.Background())
		}
		sleep(ctx, 300*time.Millisecond)
	}
}

// crashWhileUnrecorded watches the notices go out (for up to two minutes from the shipment's acceptance) until Mailpit holds more of them
// than are recorded sent — a batch's mails went and its record has not committed — and asks for the
// worker to be crashed then: once, in the window where a crash makes a send go twice. The batch's retry
// sends the unrecorded ones again under the same Message-IDs.
func (s *sender) crashWhileUnrecorded(ctx context.Context) {
	if s.crashedUnrecorded || s.crashWorker == nil {
		return
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && ctx.Err() == nil; sleep(ctx, 20*time.Millisecond) {
		mails, err := s.mailpit.Count(ctx)
		if err != nil {
			continue
		}
		db, err := pgx.Connect(ctx, s.dbURL)
		if err != nil {
			continue
		}
		var recorded int
		err = db.QueryRow(ctx, `SELECT count(*) FROM notification_sends WHERE state = 'sent'`).Scan(&recorded)
		_ = db.Close(context.Background())
		if err == nil && mails > recorded {
			s.crashedUnrecorded = s.crashWorker()
			return
		}
		if err == nil && recorded == shipmentRecipients {
			return // all went before the watch saw a gap
		}
	}
}

func (s *sender) post(ctx context.Context, body []byte) (int, []byte, error) {
	const path = "/api/serviceowner/correspondence"
	return ownerRequest(ctx, s.http, s.stats, s.token, http.MethodPost, s.base+path, path,
		map[string]string{"Content-Type": "application/json"}, bytes.NewReader(body))
}

// check demands one shipment for the key, made whole: every recipient with exactly one message, and each
// message with exactly one published event.
func (s *sender) check(ctx context.Context, db *pgx.Conn, v *verdict) error {
	v.problems = append(v.problems, s.problems...)
	var shipments int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM shipments WHERE idempotent_key = $1`, s.key).Scan(&shipments); err != nil {
		return err
	}
	if shipments != 1 {
		v.fail("sender: %d shipments for one IdempotentKey", shipments)
	}
	if s.shipmentID == "" {
		return nil
	}
	var pending, parties, messages, doubled, events int
	err := db.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM shipment_recipients WHERE shipment_id = $1 AND created_at IS NULL),
			(SELECT count(DISTINCT reportee_id) FROM messages WHERE shipment_id = $1),
			(SELECT count(*) FROM messages WHERE shipment_id = $1),
			(SELECT count(*) FROM (SELECT FROM messages WHERE shipment_id = $1 GROUP BY reportee_id HAVING count(*) > 1) d),
			(SELECT count(*) FROM events e JOIN messages m ON m.id = e.message_id
				WHERE m.shipment_id = $1 AND e.type = 'no.postbox.correspondence.published.v1')`, s.shipmentID).
		Scan(&pending, &parties, &messages, &doubled, &events)
	if err != nil {
		return err
	}
	v.sent = parties
	switch {
	case pending > 0:
		v.fail("sender: %d recipients never got their message", pending)
	case parties != shipmentRecipients || messages != shipmentRecipients || doubled > 0:
		v.fail("sender: %d messages for %d of %d recipients (%d with more than one)", messages, parties, shipmentRecipients, doubled)
	case events != shipmentRecipients:
		v.fail("sender: %d published events for %d messages", events, messages)
	}
	return s.checkNotices(ctx, db, v)
}

// checkNotices waits until the shipment's notices are all decided, then demands each recipient's in
// Mailpit exactly once (by its Message-ID, <order>.<ordinal>.0@…), recorded sent, with one event.
func (s *sender) checkNotices(ctx context.Context, db *pgx.Conn, v *verdict) error {
	var order string
	if err := db.QueryRow(ctx, `SELECT id::text FROM notification_orders WHERE shipment_id = $1`, s.shipmentID).Scan(&order); err != nil {
		v.fail("sender: the shipment has no notification order (%v)", err)
		return nil
	}
	var sent, failed, events int
	for {
		err := db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'sent'), count(*) FILTER (WHERE state = 'failed'),
				count(*) FILTER (WHERE attempts > 1),
				(SELECT count(*) FROM events WHERE type = 'no.postbox.notification.sent.v1' AND data->>'NotificationOrderId' = $1::text)
			FROM notification_sends WHERE order_id = $1::text::uuid AND round = 0`, order).Scan(&sent, &failed, &v.resent, &events)
		if err != nil {
			return err
		}
		if sent+failed >= shipmentRecipients || ctx.Err() != nil {
			break
		}
		sleep(ctx, time.Second)
	}
	mails, err := s.mailpit.Messages(ctx)
	if err != nil {
		return err
	}
	perKey := map[string]int{}
	for _, m := range mails {
		if strings.HasPrefix(m.MessageID, order+".") {
			perKey[m.MessageID]++
		}
	}
	v.notified = len(perKey)
	for key, n := range perKey {
		if n != 1 {
			v.fail("sender: the notice %s is in Mailpit %d times", key, n)
		}
	}
	switch {
	case sent != shipmentRecipients || failed > 0:
		v.fail("sender: %d of %d notices recorded sent, %d failed", sent, shipmentRecipients, failed)
	case len(perKey) != shipmentRecipients:
		v.fail("sender: %d of %d notices arrived in Mailpit", len(perKey), shipmentRecipients)
	case events != shipmentRecipients:
		v.fail("sender: %d notification.sent events for %d notices", events, shipmentRecipients)
	}
	return nil
}
