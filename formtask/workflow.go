package formtask

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask/taskstatus"
)

// MaxUpdatesPerRun bounds the updates one run handles before it continues as new, so that a task edited
// many times keeps a small history (each update adds its own events and those of its activities).
const MaxUpdatesPerRun = 40

// Activity options. Retries are unlimited within ScheduleToClose: the activities are idempotent, and a
// database that is briefly away must not fail a submission.
var (
	retryPolicy = &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
	}
	// Short idempotent work runs as local activities, in the workflow task of the update that needs it,
	// instead of costing two server round trips each: the checks with the projection (CheckAndProject),
	// the discard of a refused revision, a place change, the read of the read model (resync).
	localActivity = workflow.LocalActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 2 * time.Minute,
		RetryPolicy:            retryPolicy,
	}
	// A submission's checks and archive (CheckAndArchive) render the archive's PDF: an attempt may take as
	// long as a print. A worker that dies in one is noticed at the workflow task's timeout (10 s).
	archiveActivity = workflow.LocalActivityOptions{
		StartToCloseTimeout:    printActivity.StartToCloseTimeout,
		ScheduleToCloseTimeout: printActivity.ScheduleToCloseTimeout,
		RetryPolicy:            retryPolicy,
	}
	// A print renders a PDF on the validation queue's workers, which scale with the CPU work; it heartbeats,
	// so the attempt of a worker that dies moves on within HeartbeatTimeout instead of at StartToClose.
	printActivity = workflow.ActivityOptions{
		TaskQueue:              TaskQueueValidation,
		StartToCloseTimeout:    2 * time.Minute,
		ScheduleToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:       HeartbeatTimeout,
		RetryPolicy:            retryPolicy,
	}
)

// acts names the activities for the workflow: their methods are called by method value, so the compiler
// checks their arguments, and never run here (the workers run a *Activities of their own).
var acts *Activities

// local runs a local activity with the short options.
func local(ctx workflow.Context, activity, arg any) workflow.Future {
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localActivity), activity, arg)
}

// FormTask is the workflow of one form task: it applies the updates of the interface one at a time, keeps
// the read model current through activities, and ends when the task is archived.
func FormTask(ctx workflow.Context, state TaskState) error {
	t := &task{state: state, mu: workflow.NewMutex(ctx)}
	if err := t.register(ctx); err != nil {
		return err
	}
	if err := t.publish(ctx); err != nil {
		return err
	}
	workflow.Go(ctx, t.watchSigningDeadline)
	if err := workflow.Await(ctx, func() bool {
		return t.state.Status == taskstatus.Archived || t.purged || t.handled >= MaxUpdatesPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
	}); err != nil {
		return err
	}
	// Updates in progress must finish and answer their callers before this run ends.
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	if t.state.Status == taskstatus.Archived || t.purged {
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, FormTask, t.state)
}

type task struct {
	state   TaskState
	mu      workflow.Mutex // one update at a time past its validator: they read and write the same message
	handled int            // updates of this run
	purged  bool           // the task was deleted for good: the run ends
}

func (t *task) register(ctx workflow.Context) error {
	handlers := []struct {
		name               string
		handler, validator any
	}{
		{UpdateSubmit, t.submit, t.validateSubmit},
		{UpdateSubForm, t.putSubForm, t.validateSubForm},
		{UpdateAttachment, t.addAttachment, t.validateAttachment},
		{UpdateChangeContent, t.changeContent, t.validateContentChange},
		{UpdateValidate, t.validate, t.validateValidate},
		{UpdatePrint, t.print, nil}, // any status: tasks archived before Postbox have no archive print
		{UpdateResync, t.resync, t.validateResync},
		{UpdateSignees, t.putSignees, t.validateSignees},
		{UpdateSign, t.sign, t.validateSign},
		{UpdateReturnToFilling, t.returnToFilling, t.validateReturn},
	}
	for _, h := range handlers {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.name, h.handler,
			workflow.UpdateHandlerOptions{Validator: h.validator}); err != nil {
			return fmt.Errorf("register update %s: %w", h.name, err)
		}
	}
	return t.registerPlaceChanges(ctx)
}

// publish makes the task findable: search attributes and the subject as memo, those the run was not
// started (or continued as new) with (formtask starts runs with them).
func (t *task) publish(ctx workflow.Context) error {
	attrs, memo := t.unpublished(ctx)
	if len(attrs) > 0 {
		if err := workflow.UpsertTypedSearchAttributes(ctx, attrs...); err != nil {
			return err
		}
	}
	if len(memo) > 0 {
		return workflow.UpsertMemo(ctx, memo)
	}
	return nil
}

// unpublished returns the search attributes and memo of the task that the run does not have with the same
// value.
func (t *task) unpublished(ctx workflow.Context) ([]temporal.SearchAttributeUpdate, map[string]any) {
	have := workflow.GetTypedSearchAttributes(ctx)
	var attrs []temporal.SearchAttributeUpdate
	keyword := func(key temporal.SearchAttributeKeyKeyword, value string) {
		if got, ok := have.GetKeyword(key); !ok || got != value {
			attrs = append(attrs, key.ValueSet(value))
		}
	}
	keyword(SearchReportee, t.state.ReporteeID)
	keyword(SearchServiceCode, t.state.ServiceCode)
	if got, ok := have.GetInt64(SearchServiceEdition); !ok || got != int64(t.state.ServiceEdition) {
		attrs = append(attrs, SearchServiceEdition.ValueSet(int64(t.state.ServiceEdition)))
	}
	keyword(SearchStatus, t.state.Status)
	var subject string
	p, ok := workflow.GetInfo(ctx).Memo.GetFields()[MemoSubject]
	if ok && converter.GetDefaultDataConverter().FromPayload(p, &subject) == nil && subject == t.state.Subject {
		return attrs, nil
	}
	return attrs, t.state.Memo()
}

func (t *task) setStatus(ctx workflow.Context, status string) error {
	if status == t.state.Status {
		return nil
	}
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"from": t.state.Status, "to": status}).
		Counter(MetricTransitions).Inc(1)
	t.state.Status = status
	return workflow.UpsertTypedSearchAttributes(ctx, SearchStatus.ValueSet(status))
}

// lock takes the task's mutex for one update; the caller must call t.mu.Unlock.
func (t *task) lock(ctx workflow.Context) error {
	if err := t.mu.Lock(ctx); err != nil {
		return err
	}
	t.handled++
	return nil
}

func (t *task) submit(ctx workflow.Context, in SubmitInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := t.validateSubmit(ctx, in); err != nil {
		return Result{}, t.discard(ctx, in.Revision, err)
	}
	log := workflow.GetLogger(ctx)
	content := ContentRef{MessageID: t.state.MessageID, Revision: in.Revision}
	maySign := in.Caller.Sign && in.Caller.SecurityLevel >= in.Caller.RequiredLevel
	wantsSign := in.Complete && in.Sign
	if t.state.Status == taskstatus.Signing && !maySign {
		log.Info("sign refused", "caller", in.Caller.ID)
		return Result{Outcome: OutcomeSignRefused, Status: t.state.Status}, t.discard(ctx, in.Revision, nil)
	}

	target := taskstatus.Archived
	switch {
	case !in.Complete: // also with sign=false: nothing is completed
		target = taskstatus.Filling
	case !in.Sign || !maySign:
		target = taskstatus.Signing
	}
	if target == taskstatus.Archived {
		signer := in.Signer
		signer.MaySign = maySign
		return t.checkAndArchive(ctx, in.Caller, content, signer)
	}
	// A submission that does not archive has a revision: one without content only signs (validateSubmit).
	findings, err := t.checkAndProject(ctx, content, true, true, target != taskstatus.Filling, target, in.Caller.Name)
	if err != nil {
		return Result{}, err
	}
	if len(findings.Errors) > 0 {
		v := findings.Result()
		return Result{Outcome: OutcomeInvalid, Status: t.state.Status, Validation: &v}, nil
	}
	if p := findings.signing; p != nil && p.Refusal != "" {
		return Result{}, t.wrongState("%s", p.Refusal)
	}
	if err := t.setStatus(ctx, target); err != nil {
		return Result{}, err
	}
	if findings.signing != nil {
		t.enteredSigning(ctx, *findings.signing)
	}
	switch {
	case target == taskstatus.Signing && wantsSign:
		log.Info("sign refused; sent to signing", "caller", in.Caller.ID)
		return Result{Outcome: OutcomeSignRefused, Status: taskstatus.Signing}, nil
	case target == taskstatus.Signing:
		return Result{Outcome: OutcomeSentToSigning, Status: taskstatus.Signing}, nil
	}
	return Result{Outcome: OutcomeSaved, Status: taskstatus.Filling}, nil
}

// checkAndArchive submits content to the archive: its checks (when it has a revision) and the archive in
// one local activity, which discards a revision the checks find invalid. A task signed by several is not
// archived there but sent to Signering, or signed by signer (signedBySeveral).
func (t *task) checkAndArchive(ctx workflow.Context, c Caller, content ContentRef, signer Signer) (Result, error) {
	res, err := t.archive(ctx, c, content, false)
	if err != nil {
		return Result{}, err
	}
	if len(res.Findings.Errors) > 0 {
		v := res.Findings.Result()
		return Result{Outcome: OutcomeInvalid, Status: t.state.Status, Validation: &v}, nil
	}
	if res.Signing != nil {
		return t.signedBySeveral(ctx, content, *res.Signing, signer)
	}
	return t.recordArchive(ctx, c, content, res.Archive)
}

// archive runs CheckAndArchive; signed says every signing step of a task signed by several is signed.
func (t *task) archive(ctx workflow.Context, c Caller, content ContentRef, signed bool) (CheckAndArchiveResult, error) {
	in := CheckAndArchiveInput{Archive: ArchiveInput{Content: content, By: c.Name, At: workflow.Now(ctx)},
		ServiceCode: t.state.ServiceCode, ServiceEdition: t.state.ServiceEdition, Signed: signed}
	var res CheckAndArchiveResult
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, archiveActivity), acts.CheckAndArchive, in).Get(ctx, &res)
	return res, err
}

// recordArchive records the archive of content, which the run ends with, and answers the submission.
func (t *task) recordArchive(ctx workflow.Context, c Caller, content ContentRef, ar ArchiveResult) (Result, error) {
	t.state.ArchiveReference = ar.ArchiveReference
	t.promoted(content.Revision)
	if err := t.setStatus(ctx, taskstatus.Archived); err != nil {
		return Result{}, err
	}
	workflow.GetLogger(ctx).Info("form task archived", "archive_reference", ar.ArchiveReference, "caller", c.ID)
	return Result{Outcome: OutcomeArchived, Status: taskstatus.Archived, ArchiveReference: ar.ArchiveReference}, nil
}

func (t *task) putSubForm(ctx workflow.Context, in SubFormInput) (Result, error) {
	return t.addContent(ctx, in.Caller, in.Revision, func() error { return t.validateSubForm(ctx, in) }, true, false,
		func(r *Result, ref int64) { r.FormID = ref })
}

func (t *task) addAttachment(ctx workflow.Context, in AttachmentInput) (Result, error) {
	return t.addContent(ctx, in.Caller, in.Revision, func() error { return t.validateAttachment(ctx, in) }, false, true,
		func(r *Result, ref int64) { r.AttachmentID = ref })
}

// addContent checks and promotes a sub-form or attachment revision of a task in Utfylling. It holds the
// task's mutex, and validates the update again now that it does; a refused revision is discarded.
func (t *task) addContent(ctx workflow.Context, c Caller, rev RevisionRef, validate func() error, forms, attachments bool, setRef func(*Result, int64)) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := validate(); err != nil {
		return Result{}, t.discard(ctx, rev, err)
	}
	content := ContentRef{MessageID: t.state.MessageID, Revision: rev}
	findings, err := t.checkAndProject(ctx, content, forms, attachments, false, taskstatus.Filling, c.Name)
	if err != nil {
		return Result{}, err
	}
	if len(findings.Errors) > 0 {
		v := findings.Result()
		return Result{Outcome: OutcomeInvalid, Status: t.state.Status, Validation: &v}, nil
	}
	r := Result{Outcome: OutcomeSaved, Status: taskstatus.Filling}
	ref := findings.ref
	setRef(&r, ref)
	return r, nil
}

func (t *task) validate(ctx workflow.Context, _ ReadInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	if err := t.validateValidate(ctx, ReadInput{}); err != nil {
		return Result{}, err
	}
	findings, err := t.checkAndProject(ctx, ContentRef{MessageID: t.state.MessageID}, true, true, true, "", "")
	if err != nil {
		return Result{}, err
	}
	v := findings.Result()
	return Result{Outcome: OutcomeValidated, Status: t.state.Status, Validation: &v}, nil
}

func (t *task) print(ctx workflow.Context, in ReadInput) (Result, error) {
	if err := t.lock(ctx); err != nil {
		return Result{}, err
	}
	defer t.mu.Unlock()
	var pr PrintResult
	actx := workflow.WithActivityOptions(ctx, printActivity)
	var f workflow.Future
	if in.FormID != 0 {
		f = workflow.ExecuteActivity(actx, acts.RenderFormPrint, FormPrintInput{MessageID: t.state.MessageID, FormID: in.FormID})
	} else {
		f = workflow.ExecuteActivity(actx, acts.RenderPrint, t.state.MessageID)
	}
	if err := f.Get(ctx, &pr); err != nil {
		return Result{}, err
	}
	return Result{Outcome: OutcomePrinted, Status: t.state.Status, PrintDigest: pr.Digest}, nil
}

// checked is what checkAndProject found: the findings of the checks, the Ref of the projection, and the
// plan of a task signed by several sent to Signering.
type checked struct {
	Findings
	ref     int64
	signing *SigningPlan
}

// checkAndProject runs the checks of content and, when they find no error and status is set, projects it
// with status by by, all in one local activity; a revision they find invalid is discarded.
func (t *task) checkAndProject(ctx workflow.Context, content ContentRef, forms, attachments, final bool, status, by string) (checked, error) {
	in := CheckAndProjectInput{Content: content, Forms: forms, Attachments: attachments,
		ServiceCode: t.state.ServiceCode, ServiceEdition: t.state.ServiceEdition, Final: final}
	if status != "" {
		in.Project = &ProjectInput{Content: content, Status: status, By: by, At: workflow.Now(ctx)}
	}
	var res CheckAndProjectResult
	if err := local(ctx, acts.CheckAndProject, in).Get(ctx, &res); err != nil {
		return checked{}, err
	}
	if status != "" && len(res.Findings.Errors) == 0 && (res.Signing == nil || res.Signing.Refusal == "") {
		t.promoted(content.Revision)
	}
	return checked{Findings: res.Findings, ref: res.Ref, signing: res.Signing}, nil
}

// promoted records the revision now promoted into the message, which changes expect (checkExpected).
func (t *task) promoted(rev RevisionRef) {
	if rev.ID != 0 {
		t.state.Revision = rev.ID
	}
}

// discard deletes a revision that will not be applied and returns err. Failing to delete it loses nothing:
// store.DeleteStaleRevisions removes it later.
func (t *task) discard(ctx workflow.Context, rev RevisionRef, err error) error {
	if rev.ID == 0 {
		return err
	}
	if derr := local(ctx, acts.DiscardRevision, ContentRef{MessageID: t.state.MessageID, Revision: rev}).Get(ctx, nil); derr != nil {
		workflow.GetLogger(ctx).Warn("discarding a revision failed", "revision", rev.ID, "err", derr)
	}
	return err
}
