package formtask

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/activity"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

// taskMessage is task t as the events of its changes name it.
func taskMessage(t Task) (events.Message, error) {
	reportee, err := strconv.ParseInt(strings.TrimPrefix(t.ReporteeID, "r"), 10, 64)
	return events.Message{MessageID: t.MessageID, ReporteeID: reportee, Type: store.TypeFormTask, ServiceCode: t.ServiceCode,
		ServiceEdition: t.ServiceEdition, Status: t.Status, ArchiveReference: t.ArchiveReference}, err
}

// signing is what the signing of one task is decided from, read in its transaction.
type signing struct {
	task    Task
	message events.Message
	steps   []store.SigningStep
	signees []TaskSignee
	active  []Signature // not voided
}

func readSigning(ctx context.Context, q Store, messageID string) (signing, error) {
	var s signing
	var err error
	if s.task, err = q.GetFormTask(ctx, messageID); err != nil {
		return s, err
	}
	if s.message, err = taskMessage(s.task); err != nil {
		return s, err
	}
	svc, err := q.GetService(ctx, s.task.ServiceCode, s.task.ServiceEdition)
	if err != nil {
		return s, err
	}
	if s.signees, err = q.ListTaskSignees(ctx, messageID); err != nil {
		return s, err
	}
	s.steps = signingSteps(svc, len(s.signees))
	all, err := q.ListSignatures(ctx, messageID)
	for _, sig := range all {
		if sig.VoidedAt == nil {
			s.active = append(s.active, sig)
		}
	}
	return s, err
}

// planSigning reads the signing of a task being completed or signed at at: nil for a task signed once, as
// always (one query finds that); else its steps and deadline, and why it cannot be completed yet.
func (a *Activities) planSigning(ctx context.Context, messageID string, at time.Time) (*SigningPlan, error) {
	q := NewStore(store.New(a.Pool))
	if several, err := q.SignedBySeveral(ctx, messageID); err != nil || !several {
		return nil, err
	}
	t, err := q.GetFormTask(ctx, messageID)
	if err != nil {
		return nil, err
	}
	svc, err := q.GetService(ctx, t.ServiceCode, t.ServiceEdition)
	if err != nil {
		return nil, err
	}
	signees, err := q.ListTaskSignees(ctx, messageID)
	if err != nil {
		return nil, err
	}
	deadline, err := q.TaskSigningDeadline(ctx, messageID)
	if err != nil {
		return nil, err
	}
	switch {
	case deadline != nil:
		instant := clock.Instant(*deadline)
		deadline = &instant
	case svc.SigningDeadlineDays > 0:
		due := at.Add(time.Duration(svc.SigningDeadlineDays) * 24 * time.Hour)
		deadline = &due
	}
	steps := signingSteps(svc, len(signees))
	return &SigningPlan{Steps: len(steps), Deadline: deadline, Refusal: planRefusal(steps, len(signees))}, nil
}

// toSigning is a submission to the archive of a task signed by several with plan: its completion goes to
// Signering (its revision promoted, as a projection does), a Refusal or content sent while in Signering
// (locked there) discards the revision, and a signature of the task as it is changes nothing here.
func (a *Activities) toSigning(ctx context.Context, in ArchiveInput, plan *SigningPlan) error {
	t, err := NewStore(store.New(a.Pool)).GetFormTask(ctx, in.Content.MessageID)
	if err != nil {
		return err
	}
	switch {
	case plan.Refusal != "":
		return a.discard(ctx, in.Content)
	case t.Status == taskstatus.Signing && in.Content.Revision.ID != 0 && !a.promotedAlready(ctx, in.Content):
		plan.Refusal = "the content is locked while signatures are collected: send the task back to " + taskstatus.Filling +
			" (DELETE …/signatures) to change it"
		return a.discard(ctx, in.Content)
	case t.Status == taskstatus.Signing:
		return nil
	}
	pr, err := a.projectState(ctx, ProjectInput{Content: in.Content, Status: taskstatus.Signing, By: in.By, At: in.At, Signing: plan})
	plan.Notify = pr.Notify
	return err
}

// promotedAlready tells whether c's revision is promoted: an attempt retried after its projection committed.
func (a *Activities) promotedAlready(ctx context.Context, c ContentRef) bool {
	rev, err := NewStore(store.New(a.Pool)).GetRevision(ctx, c.Revision.ID)
	return err == nil && rev.Promoted
}

// discard deletes c's revision, if it has one; failing to loses nothing (store.DeleteStaleRevisions).
func (a *Activities) discard(ctx context.Context, c ContentRef) error {
	if c.Revision.ID == 0 {
		return nil
	}
	if err := a.DiscardRevision(ctx, c); err != nil {
		activity.GetLogger(ctx).Warn("discarding a revision failed", "revision", c.Revision.ID, "err", err)
	}
	return nil
}

// RecordSignature decides one signature in one transaction: a signer who signed for that signee already
// gets the same answer; one the current step does not admit, or who read content that has changed since,
// is refused; else the signature is recorded with the digest of the content, with its FormTaskSigned
// event, and FormTaskSigningCompleted when it completes the last step.
func (a *Activities) RecordSignature(ctx context.Context, in RecordSignatureInput) (RecordSignatureResult, error) {
	var res RecordSignatureResult
	err := store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := NewStore(store.NewTx(tx))
		s, err := readSigning(ctx, q, in.MessageID)
		if err != nil {
			return err
		}
		if len(s.steps) == 0 {
			res = RecordSignatureResult{Decision: SignatureRefused, Detail: "the task names no signees and its service declares no signing steps"}
			return nil
		}
		if signedBy(s.active, in.Signer) {
			res = RecordSignatureResult{Decision: SignatureRepeated, Complete: currentStep(s.steps, len(s.signees), s.active) == len(s.steps)}
			return nil
		}
		digest, err := q.ContentDigest(ctx, in.MessageID)
		if err != nil {
			return err
		}
		if in.Expect != "" && !strings.EqualFold(in.Expect, digest) {
			res = RecordSignatureResult{Decision: SignatureRefused, Stale: true,
				Detail: "the content of the task has changed since you read it: read it again, and sign what is there"}
			return nil
		}
		cur := currentStep(s.steps, len(s.signees), s.active)
		if cur == len(s.steps) {
			res = RecordSignatureResult{Decision: SignatureRepeated, Complete: true}
			return nil
		}
		step := s.steps[cur]
		var facts stepFacts
		switch step.Signees {
		case store.SigneesByRole:
			if facts.holdsRole, err = q.HoldsRoleCode(ctx, in.Signer.PartyID, s.message.ReporteeID, step.RoleDefinitionCode); err != nil {
				return err
			}
		case store.SigneesOrganization:
			if facts.organization, err = q.OrganizationParty(ctx, step.OrganizationNumber); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		onBehalf, why := admit(cur, step, in.Signer, s.message.ReporteeID, s.signees, facts)
		if why != "" {
			res = RecordSignatureResult{Decision: SignatureRefused, Detail: why}
			return nil
		}
		sig := Signature{Step: cur + 1, SignerPartyID: in.Signer.PartyID, SignerName: in.Signer.Name, OnBehalfOfPartyID: onBehalf,
			SignedAt: clock.Local(in.At), ContentDigest: digest}
		if sig.ID, err = q.InsertSignature(ctx, in.MessageID, sig); err != nil || sig.ID == 0 {
			res = RecordSignatureResult{Decision: SignatureRepeated}
			return err
		}
		evs := []store.Event{a.Events.SignatureEvent(events.FormTaskSigned, events.Signature{Message: s.message, SignatureID: sig.ID,
			Step: sig.Step, Signer: sig.SignerPartyID, OnBehalfOf: onBehalf})}
		res = RecordSignatureResult{Decision: SignatureRecorded,
			Complete: currentStep(s.steps, len(s.signees), append(s.active, sig)) == len(s.steps)}
		if res.Complete {
			evs = append(evs, a.Events.MessageEvent(events.FormTaskSigningCompleted, s.message))
		}
		return q.AppendEvents(ctx, evs...)
	})
	return res, err
}

// ReturnToFilling sends a task in Signering back to Utfylling in one transaction: its signatures voided
// (each with FormTaskSignatureVoided) and its status set (with FormTaskStatusChanged).
func (a *Activities) ReturnToFilling(ctx context.Context, in ReturnToFillingInput) error {
	return store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := NewStore(store.NewTx(tx))
		voided, err := q.VoidSignatures(ctx, in.MessageID, clock.Local(in.At))
		if err != nil {
			return err
		}
		changed, err := q.SetFormTaskState(ctx, in.MessageID, taskstatus.Filling, in.By, clock.Local(in.At))
		if err != nil {
			return err
		}
		if err := q.DropServiceSigningDeadline(ctx, in.MessageID); err != nil {
			return err
		}
		t, err := q.GetFormTask(ctx, in.MessageID)
		if err != nil {
			return err
		}
		m, err := taskMessage(t)
		if err != nil {
			return err
		}
		evs := make([]store.Event, 0, len(voided)+1)
		for _, v := range voided {
			evs = append(evs, a.Events.SignatureEvent(events.FormTaskSignatureVoided, events.Signature{Message: m, SignatureID: v.ID,
				Step: v.Step, Signer: v.SignerPartyID, OnBehalfOf: v.OnBehalfOfPartyID}))
		}
		if changed {
			evs = append(evs, a.Events.MessageEvent(events.FormTaskStatusChanged, m))
		}
		return q.AppendEvents(ctx, evs...)
	})
}

// WriteSigneesInput is the signee list of a task, by party id, in order, and its signing deadline.
type WriteSigneesInput struct {
	MessageID string
	PartyIDs  []int64
	Deadline  *time.Time `json:",omitempty"`
}

// WriteSignees makes in.PartyIDs the task's signees, with in.Deadline.
func (a *Activities) WriteSignees(ctx context.Context, in WriteSigneesInput) error {
	return NewStore(store.New(a.Pool)).ReplaceTaskSignees(ctx, in.MessageID, in.PartyIDs, in.Deadline)
}

// MarkSigningOverdue writes FormTaskSigningOverdue for a task still in Signering at its deadline, once.
func (a *Activities) MarkSigningOverdue(ctx context.Context, in SigningOverdueInput) error {
	return store.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := NewStore(store.NewTx(tx))
		t, err := q.GetFormTask(ctx, in.MessageID)
		if err != nil || t.Status != taskstatus.Signing {
			return err
		}
		var written bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM events WHERE message_id = $1 AND type = $2 AND time >= $3)`,
			in.MessageID, events.FormTaskSigningOverdue, in.Deadline.Add(-time.Minute)).Scan(&written); err != nil || written {
			return err
		}
		m, err := taskMessage(t)
		if err != nil {
			return err
		}
		return q.AppendEvents(ctx, a.Events.MessageEvent(events.FormTaskSigningOverdue, m))
	})
}
