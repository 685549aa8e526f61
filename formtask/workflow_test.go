package formtask_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/internal/temporaltest"
)

// fakeActivities stand in for the activities: they record what the workflow asked for, the steps of the
// local activities CheckAndProject and CheckAndArchive (ValidateForms, CheckAttachments, ProjectState,
// Archive) by the name of each step.
type fakeActivities struct {
	mu      sync.Mutex
	calls   []string // "<activity> <revision id>"
	invalid bool     // ValidateForms reports an error
	slow    time.Duration
	// lostArchives is how many attempts of CheckAndArchive archive and then fail, as when the worker
	// dies before it answers; the next attempt finds the archive.
	lostArchives int
	readModel    formtask.ReadModelState // what ReadTaskState finds
	// Signing (workflow_signing_test.go): the plan CheckAndArchive and CheckAndProject find (none by
	// default), how many signatures complete it, the signers not admitted, the signers recorded, and
	// whether the task was sent to Signering (its content then locked).
	plan       formtask.SigningPlan
	needed     int
	notSignees map[int64]bool
	signed     []int64
	inSigning  bool
}

// signing is the plan the checks answer for a task signed by several: nil for one signed once.
func (f *fakeActivities) signing() *formtask.SigningPlan {
	if f.plan.Steps == 0 {
		return nil
	}
	p := f.plan
	return &p
}

func (f *fakeActivities) record(name string, rev int64) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %d", name, rev))
	f.mu.Unlock()
	time.Sleep(f.slow)
}

func (f *fakeActivities) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeActivities) register(env *testsuite.TestWorkflowEnvironment) {
	reg := func(fn any, name string) { env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	validateForms := func(c formtask.ContentRef) (formtask.Findings, error) {
		f.record("ValidateForms", c.Revision.ID)
		if f.invalid {
			return formtask.Findings{Errors: []formtask.ValidationEntry{{FieldName: "AntallAnsatte", ErrorMessage: "too many", FieldXPath: "/Skjema/AntallAnsatte"}}}, nil
		}
		return formtask.Findings{}, nil
	}
	checkAttachments := func(in formtask.CheckAttachmentsInput) (formtask.Findings, error) {
		f.record("CheckAttachments", in.Content.Revision.ID)
		return formtask.Findings{Warnings: []formtask.ValidationEntry{{FieldName: "a.pdf", ErrorMessage: "w"}}}, nil
	}
	projectState := func(in formtask.ProjectInput) (formtask.ProjectResult, error) {
		f.record("ProjectState"+"("+in.Status+")", in.Content.Revision.ID)
		return formtask.ProjectResult{Ref: 200777}, nil
	}
	discardRevision := func(c formtask.ContentRef) error {
		f.record("DiscardRevision", c.Revision.ID)
		return nil
	}
	reg(discardRevision, "DiscardRevision")
	// As formtask.CheckAndProject, with the steps above.
	reg(func(in formtask.CheckAndProjectInput) (formtask.CheckAndProjectResult, error) {
		var res formtask.CheckAndProjectResult
		if in.Forms {
			found, _ := validateForms(in.Content)
			res.Findings = res.Findings.Join(found)
		}
		if in.Attachments {
			found, _ := checkAttachments(formtask.CheckAttachmentsInput{Content: in.Content, Final: in.Final})
			res.Findings = res.Findings.Join(found)
		}
		if in.Project != nil && in.Project.Status == taskstatus.Signing && len(res.Findings.Errors) == 0 {
			if res.Signing = f.signing(); res.Signing != nil && res.Signing.Refusal != "" {
				_ = discardRevision(in.Content)
				return res, nil
			}
		}
		switch {
		case len(res.Findings.Errors) > 0 && in.Content.Revision.ID != 0:
			_ = discardRevision(in.Content)
		case len(res.Findings.Errors) == 0 && in.Project != nil:
			pr, _ := projectState(*in.Project)
			res.Ref = pr.Ref
			f.inSigning = in.Project.Status == taskstatus.Signing
		}
		return res, nil
	}, "CheckAndProject")
	archive := func(in formtask.ArchiveInput) (formtask.ArchiveResult, error) {
		f.record("Archive", in.Content.Revision.ID)
		return formtask.ArchiveResult{ArchiveReference: "AR7000001", PrintDigest: strings.Repeat("ab", 32)}, nil
	}
	// As formtask.CheckAndArchive, with the steps above.
	reg(func(in formtask.CheckAndArchiveInput) (formtask.CheckAndArchiveResult, error) {
		var res formtask.CheckAndArchiveResult
		c := in.Archive.Content
		if c.Revision.ID != 0 {
			found, _ := validateForms(c)
			res.Findings = res.Findings.Join(found)
			found, _ = checkAttachments(formtask.CheckAttachmentsInput{Content: c, Final: true})
			res.Findings = res.Findings.Join(found)
			if len(res.Findings.Errors) > 0 {
				return res, discardRevision(c)
			}
		}
		if res.Signing = f.signing(); res.Signing != nil && !in.Signed { // as toSigning
			switch {
			case res.Signing.Refusal != "":
				_ = discardRevision(c)
			case f.inSigning && c.Revision.ID != 0:
				res.Signing.Refusal = "the content is locked"
				_ = discardRevision(c)
			case !f.inSigning:
				_, _ = projectState(formtask.ProjectInput{Content: c, Status: taskstatus.Signing})
				f.inSigning = true
			}
			return res, nil
		}
		res.Signing = nil
		res.Archive, _ = archive(in.Archive)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.lostArchives > 0 {
			f.lostArchives--
			return formtask.CheckAndArchiveResult{}, errors.New("worker lost")
		}
		return res, nil
	}, "CheckAndArchive")
	reg(func(messageID string) (formtask.ReadModelState, error) {
		f.record("ReadTaskState", 0)
		return f.readModel, nil
	}, "ReadTaskState")
	reg(func(messageID string) (formtask.PrintResult, error) {
		f.record("RenderPrint", 0)
		return formtask.PrintResult{Digest: strings.Repeat("cd", 32)}, nil
	}, "RenderPrint")
	f.registerSigning(reg)
}

// registerSigning registers the signing activities over f's plan and signatures.
func (f *fakeActivities) registerSigning(reg func(fn any, name string)) {
	reg(func(in formtask.RecordSignatureInput) (formtask.RecordSignatureResult, error) {
		f.record("RecordSignature", in.Signer.PartyID)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.notSignees[in.Signer.PartyID] {
			return formtask.RecordSignatureResult{Decision: formtask.SignatureRefused, Detail: "not a signee of this step"}, nil
		}
		if slices.Contains(f.signed, in.Signer.PartyID) {
			return formtask.RecordSignatureResult{Decision: formtask.SignatureRepeated, Complete: len(f.signed) >= f.needed}, nil
		}
		f.signed = append(f.signed, in.Signer.PartyID)
		return formtask.RecordSignatureResult{Decision: formtask.SignatureRecorded, Complete: len(f.signed) >= f.needed}, nil
	}, "RecordSignature")
	reg(func(in formtask.ReturnToFillingInput) error {
		f.record("ReturnToFilling", 0)
		f.mu.Lock()
		f.signed, f.inSigning = nil, false
		f.mu.Unlock()
		return nil
	}, "ReturnToFilling")
	reg(func(in formtask.WriteSigneesInput) error {
		f.record("WriteSignees", int64(len(in.PartyIDs)))
		return nil
	}, "WriteSignees")
	reg(func(in formtask.SigningOverdueInput) error {
		f.record("MarkSigningOverdue", 0)
		return nil
	}, "MarkSigningOverdue")
}

type outcome struct {
	res      formtask.Result
	err      error
	rejected bool
}

// send sends an update at the given workflow time and records its outcome.
func send(env *testsuite.TestWorkflowEnvironment, at time.Duration, name string, arg any) *outcome {
	o := &outcome{}
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { o.err, o.rejected = err, true },
			OnComplete: func(v any, err error) {
				o.err = err
				if r, ok := v.(formtask.Result); ok {
					o.res = r
				}
			},
		}, arg)
	}, at)
	return o
}

// at is when to send the update: at once to an archived task, whose run ends in its first workflow task
// (UpdateWithStart delivers the update in that task).
func at(status string) time.Duration {
	if status == taskstatus.Archived {
		return 0
	}
	return time.Minute
}

func newEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *fakeActivities) {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := temporaltest.Unhurried(s.NewTestWorkflowEnvironment())
	f := &fakeActivities{}
	f.register(env)
	return env, f
}

// run runs the workflow from status until the updates are done, then cancels it unless it ended itself.
func run(env *testsuite.TestWorkflowEnvironment, status string) { runFor(env, status, time.Hour) }

// runFor is run, cancelling the workflow after d.
func runFor(env *testsuite.TestWorkflowEnvironment, status string, d time.Duration) {
	env.RegisterDelayedCallback(env.CancelWorkflow, d)
	env.ExecuteWorkflow(formtask.FormTask, formtask.TaskState{
		MessageID: "a3101102", ReporteeID: "r50001", ServiceCode: "4711", ServiceEdition: 2, Subject: "Årsoppgave", Status: status,
	})
}

var (
	writer = formtask.Caller{Name: "Sigrid Haugland", ID: "l3", Write: true, SecurityLevel: 1, RequiredLevel: 1}
	signer = formtask.Caller{Name: "Ingrid Fjellheim", ID: "l1", Write: true, Sign: true, SecurityLevel: 1, RequiredLevel: 1}
	rev    = formtask.RevisionRef{ID: 1, Digest: strings.Repeat("0f", 32)}
	forms  = []formtask.FormRef{{Type: "MainForm", DataFormatID: "3106", DataFormatVersion: 21845}}
)

func submit(c formtask.Caller, complete, sign bool, r formtask.RevisionRef) formtask.SubmitInput {
	in := formtask.SubmitInput{Caller: c, Complete: complete, Sign: sign, Revision: r}
	if r.ID != 0 {
		in.Forms = forms
	}
	return in
}

func errType(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Type()
	}
	return ""
}

func TestSubmitStateTable(t *testing.T) {
	noLevel := signer
	noLevel.SecurityLevel = 0
	cases := []struct {
		name     string
		from     string
		in       formtask.SubmitInput
		outcome  formtask.Outcome
		status   string
		calls    []string
		rejected string // error type of a rejected update
	}{
		{"draft", taskstatus.Filling, submit(signer, false, true, rev), formtask.OutcomeSaved, taskstatus.Filling,
			[]string{"ValidateForms 1", "CheckAttachments 1", "ProjectState(Utfylling) 1"}, ""},
		{"draft, sign=false too", taskstatus.Filling, submit(signer, false, false, rev), formtask.OutcomeSaved, taskstatus.Filling,
			[]string{"ValidateForms 1", "CheckAttachments 1", "ProjectState(Utfylling) 1"}, ""},
		{"to signing", taskstatus.Filling, submit(signer, true, false, rev), formtask.OutcomeSentToSigning, taskstatus.Signing,
			[]string{"ValidateForms 1", "CheckAttachments 1", "ProjectState(Signering) 1"}, ""},
		{"signed and archived", taskstatus.Filling, submit(signer, true, true, rev), formtask.OutcomeArchived, taskstatus.Archived,
			[]string{"ValidateForms 1", "CheckAttachments 1", "Archive 1"}, ""},
		{"no Sign right: saved, sent to signing", taskstatus.Filling, submit(writer, true, true, rev), formtask.OutcomeSignRefused, taskstatus.Signing,
			[]string{"ValidateForms 1", "CheckAttachments 1", "ProjectState(Signering) 1"}, ""},
		{"signing signs as is", taskstatus.Signing, submit(signer, true, true, formtask.RevisionRef{}), formtask.OutcomeArchived, taskstatus.Archived,
			[]string{"Archive 0"}, ""},
		{"signing with new content", taskstatus.Signing, submit(signer, true, true, rev), formtask.OutcomeArchived, taskstatus.Archived,
			[]string{"ValidateForms 1", "CheckAttachments 1", "Archive 1"}, ""},
		{"signing without Sign", taskstatus.Signing, submit(writer, true, true, rev), formtask.OutcomeSignRefused, taskstatus.Signing,
			[]string{"DiscardRevision 1"}, ""},
		{"signing below the level", taskstatus.Signing, submit(noLevel, true, true, rev), "", taskstatus.Signing,
			nil, formtask.ErrSecurityLevel},
		{"signing, complete=false", taskstatus.Signing, submit(signer, false, true, rev), "", taskstatus.Signing,
			nil, formtask.ErrWrongState},
		{"archived", taskstatus.Archived, submit(signer, true, true, rev), "", taskstatus.Archived,
			nil, formtask.ErrTaskArchived},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newEnv(t)
			o := send(env, at(tc.from), formtask.UpdateSubmit, tc.in)
			run(env, tc.from)
			if tc.rejected != "" {
				require.True(t, o.rejected, "rejected by the validator")
				assert.Equal(t, tc.rejected, errType(o.err))
				assert.Empty(t, f.Calls())
				return
			}
			require.NoError(t, o.err)
			assert.Equal(t, tc.outcome, o.res.Outcome)
			assert.Equal(t, tc.status, o.res.Status)
			assert.ElementsMatch(t, tc.calls[:min(2, len(tc.calls))], f.Calls()[:min(2, len(tc.calls))], "checks run together")
			assert.Equal(t, tc.calls[min(2, len(tc.calls)):], f.Calls()[min(2, len(tc.calls)):])
			if tc.status == taskstatus.Archived {
				assert.Equal(t, "AR7000001", o.res.ArchiveReference)
				require.NoError(t, env.GetWorkflowError(), "an archived task's workflow ends")
			}
		})
	}
}

func TestValidators(t *testing.T) {
	noWrite := signer
	noWrite.Write = false
	noType := submit(signer, true, true, rev)
	noType.Forms = []formtask.FormRef{{DataFormatID: "3106", DataFormatVersion: 21845}}
	badDigest := submit(signer, true, true, formtask.RevisionRef{ID: 1, Digest: "abc"})
	cases := []struct {
		name, from, update string
		arg                any
		want               string
	}{
		{"no Write", taskstatus.Filling, formtask.UpdateSubmit, submit(noWrite, false, true, rev), formtask.ErrForbidden},
		{"form without Type", taskstatus.Filling, formtask.UpdateSubmit, noType, formtask.ErrBadInput},
		{"no content in Utfylling", taskstatus.Filling, formtask.UpdateSubmit, submit(signer, true, true, formtask.RevisionRef{}), formtask.ErrWrongState},
		{"bad digest", taskstatus.Filling, formtask.UpdateSubmit, badDigest, formtask.ErrBadInput},
		{"sub-form without data format", taskstatus.Filling, formtask.UpdateSubForm,
			formtask.SubFormInput{Caller: signer, Revision: rev, Form: formtask.FormRef{Type: "SubForm"}}, formtask.ErrBadInput},
		{"sub-form in Signering", taskstatus.Signing, formtask.UpdateSubForm,
			formtask.SubFormInput{Caller: signer, Revision: rev, Form: formtask.FormRef{Type: "SubForm", DataFormatID: "5571", DataFormatVersion: 41234}}, formtask.ErrWrongState},
		{"attachment without type", taskstatus.Filling, formtask.UpdateAttachment,
			formtask.AttachmentInput{Caller: signer, Revision: rev, Attachment: formtask.AttachmentRef{FileName: "a.pdf"}}, formtask.ErrBadInput},
		{"attachment when archived", taskstatus.Archived, formtask.UpdateAttachment,
			formtask.AttachmentInput{Caller: signer, Revision: rev, Attachment: formtask.AttachmentRef{FileName: "a.pdf", AttachmentType: "Bilde"}}, formtask.ErrTaskArchived},
		{"validate in Signering", taskstatus.Signing, formtask.UpdateValidate, formtask.ReadInput{Caller: signer}, formtask.ErrWrongState},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newEnv(t)
			o := send(env, at(tc.from), tc.update, tc.arg)
			run(env, tc.from)
			require.True(t, o.rejected)
			assert.Equal(t, tc.want, errType(o.err), o.err)
			assert.Empty(t, f.Calls(), "a rejected update runs nothing")
			if tc.want == formtask.ErrWrongState { // the workflow's status travels with the refusal
				var appErr *temporal.ApplicationError
				require.ErrorAs(t, o.err, &appErr)
				var status string
				require.NoError(t, appErr.Details(&status))
				assert.Equal(t, tc.from, status)
			}
		})
	}
}

func TestInvalidFormsKeepNothing(t *testing.T) {
	env, f := newEnv(t)
	f.invalid = true
	o := send(env, time.Minute, formtask.UpdateSubmit, submit(signer, true, true, rev))
	v := send(env, 2*time.Minute, formtask.UpdateValidate, formtask.ReadInput{Caller: writer})
	run(env, taskstatus.Filling)

	require.NoError(t, o.err)
	assert.Equal(t, formtask.OutcomeInvalid, o.res.Outcome)
	assert.Equal(t, taskstatus.Filling, o.res.Status)
	require.NotNil(t, o.res.Validation)
	assert.False(t, o.res.Validation.Success)
	assert.Equal(t, "/Skjema/AntallAnsatte", o.res.Validation.ValidationErrors[0].FieldXPath)
	assert.Len(t, o.res.Validation.ValidationErrors, 2, "errors and warnings")
	assert.Equal(t, o.res.Validation.ValidationErrors, o.res.Validation.ValidationWarnings)
	assert.Equal(t, "DiscardRevision 1", f.Calls()[2])
	assert.NotContains(t, strings.Join(f.Calls(), ","), "ProjectState")

	require.NoError(t, v.err)
	assert.Equal(t, formtask.OutcomeValidated, v.res.Outcome)
	assert.False(t, v.res.Validation.Success)
}

func TestSubFormAttachmentAndPrint(t *testing.T) {
	env, f := newEnv(t)
	sub := send(env, time.Minute, formtask.UpdateSubForm, formtask.SubFormInput{Caller: writer, Revision: rev,
		Form: formtask.FormRef{Type: "SubForm", DataFormatID: "5571", DataFormatVersion: 41234}})
	att := send(env, 2*time.Minute, formtask.UpdateAttachment, formtask.AttachmentInput{Caller: writer,
		Revision: formtask.RevisionRef{ID: 2, Digest: rev.Digest}, Attachment: formtask.AttachmentRef{FileName: "a.pdf", AttachmentType: "Dokumentasjon", Size: 3}})
	val := send(env, 3*time.Minute, formtask.UpdateValidate, formtask.ReadInput{Caller: writer})
	pr := send(env, 4*time.Minute, formtask.UpdatePrint, formtask.ReadInput{Caller: writer})
	run(env, taskstatus.Filling)

	require.NoError(t, sub.err)
	assert.Equal(t, int64(200777), sub.res.FormID)
	require.NoError(t, att.err)
	assert.Equal(t, int64(200777), att.res.AttachmentID)
	require.NoError(t, val.err)
	assert.True(t, val.res.Validation.Success)
	assert.Empty(t, val.res.Validation.ValidationErrors)
	assert.Len(t, val.res.Validation.ValidationWarnings, 1)
	require.NoError(t, pr.err)
	assert.Equal(t, strings.Repeat("cd", 32), pr.res.PrintDigest)
	assert.Equal(t, []string{
		"ValidateForms 1", "ProjectState(Utfylling) 1",
		"CheckAttachments 2", "ProjectState(Utfylling) 2",
	}, f.Calls()[:4], "a sub-form is not checked against attachment rules, an attachment not against schemas")
}

// Two updates that arrive together run one after the other: the second starts its activities only when
// the first has finished.
func TestConcurrentUpdatesDoNotInterleave(t *testing.T) {
	env, f := newEnv(t)
	f.slow = 20 * time.Millisecond
	a := send(env, time.Minute, formtask.UpdateSubmit, submit(signer, false, true, rev))
	b := send(env, time.Minute, formtask.UpdateSubmit, submit(signer, true, false, formtask.RevisionRef{ID: 2, Digest: rev.Digest}))
	run(env, taskstatus.Filling)

	require.NoError(t, a.err)
	require.NoError(t, b.err)
	calls := f.Calls()
	require.Len(t, calls, 6)
	for i, c := range calls {
		want := "1"
		if i >= 3 {
			want = "2"
		}
		assert.True(t, strings.HasSuffix(c, " "+want), "call %d %q belongs to update %s: %v", i, c, want, calls)
	}
	assert.Equal(t, taskstatus.Signing, b.res.Status)
}

// A run hands over to a new one after MaxUpdatesPerRun updates, carrying its state, once every update
// has been answered.
func TestContinueAsNew(t *testing.T) {
	env, _ := newEnv(t)
	var outs []*outcome
	outs = append(outs, send(env, time.Minute, formtask.UpdateSubmit, submit(signer, true, false, rev)))
	for i := 1; i < formtask.MaxUpdatesPerRun; i++ {
		outs = append(outs, send(env, time.Minute+time.Duration(i)*time.Second, formtask.UpdatePrint, formtask.ReadInput{Caller: signer}))
	}
	run(env, taskstatus.Filling)

	for _, o := range outs {
		require.NoError(t, o.err)
	}
	err := env.GetWorkflowError()
	require.True(t, workflow.IsContinueAsNewError(err), "got %v", err)
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can))
	var next formtask.TaskState
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	assert.Equal(t, taskstatus.Signing, next.Status)
	assert.Equal(t, "a3101102", next.MessageID)
}

// A submission made under If-Match carries what it expects of the task; the check and the change are one
// step under the mutex: of two submissions made from the same read, the second finds the task changed,
// whether its validator ran before the first was applied or after. One made from the new state passes.
func TestExpectationIsCheckedWithTheChange(t *testing.T) {
	env, f := newEnv(t)
	f.slow = 20 * time.Millisecond
	expecting := func(r formtask.RevisionRef, e formtask.Expectation) formtask.SubmitInput {
		in := submit(signer, false, false, r)
		in.Expect = &e
		return in
	}
	read := formtask.Expectation{Revision: 0, Status: taskstatus.Filling}
	a := send(env, time.Minute, formtask.UpdateSubmit, expecting(rev, read))
	b := send(env, time.Minute, formtask.UpdateSubmit, expecting(formtask.RevisionRef{ID: 2, Digest: rev.Digest}, read))
	c := send(env, 2*time.Minute, formtask.UpdateSubmit, expecting(formtask.RevisionRef{ID: 3, Digest: rev.Digest},
		formtask.Expectation{Revision: rev.ID, Status: taskstatus.Filling}))
	d := send(env, 3*time.Minute, formtask.UpdateSubmit, expecting(formtask.RevisionRef{ID: 4, Digest: rev.Digest},
		formtask.Expectation{Revision: rev.ID, Status: taskstatus.Filling}))
	e := send(env, 4*time.Minute, formtask.UpdateSubForm, formtask.SubFormInput{Caller: signer, Revision: formtask.RevisionRef{ID: 5, Digest: rev.Digest},
		Form: formtask.FormRef{Type: "SubForm", DataFormatID: "1", DataFormatVersion: 1}, Expect: &read})
	run(env, taskstatus.Filling)

	require.NoError(t, a.err)
	assert.Equal(t, formtask.ErrPrecondition, errType(b.err))
	require.NoError(t, c.err)
	assert.Equal(t, formtask.ErrPrecondition, errType(d.err), "revision 3 was promoted since")
	assert.Equal(t, formtask.ErrPrecondition, errType(e.err), "a sub-form is held to its expectation too")
	for _, call := range f.Calls() {
		assert.False(t, strings.HasPrefix(call, "ProjectState") && (strings.HasSuffix(call, " 2") || strings.HasSuffix(call, " 4") || strings.HasSuffix(call, " 5")),
			"a refused submission promotes nothing: %v", f.Calls())
	}
}

// A run behind its read model (an update Temporal lost after its local activity committed) takes the read
// model's state on UpdateResync, reading it by one local activity: then what the read model allows, the run
// allows (a task projected to Signering is signed as it is); an archived or deleted task ends the run; a run
// in step answers InSync; an archived run refuses without a trace.
func TestResync(t *testing.T) {
	signing := formtask.ReadModelState{Found: true, Status: taskstatus.Signing, Revision: 7}
	cases := []struct {
		name      string
		from      string
		readModel formtask.ReadModelState
		want      formtask.Result
		ends      bool
	}{
		{"projected to signing", taskstatus.Filling, signing, formtask.Result{Outcome: formtask.OutcomeResynced, Status: taskstatus.Signing}, false},
		{"archived", taskstatus.Signing, formtask.ReadModelState{Found: true, Status: taskstatus.Archived, ArchiveReference: "AR7000085", Revision: 7},
			formtask.Result{Outcome: formtask.OutcomeResynced, Status: taskstatus.Archived, ArchiveReference: "AR7000085"}, true},
		{"deleted for good", taskstatus.Filling, formtask.ReadModelState{}, formtask.Result{Outcome: formtask.OutcomePurged, Status: taskstatus.Filling}, true},
		{"in the trashbin", taskstatus.Filling, formtask.ReadModelState{Found: true, Status: taskstatus.Filling, InTrashbin: true},
			formtask.Result{Outcome: formtask.OutcomeResynced, Status: taskstatus.Filling}, false},
		{"in step", taskstatus.Filling, formtask.ReadModelState{Found: true, Status: taskstatus.Filling},
			formtask.Result{Outcome: formtask.OutcomeInSync, Status: taskstatus.Filling}, false},
		{"never back", taskstatus.Signing, formtask.ReadModelState{Found: true, Status: taskstatus.Filling},
			formtask.Result{Outcome: formtask.OutcomeInSync, Status: taskstatus.Signing}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newEnv(t)
			f.readModel = tc.readModel
			resync := send(env, time.Minute, formtask.UpdateResync, formtask.ResyncInput{})
			run(env, tc.from)
			require.NoError(t, resync.err)
			assert.Equal(t, tc.want, resync.res)
			assert.Equal(t, []string{"ReadTaskState 0"}, f.Calls())
			if tc.ends {
				require.True(t, env.IsWorkflowCompleted())
				require.NoError(t, env.GetWorkflowError(), "the run ends")
			}
		})
	}
	t.Run("then signed as it is", func(t *testing.T) {
		env, f := newEnv(t)
		f.readModel = signing
		refused := send(env, time.Minute, formtask.UpdateSubmit, submit(signer, true, true, formtask.RevisionRef{}))
		send(env, 2*time.Minute, formtask.UpdateResync, formtask.ResyncInput{})
		signed := send(env, 3*time.Minute, formtask.UpdateSubmit, submit(signer, true, true, formtask.RevisionRef{}))
		run(env, taskstatus.Filling)
		require.True(t, refused.rejected, "the run is in Utfylling")
		assert.Equal(t, formtask.ErrWrongState, errType(refused.err))
		require.NoError(t, signed.err)
		assert.Equal(t, formtask.OutcomeArchived, signed.res.Outcome)
		assert.Equal(t, []string{"ReadTaskState 0", "Archive 0"}, f.Calls())
	})
	t.Run("archived run", func(t *testing.T) {
		env, f := newEnv(t)
		again := send(env, 0, formtask.UpdateResync, formtask.ResyncInput{})
		run(env, taskstatus.Archived)
		require.True(t, again.rejected)
		assert.Equal(t, formtask.ErrTaskArchived, errType(again.err))
		assert.Empty(t, f.Calls())
	})
}
