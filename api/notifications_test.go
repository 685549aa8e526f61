package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/internal/mailpittest"
	"github.com/postbox/postbox/notification"
)

// Notifications on the real router, database, Temporal dev server, worker, Mailpit and SMS stand-in.

const (
	scopeNotifyRead  = "platform:serviceowner/notifications.read"
	scopeNotifyWrite = "platform:serviceowner/notifications.write"
)

func fjeNotifier(t testing.TB) soCaller {
	return soCaller{name: "FJE notifier", key: keyFJE, token: orgToken(t, orgFJE, scopeNotifyRead+" "+scopeNotifyWrite)}
}

// awaitMails waits until Mailpit holds n mails to address and returns them.
func awaitMails(t *testing.T, address string, n int) []mailpittest.Full {
	t.Helper()
	var mails []mailpittest.Full
	require.Eventually(t, func() bool {
		var err error
		mails, err = formTaskEnv.mailpit.MailsTo(context.Background(), address)
		return err == nil && len(mails) >= n
	}, 30*time.Second, 100*time.Millisecond, "%d mails never reached %s", n, address)
	return mails
}

// awaitOrder waits until the workflow of order id has ended.
func awaitOrder(t *testing.T, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, formTaskEnv.dev.Client().GetWorkflow(ctx, notification.WorkflowID(id), "").Get(ctx, nil))
}

func emailOf(t *testing.T, ssn string) string {
	t.Helper()
	_, pool := formTaskServer(t)
	var email string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT email_address FROM parties WHERE ssn = $1`, ssn).Scan(&email))
	return email
}

// A shipment with a notification order tells each recipient once its message is visible, at the
// person's own e-mail address; the owner follows the order and sees who was notified on the shipment.
func TestShipmentWithNotification(t *testing.T) {
	h, pool := formTaskServer(t)
	fje := fjeSender(t)
	b := letter(ssnP1, ssnP2)
	b["Subject"] = "Vedtak om tilskudd " + t.Name()
	b["Notification"] = map[string]any{"Channel": "EmailPreferred", "EmailSubject": "Nytt brev: $subject$",
		"EmailBody": "Hei $recipientName$,\nles brevet her: $link$", "Reminders": map[string]any{"AfterDays": 7, "Count": 1}}
	r := fje.post(t, h, "/api/serviceowner/correspondence", b)
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	body := r.json(t)
	order, _ := body["NotificationOrderId"].(string)
	require.NotEmpty(t, order)
	assert.Equal(t, "http://postbox.test/api/serviceowner/notifications/"+order, link(t, body, "notification"))
	got := outcomes(t, r)

	mails := awaitMails(t, emailOf(t, ssnP1), 1)
	var ours []mailpittest.Full
	for _, m := range mails {
		if strings.HasPrefix(m.MessageID, order+".") {
			ours = append(ours, m)
		}
	}
	require.Len(t, ours, 1, "one notice per recipient")
	assert.Equal(t, "Nytt brev: Vedtak om tilskudd "+t.Name(), ours[0].Subject)
	assert.Contains(t, ours[0].Text, "/messages/"+got[ssnP1]+"/portalview")
	assert.NotContains(t, ours[0].Text, ssnP1, "the link names the reportee by its id, never its identity number")
	awaitMails(t, emailOf(t, ssnP2), 1)

	// The order: each recipient's notice sent; the reminder still waits (Scheduled rounds are not listed).
	var st map[string]any
	require.Eventually(t, func() bool {
		st = fjeNotifier(t).get(t, h, "/api/serviceowner/notifications/"+order).json(t)
		for _, rc := range st["_embedded"].(map[string]any)["recipients"].([]any) {
			if rc.(map[string]any)["Status"] != "Sent" {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond)
	assert.EqualValues(t, 2, st["Recipients"])
	assert.Equal(t, map[string]any{"AfterDays": 7.0, "Count": 1.0}, st["Reminders"])
	assert.Equal(t, body["ShipmentId"], st["ShipmentId"])
	send := st["_embedded"].(map[string]any)["recipients"].([]any)[0].(map[string]any)["Sends"].([]any)[0].(map[string]any)
	assert.Equal(t, "Email", send["Channel"])
	assert.Contains(t, send["Address"], "@", "the owner sees the address")

	sh := fje.get(t, h, "/api/serviceowner/correspondence/shipments/"+body["ShipmentId"].(string))
	assert.Contains(t, link(t, sh.json(t), "notification"), order)
	for _, rc := range sh.embedded(t, "recipients") {
		assert.Equal(t, true, rc["Notified"], "%v", rc)
		assert.NotEmpty(t, rc["NotifiedDateTime"])
	}
	assert.Equal(t, 2, countRows(t, pool, `SELECT count(*) FROM events WHERE type = 'no.postbox.notification.sent.v1'
		AND data->>'NotificationOrderId' = $1`, order))
	require.NoError(t, formTaskEnv.dev.Client().TerminateWorkflow(context.Background(), notification.WorkflowID(order), "", "test done"))
}

// An owner orders a notification for an existing message of its services, by SMS to a number it gives;
// refusals are precise and store nothing; another owner's message is the same 404 as none.
func TestOrderNotificationForAMessage(t *testing.T) {
	h, pool := formTaskServer(t)
	notifier := fjeNotifier(t)
	before := len(formTaskEnv.sms.Sent())
	path := "/api/serviceowner/messages/a3100136/notifications"
	r := notifier.post(t, h, path, map[string]any{"Channel": "Sms", "SmsText": "Ny melding: $subject$",
		"Recipient": map[string]any{"MobileNumber": "+4798765432"}})
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	order := r.json(t)["NotificationOrderId"].(string)
	assert.Equal(t, "http://postbox.test/api/serviceowner/notifications/"+order, r.Header().Get("Location"))
	awaitOrder(t, order)
	sent := formTaskEnv.sms.Sent()[before:]
	require.Len(t, sent, 1)
	assert.Equal(t, "+4798765432", sent[0].To)
	assert.Equal(t, order+".1.0", sent[0].Key)
	st := notifier.get(t, h, "/api/serviceowner/notifications/"+order)
	require.Equal(t, http.StatusOK, st.Code)
	assert.Equal(t, "Sent", st.embedded(t, "recipients")[0]["Status"])
	var listed map[string]any
	for _, o := range notifier.get(t, h, path).embedded(t, "notifications") {
		if o["NotificationOrderId"] == order {
			listed = o
		}
	}
	require.NotNil(t, listed, "the message lists its orders")
	assert.Equal(t, "Sent", listed["Status"])
	assert.Equal(t, "+4798765432", listed["Sends"].([]any)[0].(map[string]any)["Address"])

	orders := countRows(t, pool, `SELECT count(*) FROM notification_orders`)
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"unknown placeholder", map[string]any{"Channel": "Email", "EmailBody": "Hei $navn$"}, http.StatusBadRequest, "unknown placeholder $navn$"},
		{"header in subject", map[string]any{"Channel": "Email", "EmailSubject": "Hei\r\nBcc: x@example.org"}, http.StatusBadRequest, "EmailSubject"},
		{"reminders without days", map[string]any{"Channel": "Email", "Reminders": map[string]any{"Count": 2}}, http.StatusBadRequest, "AfterDays"},
		{"malformed send time", map[string]any{"Channel": "Email", "RequestedSendTime": "soon"}, http.StatusBadRequest, "RequestedSendTime"},
		{"bad address", map[string]any{"Channel": "Email", "Recipient": map[string]any{"EmailAddress": "not an address"}}, http.StatusBadRequest, "EmailAddress"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := requireProblem(t, notifier.post(t, h, path, c.body), c.status)
			assert.Contains(t, p["detail"], c.want)
			assert.NotContains(t, p["detail"], "not an address", "an address is never echoed")
		})
	}
	assert.Equal(t, orders, countRows(t, pool, `SELECT count(*) FROM notification_orders`), "a refused order stores nothing")

	nsf := soCaller{key: keyNSF, token: orgToken(t, orgNSF, scopeNotifyRead+" "+scopeNotifyWrite)}
	requireProblem(t, nsf.post(t, h, path, map[string]any{"Channel": "Email"}), http.StatusNotFound)
	requireProblem(t, nsf.get(t, h, "/api/serviceowner/notifications/"+order), http.StatusNotFound)
	assert.Empty(t, nsf.get(t, h, path).embedded(t, "notifications"), "another owner sees none of them")
	requireProblem(t, notifier.get(t, h, "/api/serviceowner/notifications/nope"), http.StatusNotFound)
	requireProblem(t, fjeSender(t).post(t, h, path, map[string]any{"Channel": "Email"}), http.StatusForbidden)
}

// A pre-filled form task with a notification order tells its party, at the organization's official
// e-mail address.
func TestPrefilledFormTaskWithNotification(t *testing.T) {
	h, pool := formTaskServer(t)
	body := prefill(orgO1, mainForm(demoFormData(t, "a3101102")))
	body["Notification"] = map[string]any{"Channel": "Email", "EmailSubject": "Fyll ut: $subject$ " + t.Name()}
	r := fjeFormTasks(t).post(t, h, "/api/serviceowner/formtasks", body)
	require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
	order := r.json(t)["NotificationOrderId"].(string)
	require.NotEmpty(t, order)
	awaitOrder(t, order)
	var official string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT email_address FROM parties WHERE organization_number = $1`, orgO1).Scan(&official))
	for _, m := range awaitMails(t, official, 1) {
		if strings.HasPrefix(m.MessageID, order+".") {
			assert.Equal(t, "Fyll ut: Årsoppgave 2026 – forhåndsutfylt "+t.Name(), m.Subject)
			return
		}
	}
	t.Fatalf("no mail of order %s reached %s", order, official)
}
