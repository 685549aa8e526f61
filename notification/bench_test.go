package notification_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	gomail "github.com/wneessen/go-mail"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/notification"
)

// benchConnections is the SMTP connections of the worker and of the bare loop alike.
const benchConnections = 4

// benchMessages makes n persons, each with an e-mail address, and one unread correspondence of FJE's
// service 7001 in each one's mailbox; it returns the message ids and party ids.
func benchMessages(b *testing.B, pool *pgxpool.Pool, n int) ([]string, []int64) {
	b.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `WITH p AS (
			INSERT INTO parties (kind, ssn, name, last_name, email_address)
			SELECT 'Person', (90000000000 + g)::text, 'Mottaker ' || g, 'Mottaker', 'mottaker' || g || '@bench.example'
			FROM generate_series(1, $1) g RETURNING id, ssn)
		INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status, created_date, last_changed,
			last_changed_by, message_sender, summary, body)
		SELECT 'a8' || lpad((p.ssn::bigint - 90000000000)::text, 9, '0'), p.id, 'Correspondence', '7001', 1, 'Vedtak om tilskudd', 'Ulest',
			now(), now(), 'Fjordetaten', 'Fjordetaten', 'Kort', '<p>Vedtak</p>'
		FROM p RETURNING id, reportee_id`, n)
	require.NoError(b, err)
	var ids []string
	var parties []int64
	for rows.Next() {
		var id string
		var party int64
		require.NoError(b, rows.Scan(&id, &party))
		ids, parties = append(ids, id), append(parties, party)
	}
	require.NoError(b, rows.Err())
	require.Len(b, ids, n)
	return ids, parties
}

// placeOrder stores an e-mail order of FJE for the messages, as a sender's PlaceTx does.
func placeOrder(b *testing.B, pool *pgxpool.Pool, ids []string, parties []int64, reminders int) string {
	b.Helper()
	ctx := context.Background()
	t := notification.Target{}
	for i := range ids {
		t.Messages = append(t.Messages, notification.TargetMessage{MessageID: ids[i], PartyID: parties[i]})
	}
	tx, err := pool.Begin(ctx)
	require.NoError(b, err)
	defer tx.Rollback(ctx)
	id, err := notification.PlaceTx(ctx, tx, "FJE", "Fjordetaten", notification.Order{Channel: notification.Email,
		EmailSubject: notification.DefaultEmailSubject, EmailBody: notification.DefaultEmailBody, SmsText: notification.DefaultSmsText,
		ReminderDays: 1, Reminders: reminders}, t)
	require.NoError(b, err)
	require.NoError(b, tx.Commit(ctx))
	return id
}

// bareMails sends the same n mails the order's first round sends (same sender, subject, both bodies, a
// Message-ID each) straight to Mailpit: benchConnections goroutines, one SMTP connection each, no
// database.
func bareMails(b *testing.B, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range benchConnections {
		wg.Go(func() {
			c, err := gomail.NewClient("127.0.0.1", gomail.WithPort(port(b, mp.SMTPAddr)), gomail.WithTLSPolicy(gomail.NoTLS))
			require.NoError(b, err)
			require.NoError(b, c.DialWithContext(ctx))
			defer c.Close()
			for i := w; i < n; i += benchConnections {
				m := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
				require.NoError(b, m.From("Postbox <varsling@postbox.test>"))
				require.NoError(b, m.To(fmt.Sprintf("bare%d@bench.example", i)))
				m.Subject("New in your Postbox: Vedtak om tilskudd")
				m.SetMessageIDWithValue(fmt.Sprintf("%s.%d.0@postbox.test", uuid.NewString(), i))
				m.SetDate()
				m.SetBodyString(gomail.TypeTextPlain, fmt.Sprintf("Dear Mottaker %d,\n\nyou have a new message in your Postbox: Vedtak om tilskudd.\nRead it at http://postbox.test/api/r%d/messages/a8%09d/portalview\n", i, i, i))
				m.AddAlternativeString(gomail.TypeTextHTML, fmt.Sprintf("<!DOCTYPE html><html><body><p>Dear Mottaker %d,<br>\n<br>\nyou have a new message</p></body></html>", i))
				require.NoError(b, c.Send(m))
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

func port(b *testing.B, addr string) int {
	var p int
	_, err := fmt.Sscanf(addr[len("127.0.0.1:"):], "%d", &p)
	require.NoError(b, err)
	return p
}

// One order of 10,000 recipients through its workflow and one worker (batches of notification.BatchSize,
// each send recorded 'sending' before it goes and sent after, with its event; benchConnections SMTP
// connections) into a real Mailpit, beside the bare loop sending the same 10,000 mails over
// benchConnections connections in the same run. Then the reminder round of an order over the same
// messages, half of them read since: how long from its timer until all 10,000 are decided (sent or
// skipped), from the workflow's history.
func BenchmarkOrder10k(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	e := newEnv(b)
	ids, parties := benchMessages(b, e.pool, n)
	for b.Loop() {
		count, err := mp.Count(ctx)
		require.NoError(b, err)
		bare := bareMails(b, n)
		_, err = mp.WaitFor(ctx, count+n)
		require.NoError(b, err)

		id := placeOrder(b, e.pool, ids, parties, 0)
		start := time.Now()
		run, err := dev.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: notification.WorkflowID(id), TaskQueue: notification.TaskQueue},
			notification.WorkflowName, notification.WorkflowInput{OrderID: id, Recipients: n})
		require.NoError(b, err)
		var p notification.Progress
		require.NoError(b, run.Get(ctx, &p))
		took := time.Since(start)
		require.Equal(b, n, p.Sent)
		_, err = mp.WaitFor(ctx, count+2*n)
		require.NoError(b, err)

		rate, bareRate := n/took.Seconds(), n/bare.Seconds()
		b.ReportMetric(rate, "mails/s")
		b.ReportMetric(bareRate, "bare-mails/s")
		b.ReportMetric(rate/bareRate, "ratio")
		fmt.Printf("order of %d e-mails into Mailpit: %v (%.0f/s); bare loop, %d SMTP connections, no database: %v (%.0f/s); ratio %.2f (target ≥ 0.80)\n",
			n, took.Round(time.Millisecond), rate, benchConnections, bare.Round(time.Millisecond), bareRate, rate/bareRate)

		// The reminders: half the messages read after the notice, so the reminder round skips them.
		reminded := placeOrder(b, e.pool, ids, parties, 1)
		run, err = dev.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: notification.WorkflowID(reminded), TaskQueue: notification.TaskQueue},
			notification.WorkflowName, notification.WorkflowInput{OrderID: reminded, Recipients: n, Reminders: 1, ReminderEvery: 5 * time.Second})
		require.NoError(b, err)
		require.Eventually(b, func() bool {
			var decided int
			require.NoError(b, e.pool.QueryRow(ctx, `SELECT count(*) FROM notification_sends WHERE order_id = $1 AND state = 'sent'`, reminded).Scan(&decided))
			return decided == n
		}, time.Minute, 50*time.Millisecond)
		_, err = e.pool.Exec(ctx, `UPDATE messages SET read_at = now(), status = 'Lest' WHERE id = ANY($1) AND right(id, 1) IN ('0', '2', '4', '6', '8')`, ids)
		require.NoError(b, err)
		require.NoError(b, run.Get(ctx, &p))
		require.Equal(b, notification.Progress{Round: 1, Sent: n + n/2, Skipped: n / 2}, p)
		fired, done := timerToEnd(b, reminded)
		b.ReportMetric(done.Sub(fired).Seconds(), "reminders-s")
		fmt.Printf("reminder round of %d messages due at the same instant: all decided (%d sent, %d skipped as read) %v after the timer fired (target ≤ 60 s)\n",
			n, n/2, n/2, done.Sub(fired).Round(time.Millisecond))
		_, err = e.pool.Exec(ctx, `UPDATE messages SET read_at = NULL, status = 'Ulest' WHERE id = ANY($1)`, ids)
		require.NoError(b, err)
	}
}

// timerToEnd returns when the reminder's timer of order id fired and when its workflow completed.
func timerToEnd(b *testing.B, id string) (time.Time, time.Time) {
	b.Helper()
	var fired, done time.Time
	it := dev.Client().GetWorkflowHistory(context.Background(), notification.WorkflowID(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(b, err)
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_FIRED:
			fired = e.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			done = e.GetEventTime().AsTime()
		}
	}
	require.False(b, fired.IsZero() || done.IsZero())
	return fired, done
}
