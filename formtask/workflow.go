package formtask

import (
	"fmt"
	"time"

	"github.com/postbox/postbox/formtask/taskstatus"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
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
	shortActivity = retried(30*time.Second, 5*time.Minute)
	// Short idempotent work runs as local activities, in the workflow task that needs it, instead of
	// costing two server round trips each: DiscardRevision always; the checks before VersionTaskQueues;
	// the checks and ProjectState from VersionLocalWork on.
	localActivity = workflow.LocalActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 2 * time.Minute,
		RetryPolicy:            retryPolicy,
	}
	// The checks (XSD validation, attachment rules): from VersionTaskQueues to VersionLocalWork they ran
	// on the validation queue (ActivityTaskQueues).
	validationActivity = retried(30*time.Second, 2*time.Minute)
	// Archive and print render a PDF. StartToClose bounds an attempt that heartbeats but never ends; a
	// worker that dies is noticed by HeartbeatTimeout (from VersionHeartbeats on).
	renderActivity = retried(2*time.Minute, 10*time.Minute)
	// A submission's checks and archive as one local activity (version 2 of VersionLeanHistory) have
	// Archive's bounds; a worker that dies in one is noticed at the workflow task's timeout.
	archiveLocalActivity = workflow.LocalActivityOptions{
		StartToCloseTimeout:    renderActivity.StartToCloseTimeout,
		ScheduleToCloseTimeout: renderActivity.ScheduleToCloseTimeout,
		RetryPolicy:            retryPolicy,
	}
)

// retried is the options of an activity whose attempts last at most startToClose, retried by retryPolicy
// until scheduleToClose.
func retried(startToClose, scheduleToClose time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: startToClose, ScheduleToCloseTimeout: scheduleToClose, RetryPolicy: retryPolicy}
}

// queues are the activity options of a run: the task queues of ActivityTaskQueues from VersionTaskQueues
// on, everything on the workflow's own queue (and the checks local) for runs begun before; heartbeats from
// VersionHeartbeats on; the checks and the projection local from VersionLocalWork on; all of them, and one
// local activity for checks and projection, from VersionLeanHistory on; and from its version 2 one local
// activity for a submission's checks and archive.
type queues struct {
	split        bool
	heartbeat    bool
	local        bool
	lean         bool
	localArchive bool
}

// runQueues decides the queues of a run once, before any command. Runs from VersionLeanHistory record its
// marker alone; runs begun before replay their markers of the older changes.
func runQueues(ctx workflow.Context) queues {
	if v := workflow.GetVersion(ctx, VersionLeanHistory, workflow.DefaultVersion, 2); v >= 1 {
		return queues{split: true, heartbeat: true, local: true, lean: true, localArchive: v >= 2}
	}
	split := workflow.GetVersion(ctx, VersionTaskQueues, workflow.DefaultVersion, 1)
	heartbeat := workflow.GetVersion(ctx, VersionHeartbeats, workflow.DefaultVersion, 1)
	local := workflow.GetVersion(ctx, VersionLocalWork, workflow.DefaultVersion, 1)
	return queues{split: split >= 1, heartbeat: heartbeat >= 1, local: local >= 1}
}

// version is the version of a change made after VersionLeanHistory's changes: 1 in lean runs without a
// marker of its own, else that of its marker.
func (q queues) version(ctx workflow.Context, changeID string) workflow.Version {
	if q.lean {
		return 1
	}
	return workflow.GetVersion(ctx, changeID, workflow.DefaultVersion, 1)
}

// localChecks says whether the checks run as local activities: before the split and since VersionLocalWork.
func (q queues) localChecks() bool { return !q.split || q.local }

// heartbeating adds the HeartbeatTimeout to the options of a long activity in runs from VersionHeartbeats.
func (q queues) heartbeating(opts workflow.ActivityOptions) workflow.ActivityOptions {
	if q.heartbeat {
		opts.HeartbeatTimeout = HeartbeatTimeout
	}
	return opts
}

func (q queues) checks(ctx workflow.Context) workflow.Context {
	if q.localChecks() {
		return workflow.WithLocalActivityOptions(ctx, localActivity)
	}
	return workflow.WithActivityOptions(ctx, q.heartbeating(validationActivity))
}

func (q queues) execCheck(ctx workflow.Context, name string, arg any) workflow.Future {
	if q.localChecks() {
		return workflow.ExecuteLocalActivity(ctx, name, arg)
	}
	return workflow.ExecuteActivity(workflow.WithTaskQueue(ctx, ActivityTaskQueues[name]), name, arg)
}

// print and archive render (archive in the transaction that archives); projection is a short write.
func (q queues) print(ctx workflow.Context) workflow.Context {
	return q.on(ctx, q.heartbeating(renderActivity), ActivityRenderPrint)
}

func (q queues) archive(ctx workflow.Context) workflow.Context {
	return q.on(ctx, q.heartbeating(renderActivity), ActivityArchive)
}

func (q queues) project(ctx workflow.Context, in ProjectInput) workflow.Future {
	if q.local {
		return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localActivity), ActivityProjectState, in)
	}
	return workflow.ExecuteActivity(q.on(ctx, shortActivity, ActivityProjectState), ActivityProjectState, in)
}

func (q queues) on(ctx workflow.Context, opts workflow.ActivityOptions, activity string) workflow.Context {
	if q.split {
		opts.TaskQueue = ActivityTaskQueues[activity]
	}
	return workflow.WithActivityOptions(ctx, opts)
}

// FormTask is the workflow of one form task: it applies the updates of the interface one at a time, keeps
// the read model current through activities, and ends when the task is archived.
func FormTask(ctx workflow.Context, state TaskState) error {
	// Decided once per run, before any command: a run keeps the queues it began with.
	t := &task{state: state, mu: workflow.NewMutex(ctx), queues: runQueues(ctx)}
	if err := t.register(ctx); err != nil {
		return err
	}
	if err := t.publish(ctx); err != nil {
		return err
	}
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
	queues  queues         // where this run's activities go
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
	}
	for _, h := range handlers {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.name, h.handler,
			workflow.UpdateHandlerOptions{Validator: h.validator}); err != nil {
			return fmt.Errorf("register update %s: %w", h.name, err)
		}
	}
	return t.registerPlaceChanges(ctx)
}

// publish makes the task findable: search attributes and the subject as memo. Lean runs write only those
// the run was not started (or continued as new) with.
func (t *task) publish(ctx workflow.Context) error {
	attrs, memo := t.state.SearchAttributes(), t.state.Memo()
	if t.queues.lean {
		attrs, memo = t.unpublished(ctx)
	}
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

func reject(kind, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), kind, nil)
}

// wrongState is the refusal of a change the task's status does not allow; the status travels as the
// error's details, as the workflow knows it (the caller's copy may be older).
func (t *task) wrongState(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), ErrWrongState, nil, t.state.Status)
}

// Validators run before an update is written to history: a rejected update leaves no trace. They read the
// status without the lock, so the handlers check again once they hold it. They check the caller, the
// status and the shape of the input; the rules of the service's metadata are formtask's (the API checks
// them early, the activities again).

func checkRevision(r RevisionRef) error {
	if r.ID <= 0 || len(r.Digest) != 64 {
		return reject(ErrBadInput, "a revision id and its SHA-256 digest are required")
	}
	return nil
}

func checkForm(f FormRef) error {
	if f.Type == "" || f.DataFormatID == "" || f.DataFormatVersion <= 0 {
		return reject(ErrBadInput, "every form needs a Type, a DataFormatId and a DataFormatVersion")
	}
	return nil
}

func checkAttachment(a AttachmentRef) error {
	if a.FileName == "" || a.AttachmentType == "" || a.Size < 0 {
		return reject(ErrBadInput, "every attachment needs a FileName and an AttachmentType")
	}
	return nil
}

// changeRefusal is the state's ChangeRefusal, and the refusal of every change once the task is deleted
// for good.
func (t *task) changeRefusal(c Caller) error {
	if err := t.gone(); err != nil {
		return err
	}
	return t.state.ChangeRefusal(c)
}

// checkExpected refuses a change whose expectation (If-Match) the task does not meet.
func (t *task) checkExpected(e *Expectation) error {
	if e != nil && (e.Revision != t.state.Revision || e.Status != t.state.Status) {
		return reject(ErrPrecondition, "the form task has changed since it was read")
	}
	return nil
}

func (t *task) validateSubmit(_ workflow.Context, in SubmitInput) error {
	if err := t.changeRefusal(in.Caller); err != nil {
		return err
	}
	if err := t.checkExpected(in.Expect); err != nil {
		return err
	}
	if t.state.Status == taskstatus.Signing && !(in.Complete && in.Sign) {
		return t.wrongState("the form task awaits signing; only a submission that signs it is possible")
	}
	if in.Revision.ID == 0 {
		if len(in.Forms) > 0 || len(in.Attachments) > 0 {
			return reject(ErrBadInput, "the forms and attachments of the form task are required")
		}
		if t.state.Status != taskstatus.Signing { // signs as it is: only what awaits signing
			return t.wrongState("a submission without content signs a task in %s; the form task is in %s", taskstatus.Signing, t.state.Status)
		}
		return nil
	}
	if err := checkRevision(in.Revision); err != nil {
		return err
	}
	for _, f := range in.Forms {
		if err := checkForm(f); err != nil {
			return err
		}
	}
	for _, a := range in.Attachments {
		if err := checkAttachment(a); err != nil {
			return err
		}
	}
	return nil
}

func (t *task) validateFilling(c Caller, what string) error {
	if err := t.changeRefusal(c); err != nil {
		return err
	}
	if t.state.Status != taskstatus.Filling {
		return t.wrongState("%s is possible only while the form task is in %s, not %s", what, taskstatus.Filling, t.state.Status)
	}
	return nil
}

func (t *task) validateSubForm(_ workflow.Context, in SubFormInput) error {
	if err := t.validateFilling(in.Caller, "changing a sub-form"); err != nil {
		return err
	}
	if err := t.checkExpected(in.Expect); err != nil {
		return err
	}
	if err := checkRevision(in.Revision); err != nil {
		return err
	}
	return checkForm(in.Form)
}

func (t *task) validateAttachment(_ workflow.Context, in AttachmentInput) error {
	if err := t.validateFilling(in.Caller, "adding an attachment"); err != nil {
		return err
	}
	if err := checkRevision(in.Revision); err != nil {
		return err
	}
	return checkAttachment(in.Attachment)
}

func (t *task) validateValidate(_ workflow.Context, _ ReadInput) error {
	if err := t.gone(); err != nil {
		return err
	}
	if t.state.InTrashbin {
		return t.state.inTrashbinRefusal()
	}
	if t.state.Status != taskstatus.Filling {
		return t.wrongState("validation is possible only while the form task is in %s, not %s", taskstatus.Filling, t.state.Status)
	}
	return nil
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
	if target == taskstatus.Archived && t.queues.localArchive {
		return t.checkAndArchive(ctx, in.Caller, content)
	}
	projected := false
	if in.Revision.ID != 0 {
		projectTo := target
		if target == taskstatus.Archived {
			projectTo = "" // Archive promotes the revision
		}
		findings, err := t.checkAndProject(ctx, content, true, true, target != taskstatus.Filling, projectTo, in.Caller.Name)
		if err != nil {
			return Result{}, err
		}
		if len(findings.Errors) > 0 {
			v := findings.Result()
			return Result{Outcome: OutcomeInvalid, Status: t.state.Status, Validation: &v}, nil
		}
		projected = projectTo != ""
	}

	if target == taskstatus.Archived {
		// Archive promotes the revision and archives in one transaction.
		var ar ArchiveResult
		actx := t.queues.archive(ctx)
		err := workflow.ExecuteActivity(actx, ActivityArchive,
			ArchiveInput{Content: content, By: in.Caller.Name, At: workflow.Now(ctx)}).Get(ctx, &ar)
		if err != nil {
			return Result{}, err
		}
		return t.recordArchive(ctx, in.Caller, content, ar)
	}
	if !projected {
		if _, err := t.project(ctx, content, target, in.Caller.Name); err != nil {
			return Result{}, err
		}
	}
	if err := t.setStatus(ctx, target); err != nil {
		return Result{}, err
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

// checkAndArchive submits content to the archive in runs from version 2 of VersionLeanHistory: its checks
// and the archive in one local activity, which discards a revision the checks find invalid.
func (t *task) checkAndArchive(ctx workflow.Context, c Caller, content ContentRef) (Result, error) {
	in := CheckAndArchiveInput{Archive: ArchiveInput{Content: content, By: c.Name, At: workflow.Now(ctx)},
		ServiceCode: t.state.ServiceCode, ServiceEdition: t.state.ServiceEdition}
	var res CheckAndArchiveResult
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, archiveLocalActivity), ActivityCheckAndArchive, in).Get(ctx, &res)
	if err != nil {
		return Result{}, err
	}
	if len(res.Findings.Errors) > 0 {
		v := res.Findings.Result()
		return Result{Outcome: OutcomeInvalid, Status: t.state.Status, Validation: &v}, nil
	}
	return t.recordArchive(ctx, c, content, res.Archive)
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
	actx := t.queues.print(ctx)
	activity, arg := ActivityRenderPrint, any(t.state.MessageID)
	if in.FormID != 0 && t.queues.version(ctx, VersionFormPrint) == 1 {
		activity, arg = ActivityRenderFormPrint, FormPrintInput{MessageID: t.state.MessageID, FormID: in.FormID}
	}
	if err := workflow.ExecuteActivity(actx, activity, arg).Get(ctx, &pr); err != nil {
		return Result{}, err
	}
	return Result{Outcome: OutcomePrinted, Status: t.state.Status, PrintDigest: pr.Digest}, nil
}

// checked is what checkAndProject found: the findings of the checks and the Ref of the projection.
type checked struct {
	Findings
	ref int64
}

// checkAndProject runs the checks of content and, when they find no error and status is set, projects it
// (project) with status by by; a revision they find invalid is discarded. Lean runs do it all in one local
// activity; runs begun before schedule the checks, then the discard or the projection.
func (t *task) checkAndProject(ctx workflow.Context, content ContentRef, forms, attachments, final bool, status, by string) (checked, error) {
	if !t.queues.lean {
		findings, err := t.check(ctx, content, forms, attachments, final)
		if err != nil {
			return checked{}, err
		}
		if len(findings.Errors) > 0 {
			return checked{Findings: findings}, t.discard(ctx, content.Revision, nil)
		}
		var ref int64
		if status != "" {
			ref, err = t.project(ctx, content, status, by)
		}
		return checked{Findings: findings, ref: ref}, err
	}
	in := CheckAndProjectInput{Content: content, Forms: forms, Attachments: attachments,
		ServiceCode: t.state.ServiceCode, ServiceEdition: t.state.ServiceEdition, Final: final}
	if status != "" {
		in.Project = &ProjectInput{Content: content, Status: status, By: by, At: workflow.Now(ctx)}
	}
	var res CheckAndProjectResult
	if err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localActivity), ActivityCheckAndProject, in).Get(ctx, &res); err != nil {
		return checked{}, err
	}
	if status != "" && len(res.Findings.Errors) == 0 {
		t.promoted(content.Revision)
	}
	return checked{Findings: res.Findings, ref: res.Ref}, nil
}

// check validates the forms of content against their schemas and its attachments against the service's
// rules, both at once; final also applies the minimum counts of attachments.
func (t *task) check(ctx workflow.Context, content ContentRef, forms, attachments, final bool) (Findings, error) {
	actx := t.queues.checks(ctx)
	var futures []workflow.Future
	if forms {
		futures = append(futures, t.queues.execCheck(actx, ActivityValidateForms, content))
	}
	if attachments {
		futures = append(futures, t.queues.execCheck(actx, ActivityCheckAttachments, CheckAttachmentsInput{
			Content: content, ServiceCode: t.state.ServiceCode, ServiceEdition: t.state.ServiceEdition, Final: final,
		}))
	}
	var all Findings
	for _, f := range futures {
		var one Findings
		if err := f.Get(ctx, &one); err != nil {
			return Findings{}, err
		}
		all = all.Join(one)
	}
	return all, nil
}

// project writes the read model: promotes content's revision and sets status and last change.
func (t *task) project(ctx workflow.Context, content ContentRef, status, by string) (int64, error) {
	var pr ProjectResult
	err := t.queues.project(ctx, ProjectInput{Content: content, Status: status, By: by, At: workflow.Now(ctx)}).Get(ctx, &pr)
	if err == nil {
		t.promoted(content.Revision)
	}
	return pr.Ref, err
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
	actx := workflow.WithLocalActivityOptions(ctx, localActivity)
	if derr := workflow.ExecuteLocalActivity(actx, ActivityDiscardRevision,
		ContentRef{MessageID: t.state.MessageID, Revision: rev}).Get(ctx, nil); derr != nil {
		workflow.GetLogger(ctx).Warn("discarding a revision failed", "revision", rev.ID, "err", derr)
	}
	return err
}
