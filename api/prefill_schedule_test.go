package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/store"
)

// awaitPrefill waits until the workflow of scheduled pre-fill id has ended, and returns its stage.
func awaitPrefill(t *testing.T, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stage string
	require.NoError(t, formTaskEnv.dev.Client().GetWorkflow(ctx, correspondence.PrefillWorkflowIDPrefix+id, "").Get(ctx, &stage))
	return stage
}

// A pre-fill with a VisibleDateTime in the future has its forms validated at once, but is not in the
// mailbox until then: no read, no event. At that time the task appears in Utfylling with the owner's
// forms and its formtask.created event, and its notification and due timer run as for any pre-fill.
//
// With POSTBOX_RECORD_HISTORY=correspondence/testdata/prefill-baseline.json it records the baseline the
// correspondence package replays.
func TestScheduledPrefilledFormTask(t *testing.T) {
	h, pool := formTaskServer(t)
	data := demoFormData(t, "a3101102")
	visible := time.Now().Add(4 * time.Second).Truncate(time.Second)
	body := prefill(orgO1, mainForm(data))
	body["VisibleDateTime"] = visible.UTC().Format(time.RFC3339)
	body["DueDateTime"] = visible.Add(2 * time.Second).UTC().Format(time.RFC3339)
	body["Notification"] = map[string]any{"Channel": "Email", "EmailSubject": "Fyll ut: $subject$ " + t.Name()}
	r := fjeFormTasks(t).post(t, h, "/api/serviceowner/formtasks", body)
	require.Equal(t, http.StatusAccepted, r.Code, r.Body.String())
	answer := r.json(t)
	id, order := answer["MessageId"].(string), answer["NotificationOrderId"].(string)
	require.NotEmpty(t, order)
	assert.NotNil(t, answer["VisibleDateTime"])

	assert.Equal(t, http.StatusNotFound, getAs(t, h, ssnP1, "/api/"+orgO1+"/messages/"+id).Code, "not in the mailbox before VisibleDateTime")
	assert.NotContains(t, getAs(t, h, ssnP1, "/api/"+orgO1+"/messages").Body.String(), id)
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1`, id), "no event before VisibleDateTime")

	assert.Equal(t, correspondence.PrefillCreated, awaitPrefill(t, id))
	assert.False(t, time.Now().Before(visible), "created before VisibleDateTime")
	m := getAs(t, h, ssnP1, "/api/"+orgO1+"/messages/"+id)
	require.Equal(t, http.StatusOK, m.Code, m.Body.String())
	assert.Equal(t, "Utfylling", m.json(t)["Status"])
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM forms WHERE message_id = $1 AND form_data = $2`, id, data))
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1 AND type = 'no.postbox.formtask.created.v1'`, id))
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM scheduled_prefills WHERE message_id = $1`, id))

	awaitOrder(t, order)
	var official string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT email_address FROM parties WHERE organization_number = $1`, orgO1).Scan(&official))
	found := false
	for _, mail := range awaitMails(t, official, 1) {
		found = found || strings.HasPrefix(mail.MessageID, order+".")
	}
	assert.True(t, found, "the notification of the scheduled task was not sent")
	awaitDue(t, id)
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1 AND type = 'no.postbox.formtask.overdue.v1'`, id))
	require.NoError(t, temporaltest.RecordHistory(context.Background(), formTaskEnv.dev.Client(), correspondence.PrefillWorkflowIDPrefix+id))

	// An attempt after a crash finds the task made: once the row is gone, and while it is still there.
	acts := &correspondence.Activities{Pool: pool, FormTasks: formtask.New(formTaskEnv.dev.Client(), store.New(pool), formtask.Options{})}
	out, err := acts.CreatePrefilled(context.Background(), id)
	require.NoError(t, err)
	assert.True(t, out.Created)
	forms, err := json.Marshal([]formtask.RevisionForm{{Type: "MainForm", DataFormatID: "x", DataFormatVersion: 1, FormData: "<other/>"}})
	require.NoError(t, err)
	_, err = pool.Exec(context.Background(), `INSERT INTO scheduled_prefills (message_id, service_owner_code, service_owner_name,
			reportee_id, service_code, service_edition, subject, visible_at, forms, attachments, created_at)
		SELECT id, 'FJE', 'Fjordetaten', reportee_id, service_code, service_edition, subject, now(), $2, '[]', now()
		FROM messages WHERE id = $1`, id, forms)
	require.NoError(t, err)
	out, err = acts.CreatePrefilled(context.Background(), id)
	require.NoError(t, err)
	assert.True(t, out.Created)
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM forms WHERE message_id = $1 AND form_data = $2`, id, data), "its forms are kept")
	assert.Equal(t, 1, countRows(t, pool, `SELECT count(*) FROM events WHERE message_id = $1 AND type = 'no.postbox.formtask.created.v1'`, id))
	assert.Zero(t, countRows(t, pool, `SELECT count(*) FROM scheduled_prefills WHERE message_id = $1`, id))
}

// A scheduled pre-fill is refused as an immediate one is, and leaves nothing: no pre-fill, no notification
// order, no message.
func TestScheduledPrefillRefusals(t *testing.T) {
	h, pool := formTaskServer(t)
	owner := fjeFormTasks(t)
	count := `SELECT (SELECT count(*) FROM scheduled_prefills) + (SELECT count(*) FROM notification_orders) + (SELECT count(*) FROM messages)`
	before := countRows(t, pool, count)
	visible := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)

	invalid := prefill(orgO1, mainForm("<not-the-form/>"))
	invalid["VisibleDateTime"] = visible
	invalid["Notification"] = map[string]any{"Channel": "Email", "EmailSubject": "Fyll ut: $subject$"}
	p := requireProblem(t, owner.post(t, h, "/api/serviceowner/formtasks", invalid), http.StatusBadRequest)
	assert.Equal(t, "urn:postbox:problem:validation-failed", p["type"])
	assert.NotEmpty(t, p["errors"])

	dueFirst := prefill(orgO1, mainForm(demoFormData(t, "a3101102")))
	dueFirst["VisibleDateTime"] = visible
	dueFirst["DueDateTime"] = time.Now().Add(30 * time.Minute).UTC().Format(time.RFC3339)
	p = requireProblem(t, owner.post(t, h, "/api/serviceowner/formtasks", dueFirst), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "VisibleDateTime")
	assert.Equal(t, before, countRows(t, pool, count), "a refused pre-fill leaves nothing")
}
