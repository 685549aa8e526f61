package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// The events part: the integrator subscribes to the reportee's events with a receiver in this process, a
// producer commits events of the reportee throughout the run (beside those the form tasks' changes write),
// and after the run every event the subscription may see must have reached the receiver at least once,
// signed, and every webhook-id that came more than once with the same body.
type hooks struct {
	url      string
	srv      *http.Server
	subID    int64
	cursor0  int64 // the subscription's cursor when it was made: it gets the events after it
	reportee int64

	mu                               sync.Mutex
	secret                           string
	bodies                           map[string][32]byte // webhook-id → digest of its first body
	deliveries, duplicates, differed int
	badSignatures                    int
	produced                         int // events the producer committed
}

// startHooks starts the receiver and subscribes to it as the integrator.
func startHooks(ctx context.Context, st *stack, token string) (*hooks, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hooks{url: "http://" + l.Addr().String() + "/", bodies: map[string][32]byte{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(h.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = h.srv.Serve(l) }()

	body, _ := json.Marshal(map[string]string{"EndPoint": h.url})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.apiURL+"/api/"+reportee+"/events/subscriptions", bytes.NewReader(body))
	if err != nil {
		return h, err
	}
	req.Header.Set("ApiKey", apiKey)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return h, fmt.Errorf("subscribe: %w", err)
	}
	defer res.Body.Close()
	var sub struct {
		ID     int64 `json:"Id"`
		Secret string
	}
	if err := json.NewDecoder(res.Body).Decode(&sub); err != nil || res.StatusCode != http.StatusCreated {
		return h, fmt.Errorf("subscribe: %s (%v)", res.Status, err)
	}
	h.subID, h.secret = sub.ID, sub.Secret
	db, err := pgx.Connect(ctx, st.pg.url("postbox"))
	if err != nil {
		return h, err
	}
	defer db.Close(ctx)
	err = db.QueryRow(ctx, `SELECT s.cursor, p.id FROM webhook_subscriptions s, parties p WHERE s.id = $1 AND p.organization_number = $2`,
		h.subID, reportee).Scan(&h.cursor0, &h.reportee)
	return h, err
}

func (h *hooks) stop() { _ = h.srv.Close() }

func (h *hooks) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodOptions {
		w.Header().Set(webhook.HeaderAllowedOrigin, r.Header.Get(webhook.HeaderRequestOrigin))
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := webhook.Verify(h.secret, r.Header, body, time.Now()); err != nil {
		h.badSignatures++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	id, digest := r.Header.Get(webhook.HeaderID), sha256.Sum256(body)
	h.deliveries++
	if first, seen := h.bodies[id]; seen {
		h.duplicates++
		if first != digest {
			h.differed++
		}
	} else {
		h.bodies[id] = digest
	}
	w.WriteHeader(http.StatusNoContent)
}

// produce commits an event of the reportee every 100 ms until done, through every crash of PostgreSQL
// (an event whose commit failed is simply not there; the check reads what the outbox holds).
func (h *hooks) produce(ctx context.Context, st *stack, done <-chan struct{}) {
	b := events.NewBuilder("http://postbox.chaos")
	var db *pgx.Conn
	defer func() {
		if db != nil {
			db.Close(context.Background())
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		if db == nil {
			c, err := pgx.Connect(ctx, st.pg.url("postbox"))
			if err != nil {
				continue
			}
			db = c
		}
		err := store.New(db).AppendEvents(ctx, b.MessageEvent(events.FormTaskStatusChanged, events.Message{
			MessageID: fmt.Sprintf("chaos%d", i), ReporteeID: h.reportee, Type: "FormTask", ServiceCode: "4711", ServiceEdition: 2, Status: statusSigning}))
		if err != nil {
			db.Close(context.Background())
			db = nil
			continue
		}
		h.mu.Lock()
		h.produced++
		h.mu.Unlock()
	}
}

// check waits until every event the subscription may see has arrived (or deadline), and notes in v what
// did not, and any delivery badly signed or a webhook-id repeated with another body.
func (h *hooks) check(ctx context.Context, db *pgx.Conn, v *verdict, deadline time.Time) error {
	q := store.New(db)
	sub, err := webhook.NewStore(store.New(db)).GetSubscription(ctx, h.subID)
	if err != nil {
		return err
	}
	rights, err := identity.NewRights(q, slog.New(slog.DiscardHandler)).ForSubscriber(ctx, sub.Subscriber, sub.ReporteeID)
	if err != nil {
		return err
	}
	// The feed's filter, which the deliveries use: every page of it after the subscription's start.
	var visible []store.Event
	for after, more := h.cursor0, true; more; {
		var page []store.Event
		page, more, err = events.NewFeed(q).ReporteeEvents(ctx, sub.ReporteeID, rights.Visibility(), rights.AccessManager(), after, 1000)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			visible, after = append(visible, page...), page[len(page)-1].Seq
		}
	}
	var missing []string
	for {
		missing = missing[:0]
		h.mu.Lock()
		for _, e := range visible {
			if _, ok := h.bodies[e.ID]; !ok {
				missing = append(missing, e.ID)
			}
		}
		h.mu.Unlock()
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		sleep(ctx, time.Second)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	v.webhooks = fmt.Sprintf("%d events the subscription may see (%d committed by the producer), %d delivered at least once, %d missing; %d deliveries, %d duplicates (same webhook-id, %d with another body), %d badly signed",
		len(visible), h.produced, len(visible)-len(missing), len(missing), h.deliveries, h.duplicates, h.differed, h.badSignatures)
	if len(missing) > 0 {
		v.fail("webhooks: %d events never reached the receiver, e.g. %s", len(missing), missing[0])
	}
	if h.produced == 0 || len(visible) < h.produced {
		v.fail("webhooks: the subscription may see %d events, fewer than the %d the producer committed", len(visible), h.produced)
	}
	if h.differed > 0 {
		v.fail("webhooks: %d webhook-ids came again with another body", h.differed)
	}
	if h.badSignatures > 0 {
		v.fail("webhooks: %d deliveries were not signed with the subscription's secret", h.badSignatures)
	}
	return nil
}
