package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/notification"
)

// Signing by several: P1 fills in joint applications (5302/2, signed first by someone with Sign for the
// party, then by every signee the task names) in her own mailbox, names P2, P3 and P5, completes and signs
// them; then the three sign at once, each retrying like an integrator while the components crash. The
// checks demand every such task archived once with all four signatures (P1's and the three), none twice,
// none lost, each with its formtask.signed event, and one formtask.signing.completed; and each signee
// called to sign once, by a message and one notification order whose first round was decided (its
// workflow then waits days for its reminder, callOrders).

const signingTasks = 24

// signees are the persons each joint application names, with the last names that identify them.
var signees = []struct{ pid, lastName string }{
	{"03919023480", "Bakketun"}, {"27828534586", "Haugland"}, {"01928216752", "Brekke"},
}

type signingTask struct {
	index   int
	id      string
	failure string // why a client gave up, if one did
}

type signers struct {
	filler  *integrator   // P1
	signees []*integrator // one client per signee, in the order of signees
	body    []byte        // the task's content: the forms of the dataset's a3101116
	tasks   []*signingTask
}

// newSigners makes the clients of the signing part; tokens are the signees' bearer tokens, in order.
func newSigners(ctx context.Context, db *pgx.Conn, filler integrator, tokens []string, seed uint64) (*signers, error) {
	var forms []map[string]any
	rows, err := db.Query(ctx, `SELECT type, data_format_id, data_format_version, form_data FROM forms
		WHERE message_id = 'a3101116' ORDER BY ordinal`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var typ, format, data string
		var version int
		if err := rows.Scan(&typ, &format, &version, &data); err != nil {
			return nil, err
		}
		forms = append(forms, map[string]any{"Type": typ, "DataFormatId": format, "DataFormatVersion": version, "FormData": data})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]any{"Type": "FormTask", "ServiceCode": "5302", "ServiceEdition": 2,
		"_embedded": map[string]any{"forms": forms}})
	if err != nil {
		return nil, err
	}
	s := &signers{filler: &filler, body: body}
	for i, tok := range tokens {
		in := filler
		in.token, in.readsFirst = tok, false
		in.rng = rand.New(rand.NewPCG(seed, uint64(2_000_000+i)))
		s.signees = append(s.signees, &in)
	}
	for i := range signingTasks {
		s.tasks = append(s.tasks, &signingTask{index: i})
	}
	return s, nil
}

// run takes every task through its life, three at a time.
func (s *signers) run(ctx context.Context) {
	var wg sync.WaitGroup
	queue := make(chan *signingTask, len(s.tasks))
	for _, t := range s.tasks {
		queue <- t
	}
	close(queue)
	for range 3 {
		wg.Go(func() {
			for t := range queue {
				if err := s.life(ctx, t); err != nil {
					t.failure = err.Error()
				}
			}
		})
	}
	wg.Wait()
}

func (s *signers) mailbox() string { return s.filler.base + "/api/" + integratorPID + "/messages" }

// life creates the task empty (a creation whose answer was lost leaves an orphan in Utfylling without a
// workflow, as the integrators' do), names its signees, completes and signs it, and has the three sign at
// once.
func (s *signers) life(ctx context.Context, t *signingTask) error {
	f := s.filler
	err := f.step(ctx, "create a joint application", func() (bool, response, answer, error) {
		r, a := f.call(ctx, http.MethodPost, s.mailbox(), "/api/{who}/messages", []byte(`{"Type":"FormTask","ServiceCode":"5302","ServiceEdition":2}`))
		if r.status != http.StatusCreated {
			return false, r, a, nil
		}
		loc := r.header.Get("Location")
		t.id = loc[strings.LastIndex(loc, "/")+1:]
		return true, r, a, nil
	})
	if err != nil {
		return err
	}
	names := make([]map[string]string, len(signees))
	for i, p := range signees {
		names[i] = map[string]string{"SocialSecurityNumber": p.pid, "LastName": p.lastName}
	}
	list, _ := json.Marshal(map[string]any{"Signees": names})
	err = f.step(ctx, "name the signees", func() (bool, response, answer, error) {
		r, a := f.call(ctx, http.MethodPut, s.mailbox()+"/"+t.id+"/signees", "/api/{who}/messages/{id}/signees", list)
		return r.status == http.StatusOK, r, a, nil
	})
	if err != nil {
		return err
	}
	// A completion repeated after its answer was lost learns from the 409 that the task is in Signering.
	err = f.step(ctx, "complete and sign", func() (bool, response, answer, error) {
		r, a := f.call(ctx, http.MethodPut, s.mailbox()+"/"+t.id, "/api/{who}/messages/{id}", s.body)
		return (r.status == http.StatusOK && r.field("Status") == statusSigning) ||
			(r.status == http.StatusConflict && r.field("taskStatus") == statusSigning), r, a, nil
	})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(s.signees))
	for i, in := range s.signees {
		wg.Go(func() {
			errs[i] = in.step(ctx, "sign as a signee", func() (bool, response, answer, error) {
				r, a := in.call(ctx, http.MethodPost, in.base+"/api/my/signing/"+t.id, "/api/my/signing/{id}", nil)
				return r.status == http.StatusOK, r, a, nil
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// callOrders are the workflow ids of the notification orders of calls to sign: after their first round
// they wait days for their reminder, so they are the run's workflows that rightly still run.
func callOrders(ctx context.Context, db *pgx.Conn) (map[string]bool, error) {
	rows, err := db.Query(ctx, `SELECT order_id::text FROM task_call_orders`)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	out := map[string]bool{}
	for _, id := range ids {
		out[notification.WorkflowID(id)] = true
	}
	return out, err
}

// check demands every task archived once, with its four signatures (none voided, none twice) in the task
// and in its archive, four formtask.signed events and one formtask.signing.completed. It returns the tasks'
// ids, for the orphan check, and how many archived.
func (s *signers) check(ctx context.Context, db *pgx.Conn, v *verdict) (map[string]bool, int, error) {
	ids := map[string]bool{}
	archived := 0
	for _, t := range s.tasks {
		if t.id == "" {
			v.fail("joint application %d: never created (%s)", t.index, t.failure)
			continue
		}
		ids[t.id] = true
		var (
			status                                                      string
			archives, signatures, signers, inArchive, signed, completed int
		)
		err := db.QueryRow(ctx, `SELECT m.status, (SELECT count(*) FROM archives a WHERE a.message_id = m.id),
				(SELECT count(*) FROM task_signatures s WHERE s.message_id = m.id AND s.voided_at IS NULL),
				(SELECT count(DISTINCT s.signer_party_id) FROM task_signatures s WHERE s.message_id = m.id),
				COALESCE((SELECT jsonb_array_length(a.signatures) FROM archives a WHERE a.message_id = m.id), 0),
				(SELECT count(*) FROM events e WHERE e.message_id = m.id AND e.type = 'no.postbox.formtask.signed.v1'),
				(SELECT count(*) FROM events e WHERE e.message_id = m.id AND e.type = 'no.postbox.formtask.signing.completed.v1')
			FROM messages m WHERE m.id = $1`, t.id).Scan(&status, &archives, &signatures, &signers, &inArchive, &signed, &completed)
		if err != nil {
			return nil, 0, fmt.Errorf("joint application %s: %w", t.id, err)
		}
		want := 1 + len(signees)
		switch {
		case status != statusArchive || archives != 1:
			v.fail("joint application %s: %s with %d archives (the clients: %s)", t.id, status, archives, orNone(t.failure))
		case signatures != want || signers != want || inArchive != want:
			v.fail("joint application %s: %d signatures by %d signers, %d in its archive; want %d each", t.id, signatures, signers, inArchive, want)
		case signed != want || completed != 1:
			v.fail("joint application %s: %d formtask.signed and %d formtask.signing.completed events", t.id, signed, completed)
		default:
			v.jointlySigned++
		}
		var calls, orders, decided int
		err = db.QueryRow(ctx, `SELECT (SELECT count(*) FROM messages WHERE body LIKE '%/signing/' || $1),
				count(DISTINCT r.order_id), count(s.*) FILTER (WHERE s.state <> 'sending')
			FROM messages m JOIN notification_recipients r ON r.message_id = m.id
			LEFT JOIN notification_sends s ON s.order_id = r.order_id AND s.ordinal = r.ordinal AND s.round = 0
			WHERE m.body LIKE '%/signing/' || $1`, t.id).Scan(&calls, &orders, &decided)
		if err != nil {
			return nil, 0, fmt.Errorf("joint application %s: its calls to sign: %w", t.id, err)
		}
		if calls == len(signees) && orders == 1 && decided == len(signees) {
			v.called++
		} else {
			v.fail("joint application %s: %d calls to sign, in %d notification orders, %d of their first notices decided; want %d, 1, %d",
				t.id, calls, orders, decided, len(signees), len(signees))
		}
		if archives > 0 {
			archived++
		}
		if t.failure != "" {
			v.fail("joint application %s: a client gave up: %s", t.id, t.failure)
		}
	}
	return ids, archived, nil
}

func orNone(s string) string {
	if s == "" {
		return "none gave up"
	}
	return s
}
