package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/formtask"
)

// verdict is what the checks after the run found.
type verdict struct {
	archived, lost, doubled, dataMismatch, printMissing, orphans int
	unconfirmed                                                  int            // archived, but the client gave up without learning it
	workflows                                                    map[string]int // closed and open executions by status
	webhooks                                                     string         // what the events part found
	received                                                     int            // archives the agency received and confirmed once
	sent                                                         int            // recipients of the agency's shipment with exactly one message
	notified                                                     int            // its notices in Mailpit, each once
	jointlySigned                                                int            // joint applications archived once with all their signatures
	called                                                       int            // joint applications whose signees were each called to sign once
	resent                                                       int            // its notices begun more than once (after a crash), the same Message-ID each time
	blobs, archivedFiles, strayObjects                           int            // the object store: blobs checked, archived contents re-hashed, objects no blob names
	problems                                                     []string
}

func (v *verdict) fail(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// checkDatabase checks every task in PostgreSQL: archived exactly once with the reference its client was
// told, one print, the stored form data byte-equal to what was sent. printsBefore is the number of prints
// the dataset came with; others are the run's other form tasks (the joint applications, signing.go), of
// which otherArchives are archived.
func checkDatabase(ctx context.Context, db *pgx.Conn, tasks []*task, others map[string]bool, otherArchives int, started time.Time,
	printsBefore int, v *verdict) error {
	known := map[string]bool{}
	for id := range others {
		known[id] = true
	}
	for _, t := range tasks {
		if t.id == "" {
			v.lost++
			v.fail("task %d: never created (%s)", t.index, t.failure)
			continue
		}
		known[t.id] = true
		var (
			status, messageRef, archiveRef *string
			archives, prints               int
			forms                          []byte
		)
		err := db.QueryRow(ctx, `SELECT m.status, m.archive_reference, a.archive_reference, a.forms,
				(SELECT count(*) FROM archives x WHERE x.message_id = m.id),
				(SELECT count(*) FROM prints p WHERE p.document_digest = a.print_digest)
			FROM messages m LEFT JOIN archives a ON a.message_id = m.id WHERE m.id = $1`, t.id).
			Scan(&status, &messageRef, &archiveRef, &forms, &archives, &prints)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.id, err)
		}
		switch {
		case status == nil || *status != statusArchive || archives == 0:
			v.lost++
			v.fail("task %s: not archived (status %v; the client: %s)", t.id, deref(status), orDone(t))
			continue
		case archives > 1 || len(t.refs) > 1:
			v.doubled++
			v.fail("task %s: archived %d times; the client was told %v", t.id, archives, keys(t.refs))
		case deref(messageRef) != deref(archiveRef):
			v.doubled++
			v.fail("task %s: the message says %s, the archive %s", t.id, deref(messageRef), deref(archiveRef))
		}
		for ref := range t.refs {
			if ref != deref(archiveRef) {
				v.doubled++
				v.fail("task %s: the client was told %s, the archive is %s", t.id, ref, deref(archiveRef))
			}
		}
		v.archived++
		if t.failure != "" {
			v.unconfirmed++
			v.fail("task %s: archived, but its client never learned it: %s", t.id, t.failure)
		}
		if prints != 1 {
			v.printMissing++
			v.fail("task %s: %d prints for its archive", t.id, prints)
		}
		var archived []struct{ FormData string }
		if err := json.Unmarshal(forms, &archived); err != nil {
			return fmt.Errorf("task %s: archive forms: %w", t.id, err)
		}
		var stored *string
		if err := db.QueryRow(ctx, `SELECT string_agg(form_data, '' ORDER BY ordinal) FROM forms WHERE message_id = $1`, t.id).Scan(&stored); err != nil {
			return fmt.Errorf("task %s: forms: %w", t.id, err)
		}
		if len(archived) != 1 || archived[0].FormData != t.formData || deref(stored) != t.formData {
			v.dataMismatch++
			v.fail("task %s: the stored form data differs from what was sent", t.id)
		}
	}

	// Every print belongs to one archive: a print per archived task, none left by a rolled-back archive.
	var prints, archives int
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM prints), (SELECT count(*) FROM archives)`).Scan(&prints, &archives); err != nil {
		return err
	}
	if prints-printsBefore != v.archived+otherArchives || prints != archives {
		v.fail("%d prints were added for %d archived tasks (%d prints, %d archives in all)", prints-printsBefore, v.archived+otherArchives,
			prints, archives)
	}

	// Creations whose answer was lost: tasks of the run no client knows. They must still be untouched.
	rows, err := db.Query(ctx, `SELECT id, status FROM messages WHERE type = 'FormTask' AND created_date >= $1`, clock.Local(started))
	if err != nil {
		return err
	}
	type msg struct{ id, status string }
	created, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (msg, error) {
		var m msg
		return m, r.Scan(&m.id, &m.status)
	})
	if err != nil {
		return err
	}
	for _, m := range created {
		if known[m.id] {
			continue
		}
		v.orphans++
		if m.status != "Utfylling" {
			v.fail("task %s: created by a lost answer, yet %s", m.id, m.status)
		}
	}
	return nil
}

// checkWorkflows checks in Temporal that every task's workflow completed and that no workflow of the run
// failed, timed out, was terminated or is still running, but for the orders of calls to sign waiting for
// their reminders (waiting).
func checkWorkflows(ctx context.Context, c client.Client, tasks []*task, waiting map[string]bool, v *verdict) error {
	v.workflows = map[string]int{}
	var next []byte
	for {
		res, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000, NextPageToken: next})
		if err != nil {
			return err
		}
		for _, e := range res.Executions {
			if e.GetType().GetName() == webhook.SubscriptionWorkflow {
				continue // a subscription's delivery runs as long as the subscription (the events part checks it)
			}
			if waiting[e.GetExecution().GetWorkflowId()] && e.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				v.workflows[waitingForReminder]++
				continue
			}
			v.workflows[e.Status.String()]++
		}
		if next = res.NextPageToken; len(next) == 0 {
			break
		}
	}
	for status, n := range v.workflows {
		switch status {
		case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED.String(), enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW.String(), waitingForReminder:
		default:
			v.fail("%d workflows are %s", n, status)
		}
	}
	for _, t := range tasks {
		if t.id == "" {
			continue
		}
		d, err := c.DescribeWorkflowExecution(ctx, formtask.WorkflowID(t.id), "")
		if err != nil {
			v.fail("task %s: workflow: %v", t.id, err)
			continue
		}
		if s := d.WorkflowExecutionInfo.Status; s != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			v.fail("task %s: its workflow is %s", t.id, s)
		}
	}
	return nil
}

// waitingForReminder is how the report counts the orders of calls to sign that wait for their reminders.
const waitingForReminder = "Waiting for a reminder (calls to sign)"

// waitForWorkflows waits until no workflow runs any more but the orders of calls to sign waiting for their
// reminders, or until the deadline.
func waitForWorkflows(ctx context.Context, c client.Client, db *pgx.Conn, deadline time.Time) {
	for time.Now().Before(deadline) {
		res, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000,
			Query: `ExecutionStatus = "Running" AND WorkflowType != "` + webhook.SubscriptionWorkflow + `"`})
		waiting, derr := callOrders(ctx, db)
		if err == nil && derr == nil && len(res.NextPageToken) == 0 &&
			!slices.ContainsFunc(res.Executions, func(e *workflowpb.WorkflowExecutionInfo) bool { return !waiting[e.GetExecution().GetWorkflowId()] }) {
			return
		}
		sleep(ctx, time.Second)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func orDone(t *task) string {
	if t.failure != "" {
		return t.failure
	}
	return "archived"
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkFiles checks that PostgreSQL and the object store agree after the crashes: every blob's object is
// in the bucket's folder with the blob's size, and every archived content (attachments and prints) hashes
// to the digest its rows name. Objects no blob names (an upload cut by a crash, a duplicate whose delete
// was cut) are counted, not failed: the sweep deletes them after its grace period.
func checkFiles(ctx context.Context, db *pgx.Conn, bucketDir string, v *verdict) error {
	rows, err := db.Query(ctx, `SELECT b.sha256, b.object_key, b.size,
			EXISTS (SELECT FROM archive_blobs x WHERE x.sha256 = b.sha256) OR EXISTS (SELECT FROM prints p WHERE p.pdf_sha256 = b.sha256)
		FROM blobs b`)
	if err != nil {
		return err
	}
	type blob struct {
		sum      []byte
		key      string
		size     int64
		archived bool
	}
	blobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (b blob, err error) {
		return b, r.Scan(&b.sum, &b.key, &b.size, &b.archived)
	})
	if err != nil {
		return err
	}
	named := map[string]bool{}
	for _, b := range blobs {
		named[filepath.Clean(b.key)] = true
		v.blobs++
		path := filepath.Join(bucketDir, b.key)
		info, err := os.Stat(path)
		if err != nil {
			v.fail("blob %x: its object %s is not in the store: %v", b.sum, b.key, err)
			continue
		}
		if info.Size() != b.size {
			v.fail("blob %x: its object has %d bytes, the row says %d", b.sum, info.Size(), b.size)
			continue
		}
		if !b.archived {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		_ = f.Close()
		if err != nil {
			return err
		}
		if !bytes.Equal(h.Sum(nil), b.sum) {
			v.fail("archived content %x: its object hashes to %x", b.sum, h.Sum(nil))
		}
		v.archivedFiles++
	}
	return filepath.WalkDir(bucketDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(bucketDir, path)
		if !named[rel] && !strings.HasPrefix(rel, ".sgwtmp") {
			v.strayObjects++
		}
		return nil
	})
}
