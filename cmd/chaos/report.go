package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/postbox/postbox/formtask"
)

// report is what the run found, printed at its end.
type report struct {
	cfg     settings
	tasks   []*task
	stats   *stats
	killer  *killer
	sender  *sender
	verdict *verdict
	clients time.Duration // how long the clients took
}

func (r *report) passed() bool {
	return len(r.problems()) == 0 && len(r.stats.bad5xx) == 0 && len(r.stats.odd) == 0
}

// problems are the failed checks other than answers: the crashes that went wrong, the verdict's, a
// component never crashed mid-archive, and a postbox process that exited on its own (it must wait for
// its dependencies instead).
func (r *report) problems() []string {
	st := r.killer.st
	problems := append(append([]string{}, r.killer.errors...), r.verdict.problems...)
	for _, c := range st.components() {
		if r.killer.midArchive[c.name()] == 0 {
			problems = append(problems, fmt.Sprintf("%s was never crashed while an Archive transaction was open", c.name()))
		}
	}
	for _, p := range []*proc{st.api, st.wrk} {
		if p.crashes > 0 {
			problems = append(problems, fmt.Sprintf("postbox %s exited on its own %d times (see %s.log)", p.label, p.crashes, p.label))
		}
	}
	return problems
}

// longestStall is the longest time from a worker crash to the archive of a task whose signature was
// under way at that moment, and that task.
func (r *report) longestStall() (time.Duration, string) {
	var longest time.Duration
	var which string
	for _, k := range r.killer.workerKills {
		for _, t := range r.tasks {
			if t.signFrom.IsZero() || t.done.IsZero() || t.signFrom.After(k) || t.done.Before(k) {
				continue
			}
			if d := t.done.Sub(k); d > longest {
				longest, which = d, t.id
			}
		}
	}
	return longest, which
}

func (r *report) print(w io.Writer, st *stack) {
	v, s, k := r.verdict, r.stats, r.killer
	fmt.Fprintf(w, "\n== chaos: seed %d ==\n", r.cfg.seed)
	fmt.Fprintf(w, "tasks:    %d submitted by %d clients in %s: %d archived (%d without their client learning it), %d lost, %d doubled, %d form data differing, %d prints missing; %d orphan creations (answer lost, never used)\n",
		len(r.tasks), r.cfg.clients, r.clients.Round(time.Second), v.archived, v.unconfirmed, v.lost, v.doubled, v.dataMismatch, v.printMissing, v.orphans)
	var kills []string
	for _, name := range []string{"api", "worker", "temporal", "postgres", "objects"} {
		kills = append(kills, fmt.Sprintf("%s %d (%d mid-archive)", name, k.kills[name], k.midArchive[name]))
	}
	fmt.Fprintf(w, "kills:    %s\n", strings.Join(kills, ", "))
	fmt.Fprintf(w, "restarts: api %d, worker %d, temporal %d, objects %d exits on their own (api and worker must wait for their dependencies instead)\n",
		st.api.crashes, st.wrk.crashes, st.temporal.crashes, st.objects.crashes)
	var answers []string
	for _, code := range sortedKeys(s.byStatus) {
		answers = append(answers, fmt.Sprintf("%d: %d", code, s.byStatus[code]))
	}
	for _, kind := range sortedKeys(s.transport) {
		answers = append(answers, fmt.Sprintf("%s: %d", kind, s.transport[kind]))
	}
	fmt.Fprintf(w, "answers:  %s\n", strings.Join(answers, ", "))
	stall, which := r.longestStall()
	fmt.Fprintf(w, "stall:    longest from a worker kill to the archive of a task being signed: %s (%s)\n", stall.Round(100*time.Millisecond), which)
	var wfs []string
	for _, status := range sortedKeys(v.workflows) {
		wfs = append(wfs, fmt.Sprintf("%s %d", strings.TrimPrefix(status, "WORKFLOW_EXECUTION_STATUS_"), v.workflows[status]))
	}
	fmt.Fprintf(w, "workflows: %s; %d runs took a state from the read model that a lost update committed (formtask.UpdateResync)\n",
		strings.Join(wfs, ", "), len(logLines(filepath.Join(st.dir, "worker.log"), formtask.LogResynced, 10*len(r.tasks))))
	fmt.Fprintf(w, "webhooks: %s\n", v.webhooks)
	fmt.Fprintf(w, "agency:   %d of %d archives received byte-exact (each part and the ZIP) and confirmed exactly once\n", v.received, v.archived)
	fmt.Fprintf(w, "sender:   %d of %d recipients of one shipment with exactly one message and one published event; crashes while its batches were held open: %v\n",
		v.sent, shipmentRecipients, r.sender.crashesWhileHeld(r.killer.crashes))
	fmt.Fprintf(w, "notices:  %d of %d in Mailpit exactly once (by Message-ID); %d begun more than once after a crash, sent again under the same Message-ID; worker crashes asked for while sent mails were unrecorded: %d\n",
		v.notified, shipmentRecipients, v.resent, r.killer.askedCrashes)
	fmt.Fprintf(w, "called:   %d of %d joint applications with each signee called to sign once (a message, one order, its first notices decided)\n",
		v.called, signingTasks)
	fmt.Fprintf(w, "signing:  %d of %d joint applications archived once with all %d signatures (three signed at once), each with its event\n",
		v.jointlySigned, signingTasks, 1+len(signees))
	fmt.Fprintf(w, "files:    %d blobs, each with its object at its size; %d archived contents re-hashed right; %d objects no blob names (left for the sweep)\n",
		v.blobs, v.archivedFiles, v.strayObjects)

	if len(s.bad5xx) > 0 {
		fmt.Fprintf(w, "\n%d answers were 5xx other than 503 with Retry-After:\n", len(s.bad5xx))
		for _, a := range first(s.bad5xx, 20) {
			fmt.Fprintf(w, "  %s (request %s)\n", describe(a), a.requestID)
			for _, line := range logLines(filepath.Join(st.dir, "api.log"), a.requestID, 3) {
				fmt.Fprintf(w, "    api.log: %s\n", truncate(line, 400))
			}
		}
	}
	if len(s.odd) > 0 {
		fmt.Fprintf(w, "\n%d answers the flow did not expect (the client read the task and carried on; the run fails):\n", len(s.odd))
		for _, g := range groupAnswers(s.odd) {
			fmt.Fprintf(w, "  %4d × %s (e.g. %s)\n", g.n, g.what, g.example)
		}
	}
	if problems := r.problems(); len(problems) > 0 {
		fmt.Fprintf(w, "\n%d problems:\n", len(problems))
		for _, p := range first(problems, 40) {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
}

type answerGroup struct {
	what, example string
	n             int
}

// groupAnswers counts answers by endpoint, status and problem detail, with the path of one of them.
func groupAnswers(as []answer) []answerGroup {
	groups := map[string]*answerGroup{}
	for _, a := range as {
		var p struct{ Type, Detail, Instance string }
		_ = json.Unmarshal([]byte(a.body), &p)
		what := fmt.Sprintf("%s: %d %s %q", a.endpoint, a.status, p.Type, p.Detail)
		if p.Type == "" {
			what = describe(a)
		}
		if groups[what] == nil {
			groups[what] = &answerGroup{what: what, example: p.Instance}
		}
		groups[what].n++
	}
	var out []answerGroup
	for _, what := range sortedKeys(groups) {
		out = append(out, *groups[what])
	}
	return out
}

func first[T any](s []T, n int) []T {
	return s[:min(n, len(s))]
}

// logLines returns up to n lines of a log file that mention needle.
func logLines(path, needle string, n int) []string {
	if needle == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && len(out) < n {
		if strings.Contains(sc.Text(), needle) {
			out = append(out, sc.Text())
		}
	}
	return out
}
