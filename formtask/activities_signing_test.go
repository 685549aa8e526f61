package formtask_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
)

// The signing activities over the real database: a3101004 is a 4711/2 task of O1 in Signering, whose
// service this test gives two steps — the chief executive (role DAGL: P1 holds it for O1), then someone
// with Sign.
func TestSigningActivities(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const id = "a3101004"
	_, err := f.pool.Exec(ctx, `UPDATE services SET signing_steps = '[{"Signees": "Role", "RoleDefinitionCode": "DAGL"}, {"Signees": "Right"}]',
		signing_deadline_days = 7 WHERE service_code = '4711' AND service_edition = 2`)
	require.NoError(t, err)
	party := func(ssn string) int64 {
		var id int64
		require.NoError(t, f.pool.QueryRow(ctx, `SELECT id FROM parties WHERE ssn = $1`, ssn).Scan(&id))
		return id
	}
	p1, p3, p5 := party("12857812326"), party("27828534586"), party("01928216752")
	count := func(query string, args ...any) (n int) {
		require.NoError(t, f.pool.QueryRow(ctx, query, args...).Scan(&n))
		return n
	}
	events := func(kind string) int {
		return count(`SELECT count(*) FROM events WHERE message_id = $1 AND type = $2`, id, "no.postbox.formtask."+kind+".v1")
	}

	// A signature of the task as it is goes to the signing, not the archive: CheckAndArchive answers its plan.
	// Its deadline is the service's 7 days from the completion, kept in the read model for a run that takes
	// its state from there. (The dataset has the task in Signering already; it is completed here.)
	_, err = f.pool.Exec(ctx, `UPDATE messages SET status = 'Utfylling' WHERE id = $1`, id)
	require.NoError(t, err)
	var res formtask.CheckAndArchiveResult
	completed := time.Now().Truncate(time.Second)
	require.NoError(t, f.run(t, &res, f.acts.CheckAndArchive, formtask.CheckAndArchiveInput{ServiceCode: "4711", ServiceEdition: 2,
		Archive: formtask.ArchiveInput{Content: formtask.ContentRef{MessageID: id}, By: "Ingrid Fjellheim", At: completed}}))
	require.NotNil(t, res.Signing)
	assert.Equal(t, 2, res.Signing.Steps)
	require.NotNil(t, res.Signing.Deadline)
	assert.True(t, completed.Add(7*24*time.Hour).Equal(*res.Signing.Deadline), "%v", res.Signing.Deadline)
	assert.Empty(t, res.Archive.ArchiveReference)
	var rm formtask.ReadModelState
	require.NoError(t, f.run(t, &rm, f.acts.ReadTaskState, id))
	assert.Equal(t, taskstatus.Signing, rm.Status)
	require.NotNil(t, rm.SigningDeadline)
	assert.True(t, res.Signing.Deadline.Equal(*rm.SigningDeadline), "%v", rm.SigningDeadline)

	sign := func(s formtask.Signer) formtask.RecordSignatureResult {
		t.Helper()
		var r formtask.RecordSignatureResult
		require.NoError(t, f.run(t, &r, f.acts.RecordSignature, formtask.RecordSignatureInput{MessageID: id, Signer: s, At: time.Now()}))
		return r
	}
	// Step 1 needs DAGL: P5, who may sign, is not admitted; P1 is.
	r := sign(formtask.Signer{PartyID: p5, Name: "Eivind Brekke", MaySign: true})
	assert.Equal(t, formtask.SignatureRefused, r.Decision)
	assert.Contains(t, r.Detail, "role DAGL")
	assert.Equal(t, formtask.RecordSignatureResult{Decision: formtask.SignatureRecorded}, sign(formtask.Signer{PartyID: p1, Name: "Ingrid Fjellheim"}))
	assert.Equal(t, formtask.SignatureRepeated, sign(formtask.Signer{PartyID: p1, Name: "Ingrid Fjellheim"}).Decision)
	// Step 2 needs Sign: P3 without it is refused; P5 with it completes the signing.
	r = sign(formtask.Signer{PartyID: p3, Name: "Sigrid Haugland"})
	assert.Equal(t, formtask.SignatureRefused, r.Decision)
	assert.Contains(t, r.Detail, "Sign right")
	var stale formtask.RecordSignatureResult
	require.NoError(t, f.run(t, &stale, f.acts.RecordSignature, formtask.RecordSignatureInput{MessageID: id, At: time.Now(),
		Signer: formtask.Signer{PartyID: p5, Name: "Eivind Brekke", MaySign: true}, Expect: "00"}))
	assert.True(t, stale.Stale)
	assert.Equal(t, formtask.RecordSignatureResult{Decision: formtask.SignatureRecorded, Complete: true},
		sign(formtask.Signer{PartyID: p5, Name: "Eivind Brekke", MaySign: true}))
	assert.Equal(t, 2, events("signed"))
	assert.Equal(t, 1, events("signing.completed"))
	assert.Equal(t, 2, count(`SELECT count(*) FROM task_signatures WHERE message_id = $1 AND content_digest = (
		SELECT content_digest FROM task_signatures WHERE message_id = $1 LIMIT 1) AND length(content_digest) = 64`, id))

	// Back to Utfylling: both voided, each with its event, and the status with its own.
	require.NoError(t, f.run(t, nil, f.acts.ReturnToFilling, formtask.ReturnToFillingInput{MessageID: id, By: "Ingrid Fjellheim", At: time.Now()}))
	assert.Equal(t, 2, count(`SELECT count(*) FROM task_signatures WHERE message_id = $1 AND voided_at IS NOT NULL`, id))
	assert.Equal(t, 2, events("signature.voided"))
	var status string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT status FROM messages WHERE id = $1`, id).Scan(&status))
	assert.Equal(t, taskstatus.Filling, status)
	assert.Zero(t, count(`SELECT count(*) FROM task_signing_deadlines WHERE message_id = $1`, id),
		"the service's deadline starts again at the next completion")

	// The deadline's event: none for a task no longer in Signering; once for one that is.
	deadline := time.Now()
	require.NoError(t, f.run(t, nil, f.acts.MarkSigningOverdue, formtask.SigningOverdueInput{MessageID: id, Deadline: deadline}))
	assert.Zero(t, events("signing.overdue"))
	_, err = f.pool.Exec(ctx, `UPDATE messages SET status = 'Signering' WHERE id = $1`, id)
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, f.run(t, nil, f.acts.MarkSigningOverdue, formtask.SigningOverdueInput{MessageID: id, Deadline: deadline}))
	}
	assert.Equal(t, 1, events("signing.overdue"))
}

// A task entering Signering calls each signee it names to sign: a message in the signee's mailbox that
// links to where they sign it, with its event, and one notification order for all of them, whose workflow
// the task's run starts. A retried attempt finds the task in Signering and calls no one again.
func TestCallsToSign(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const id = "a3101004"
	var p3, p5 int64
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT (SELECT id FROM parties WHERE ssn = '27828534586'), (SELECT id FROM parties WHERE ssn = '01928216752')`).Scan(&p3, &p5))
	_, err := f.pool.Exec(ctx, `UPDATE messages SET status = 'Utfylling' WHERE id = $1`, id)
	require.NoError(t, err)
	require.NoError(t, f.run(t, nil, f.acts.WriteSignees, formtask.WriteSigneesInput{MessageID: id, PartyIDs: []int64{p3, p5}}))
	complete := func() formtask.CheckAndArchiveResult {
		var res formtask.CheckAndArchiveResult
		require.NoError(t, f.run(t, &res, f.acts.CheckAndArchive, formtask.CheckAndArchiveInput{ServiceCode: "4711", ServiceEdition: 2,
			Archive: formtask.ArchiveInput{Content: formtask.ContentRef{MessageID: id}, By: "Ingrid Fjellheim", At: time.Now()}}))
		require.NotNil(t, res.Signing)
		return res
	}
	res := complete()
	require.NotNil(t, res.Signing.Notify)
	assert.Equal(t, 2, res.Signing.Notify.Recipients)
	assert.Equal(t, 1, res.Signing.Notify.Reminders)

	rows, err := f.pool.Query(ctx, `SELECT m.reportee_id, m.type, m.subject, m.body, r.order_id::text FROM messages m
		JOIN notification_recipients r ON r.message_id = m.id WHERE m.body LIKE '%/signing/' || $1 ORDER BY r.ordinal`, id)
	require.NoError(t, err)
	type call struct {
		Party               int64
		Type, Subject, Body string
		Order               string
	}
	calls, err := pgx.CollectRows(rows, pgx.RowToStructByPos[call])
	require.NoError(t, err)
	require.Len(t, calls, 2)
	for i, party := range []int64{p3, p5} {
		assert.Equal(t, party, calls[i].Party)
		assert.Equal(t, "Correspondence", calls[i].Type)
		assert.True(t, strings.HasPrefix(calls[i].Subject, "Til signering: "), calls[i].Subject)
		assert.Contains(t, calls[i].Body, fmt.Sprintf("https://postbox.test/api/r%d/signing/%s", party, id))
		assert.Equal(t, res.Signing.Notify.OrderID, calls[i].Order)
	}
	var created int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE type = 'no.postbox.correspondence.created.v1'
		AND reportee_id = ANY($1)`, []int64{p3, p5}).Scan(&created))
	assert.Equal(t, 2, created)

	// A run that takes Signering from the read model finds the order to start.
	var rm formtask.ReadModelState
	require.NoError(t, f.run(t, &rm, f.acts.ReadTaskState, id))
	require.NotNil(t, rm.CallOrder)
	assert.Equal(t, *res.Signing.Notify, *rm.CallOrder)

	again := complete()
	assert.Nil(t, again.Signing.Notify, "in Signering already")
	var orders int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(DISTINCT r.order_id) FROM notification_recipients r
		JOIN messages m ON m.id = r.message_id WHERE m.body LIKE '%/signing/' || $1`, id).Scan(&orders))
	assert.Equal(t, 1, orders)
}
