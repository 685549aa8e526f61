package notification_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/internal/mailpittest"
	"github.com/postbox/postbox/internal/smstest"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store/storetest"
)

// The parts every test of the package shares: a Temporal dev server, a Mailpit (keeping duplicates, so
// that a test sees every mail that went) and the SMS stand-in. Each test has its own database and its
// own worker on a task queue of its own.
var (
	dev  *testsuite.DevServer
	mp   *mailpittest.Server
	sms  *smstest.Gateway
	demo = "http://postbox.test"
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	var err error
	if dev, err = temporaltest.StartDevServer(ctx, "", ""); err != nil {
		panic(err)
	}
	if mp, err = mailpittest.Start(ctx, mailpittest.Options{}); err != nil {
		_ = dev.Stop()
		panic(err)
	}
	sms = smstest.Start()
	code := m.Run()
	sms.Close()
	mp.Stop()
	_ = dev.Stop()
	os.Exit(code)
}

// env is one test's database, service and worker.
type env struct {
	pool *pgxpool.Pool
	svc  *notification.Service
	acts *notification.Activities
}

func newEnv(t testing.TB) env {
	t.Helper()
	pool := storetest.New(t)
	acts, err := notification.NewActivities(pool, demo,
		notification.SMTPConfig{Addr: mp.SMTPAddr, TLS: "none", From: "Postbox <varsling@postbox.test>", Connections: 4},
		notification.SMSConfig{URL: sms.URL, Account: smstest.Account, Token: smstest.Token, From: "Postbox"})
	require.NoError(t, err)
	t.Cleanup(acts.Mailer.Close)
	w := worker.New(dev.Client(), notification.TaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(notification.OrderWorkflow, workflow.RegisterOptions{Name: notification.WorkflowName})
	for _, fn := range acts.Steps() {
		w.RegisterActivity(fn)
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return env{pool: pool, svc: notification.New(pool, dev.Client(), notification.Configured{Email: true, Sms: true}), acts: acts}
}

// wait runs the order's workflow to its end.
func wait(t *testing.T, id string) notification.Progress {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var p notification.Progress
	require.NoError(t, dev.Client().GetWorkflow(ctx, notification.WorkflowID(id), "").Get(ctx, &p))
	return p
}

func mailsTo(t *testing.T, address string) []mailpittest.Full {
	t.Helper()
	mails, err := mp.MailsTo(context.Background(), address)
	require.NoError(t, err)
	return mails
}

// An order for one message of the owner's services goes to the organization's official e-mail address
// once, with the templates filled in and escaped, and its status and event say so without the address.
func TestOrderForAMessageSendsOneMailToTheOfficialContact(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// a3100136: correspondence 7001 (FJE) to Fjellheim Maskin AS, post@fjellheim-maskin.example.
	_, err := e.pool.Exec(ctx, `UPDATE messages SET subject = 'Vedtak <b>&</b>'||chr(13)||chr(10)||'Bcc: x@evil.example' WHERE id = 'a3100136'`)
	require.NoError(t, err)
	placed, err := e.svc.Order(ctx, "FJE", "Fjordetaten", "a3100136", notification.Order{Channel: notification.EmailPreferred,
		EmailBody: "Hei $recipientName$: $subject$ $link$"})
	require.NoError(t, err)
	p := wait(t, placed.OrderID)
	assert.Equal(t, notification.Progress{Sent: 1}, p)

	mails := mailsTo(t, "post@fjellheim-maskin.example")
	require.Len(t, mails, 1)
	m := mails[0]
	assert.Equal(t, placed.OrderID+".1.0@postbox.test", m.MessageID)
	assert.Equal(t, "New in your Postbox: Vedtak <b>&</b>  Bcc: x@evil.example", m.Subject, "a line break in a value cannot start a header")
	assert.Empty(t, m.Headers["Bcc"])
	assert.Contains(t, m.Text, "Hei Fjellheim Maskin AS: Vedtak <b>&</b>")
	assert.Contains(t, m.HTML, "Vedtak &lt;b&gt;&amp;&lt;/b&gt;", "the HTML alternative escapes every value")
	assert.Contains(t, m.HTML, `<a href="http://postbox.test/api/r50001/messages/a3100136/portalview">`)

	o, list, more, err := e.svc.Status(ctx, "FJE", placed.OrderID, 0, 10)
	require.NoError(t, err)
	assert.False(t, more)
	assert.Equal(t, notification.EmailPreferred, o.Channel)
	require.Len(t, list, 1)
	require.Len(t, list[0].Sends, 1)
	assert.Equal(t, notification.Email, list[0].Sends[0].Channel, "the preferred channel, as the party has an e-mail address")
	assert.Equal(t, notification.StateSent, list[0].Sends[0].State)
	assert.Equal(t, "post@fjellheim-maskin.example", list[0].Sends[0].Address, "the owner sees where it went")
	assert.Equal(t, 1, list[0].Sends[0].Attempts)

	var data string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT data::text FROM events WHERE type = 'no.postbox.notification.sent.v1'`).Scan(&data))
	assert.NotContains(t, data, "@", "an event never names the address")
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(data), &ev))
	assert.Equal(t, placed.OrderID, ev["NotificationOrderId"])
	assert.Equal(t, "Email", ev["Channel"])

	_, _, _, err = e.svc.Status(ctx, "NSF", placed.OrderID, 0, 10)
	assert.ErrorIs(t, err, notification.ErrNotFound, "another owner's order is not found")
	_, err = e.svc.Order(ctx, "NSF", "Nordsjøfisk", "a3100136", notification.Order{Channel: notification.Email})
	assert.ErrorIs(t, err, notification.ErrNotFound, "a message of another owner's service is not found")
}

// SMS go through the gateway with the order's key; a number the gateway refuses fails for good with
// its reason; an order giving only a mobile number has no e-mail address to fall back on.
func TestSmsGoesOnceAndRefusalsAreReported(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	before := len(sms.Sent())
	placed, err := e.svc.Order(ctx, "FJE", "Fjordetaten", "a3100136", notification.Order{Channel: notification.Sms,
		SmsText: "Ny melding: $subject$", Addresses: &notification.Addresses{MobileNumber: "+4799999999"}})
	require.NoError(t, err)
	assert.Equal(t, notification.Progress{Sent: 1}, wait(t, placed.OrderID))
	sent := sms.Sent()[before:]
	require.Len(t, sent, 1)
	assert.Equal(t, "+4799999999", sent[0].To)
	assert.Equal(t, placed.OrderID+".1.0", sent[0].Key)
	assert.True(t, strings.HasPrefix(sent[0].Body, "Ny melding: "))

	refused, err := e.svc.Order(ctx, "FJE", "Fjordetaten", "a3100136", notification.Order{Channel: notification.Sms,
		Addresses: &notification.Addresses{MobileNumber: "+00012345678"}})
	require.NoError(t, err)
	assert.Equal(t, notification.Progress{Failed: 1}, wait(t, refused.OrderID))
	_, list, _, err := e.svc.Status(ctx, "FJE", refused.OrderID, 0, 10)
	require.NoError(t, err)
	assert.Equal(t, notification.StateFailed, list[0].Sends[0].State)
	assert.Equal(t, "rejected: the SMS gateway refused it (400)", list[0].Sends[0].Reason)

	none, err := e.svc.Order(ctx, "FJE", "Fjordetaten", "a3100136", notification.Order{Channel: notification.Email,
		Addresses: &notification.Addresses{MobileNumber: "+4799999998"}})
	require.NoError(t, err)
	assert.Equal(t, notification.Progress{Failed: 1}, wait(t, none.OrderID))
	_, list, _, err = e.svc.Status(ctx, "FJE", none.OrderID, 0, 10)
	require.NoError(t, err)
	assert.Equal(t, notification.ReasonNoAddress, list[0].Sends[0].Reason)
}

// A batch begun before a crash (its send recorded 'sending', the mail perhaps gone) is sent again with
// the same Message-ID; a batch already decided sends nothing more.
func TestABatchRetriedAfterACrashReusesItsKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	address := "crash@retry.example"
	placed, err := e.svc.Order(ctx, "FJE", "Fjordetaten", "a3100136", notification.Order{Channel: notification.Email,
		SendAt: ptr(clock.Now().Add(time.Hour)), Addresses: &notification.Addresses{EmailAddress: address}})
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `INSERT INTO notification_sends (order_id, ordinal, round, state, channel, address, attempts)
		VALUES ($1, 1, 0, 'sending', 'Email', $2, 1)`, placed.OrderID, address)
	require.NoError(t, err)
	in := notification.BatchInput{OrderID: placed.OrderID, Round: 0, From: 0, To: 1}
	var suite testsuite.WorkflowTestSuite
	activities := suite.NewTestActivityEnvironment()
	activities.RegisterActivity(e.acts.SendBatch)
	sendBatch := func() notification.BatchResult {
		v, err := activities.ExecuteActivity(e.acts.SendBatch, in)
		require.NoError(t, err)
		var res notification.BatchResult
		require.NoError(t, v.Get(&res))
		return res
	}
	assert.Equal(t, notification.BatchResult{Sent: 1}, sendBatch())
	assert.Equal(t, notification.BatchResult{Sent: 1}, sendBatch(), "a decided send is counted, and not sent again (below)")

	mails := mailsTo(t, address)
	require.Len(t, mails, 1, "this Mailpit keeps duplicates: the crashed attempt sent nothing here")
	assert.Equal(t, placed.OrderID+".1.0@postbox.test", mails[0].MessageID, "the key of the send begun before the crash")
	var attempts int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT attempts FROM notification_sends WHERE order_id = $1`, placed.OrderID).Scan(&attempts))
	assert.Equal(t, 2, attempts, "the resend is counted: above 1 the mail may have gone twice, with the same Message-ID")
	require.NoError(t, dev.Client().TerminateWorkflow(ctx, notification.WorkflowID(placed.OrderID), "", "test done"))
}

// A reminder goes only while the message waits for its reader: one read since the notice is skipped.
func TestRemindersSkipMessagesReadSinceTheNotice(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := "7d1c1b8e-0d0a-4d8e-9a3b-2f7e1c9d4a11"
	// Two messages of FJE's services to Ingrid Fjellheim's and Ola Bakketun's mailboxes.
	storeOrder(t, e, id, notification.Order{Channel: notification.Email, EmailSubject: "Påminnelse: $subject$", EmailBody: "Les $link$",
		ReminderDays: 1, Reminders: 1}, 2)
	var unread, read string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT min(id) FILTER (WHERE read_at IS NULL), max(id) FILTER (WHERE read_at IS NULL)
		FROM messages WHERE service_code = '7001' AND type = 'Correspondence' AND NOT is_confirmation_needed AND deleted_at IS NULL`).Scan(&unread, &read))
	require.NotEqual(t, unread, read)
	_, err := e.pool.Exec(ctx, `INSERT INTO notification_recipients (order_id, ordinal, message_id, party_id, email_address)
		SELECT $1, r.ord, m.id, m.reportee_id, 'reminder'||r.ord||'@remind.example'
		FROM unnest(ARRAY[$2, $3]::text[]) WITH ORDINALITY AS r(id, ord) JOIN messages m ON m.id = r.id`, id, unread, read)
	require.NoError(t, err)
	run, err := dev.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: notification.WorkflowID(id), TaskQueue: notification.TaskQueue},
		notification.WorkflowName, notification.WorkflowInput{OrderID: id, Recipients: 2, ReminderEvery: 3 * time.Second, Reminders: 1})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(mailsTo(t, "reminder2@remind.example")) == 1 }, 30*time.Second, 50*time.Millisecond)
	_, err = e.pool.Exec(ctx, `UPDATE messages SET read_at = now(), status = 'Lest' WHERE id = $1`, read)
	require.NoError(t, err)
	var p notification.Progress
	require.NoError(t, run.Get(ctx, &p))
	assert.Equal(t, notification.Progress{Round: 1, Sent: 3, Skipped: 1}, p)
	assert.Len(t, mailsTo(t, "reminder1@remind.example"), 2, "the unread one got the notice and the reminder")
	assert.Len(t, mailsTo(t, "reminder2@remind.example"), 1, "the one read since got the notice only")
	var reason string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT reason FROM notification_sends WHERE order_id = $1 AND round = 1 AND state = 'skipped'`, id).Scan(&reason))
	assert.Equal(t, notification.ReasonRead, reason)

	require.NoError(t, temporaltest.RecordHistory(ctx, dev.Client(), notification.WorkflowID(id)))
}

// The baseline history, recorded by TestRemindersSkipMessagesReadSinceTheNotice with
// POSTBOX_RECORD_HISTORY=notification/testdata/notification-baseline.json: a notice to two recipients and
// a reminder after its timer. The current code must replay it, so orders running during an upgrade go on.
func TestReplaysTheBaselineHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(notification.OrderWorkflow, workflow.RegisterOptions{Name: notification.WorkflowName})
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(temporaltest.QuietLogger(), "testdata/notification-baseline.json"))
}

func ptr[T any](v T) *T { return &v }

// storeOrder writes order id of FJE for recipients messages, sent at once, without its recipients (the
// test writes those) or its workflow.
func storeOrder(t *testing.T, e env, id string, o notification.Order, recipients int) {
	t.Helper()
	_, err := e.pool.Exec(context.Background(), `INSERT INTO notification_orders (id, service_owner_code, channel, email_subject,
			email_body, sms_text, send_at, reminder_days, reminders, recipients, created_at, created_by)
		VALUES ($1, 'FJE', $2, $3, $4, $5, now(), $6, $7, $8, now(), 'Fjordetaten')`,
		id, o.Channel, o.EmailSubject, o.EmailBody, o.SmsText, o.ReminderDays, o.Reminders, recipients)
	require.NoError(t, err)
}

// A batch retried after a temporary failure counts every send of the batch, those of its first attempt
// too: the workflow's progress is the batch's, not its last attempt's.
func TestARetriedBatchCountsItsFirstAttempt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := "8e1c1b8e-0d0a-4d8e-9a3b-2f7e1c9d4a11"
	storeOrder(t, e, id, notification.Order{Channel: notification.Sms, SmsText: "Ny melding: $subject$"}, 2)
	_, err := e.pool.Exec(ctx, `INSERT INTO notification_recipients (order_id, ordinal, message_id, party_id, mobile_number)
		SELECT $1, r.ord, 'a3100136', m.reportee_id, '+479000000' || r.ord
		FROM generate_series(1, 2) AS r(ord), messages m WHERE m.id = 'a3100136'`, id)
	require.NoError(t, err)
	sms.FailNext(1) // the first SMS of the batch meets a 503; the second goes
	run, err := dev.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: notification.WorkflowID(id), TaskQueue: notification.TaskQueue},
		notification.WorkflowName, notification.WorkflowInput{OrderID: id, Recipients: 2})
	require.NoError(t, err)
	var p notification.Progress
	require.NoError(t, run.Get(ctx, &p))
	assert.Equal(t, notification.Progress{Sent: 2}, p)
	var attempts []int
	rows, err := e.pool.Query(ctx, `SELECT attempts FROM notification_sends WHERE order_id = $1 ORDER BY ordinal`, id)
	require.NoError(t, err)
	attempts, err = pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1}, attempts, "the failed one was begun again; the one that went was not")
}
