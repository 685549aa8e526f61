package workflows_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/workflows"
)

func contentChange(c workflows.Caller, change workflows.ContentChange, r workflows.RevisionRef) workflows.ContentChangeInput {
	in := workflows.ContentChangeInput{Caller: c, Change: change, Revision: r}
	if change == workflows.ChangeReplaceAttachment {
		in.Attachment = &workflows.AttachmentRef{FileName: "ny.pdf", AttachmentType: "Dokumentasjon", Size: 8}
	}
	return in
}

// A removal is promoted without checks (the minimum counts hold only at completion); new attachment
// content is checked against the attachment rules first, and not against the schemas.
func TestContentChanges(t *testing.T) {
	env, f := newEnv(t)
	delForm := send(env, time.Minute, workflows.UpdateChangeContent, contentChange(writer, workflows.ChangeDeleteForm, rev))
	delAtt := send(env, 2*time.Minute, workflows.UpdateChangeContent,
		contentChange(writer, workflows.ChangeDeleteAttachment, workflows.RevisionRef{ID: 2, Digest: rev.Digest}))
	repl := send(env, 3*time.Minute, workflows.UpdateChangeContent,
		contentChange(writer, workflows.ChangeReplaceAttachment, workflows.RevisionRef{ID: 3, Digest: rev.Digest}))
	run(env, store.StatusFilling)

	for _, o := range []*outcome{delForm, delAtt, repl} {
		require.NoError(t, o.err)
		assert.Equal(t, workflows.OutcomeSaved, o.res.Outcome)
		assert.Equal(t, store.StatusFilling, o.res.Status)
	}
	assert.Equal(t, int64(200777), delForm.res.FormID)
	assert.Equal(t, int64(200777), delAtt.res.AttachmentID)
	assert.Equal(t, int64(200777), repl.res.AttachmentID)
	assert.Equal(t, []string{
		"ProjectState(Utfylling) 1",
		"ProjectState(Utfylling) 2",
		"CheckAttachments 3", "ProjectState(Utfylling) 3",
	}, f.Calls())
}

func TestContentChangeValidators(t *testing.T) {
	noWrite := writer
	noWrite.Write = false
	stale := contentChange(writer, workflows.ChangeDeleteForm, rev)
	stale.Expect = &workflows.Expectation{Revision: 41, Status: store.StatusFilling}
	noContent := contentChange(writer, workflows.ChangeReplaceAttachment, rev)
	noContent.Attachment = nil
	cases := []struct {
		name, from string
		in         workflows.ContentChangeInput
		want       string
	}{
		{"no Write", store.StatusFilling, contentChange(noWrite, workflows.ChangeDeleteAttachment, rev), workflows.ErrForbidden},
		{"in Signering", store.StatusSigning, contentChange(writer, workflows.ChangeDeleteForm, rev), workflows.ErrWrongState},
		{"archived", store.StatusArchived, contentChange(writer, workflows.ChangeDeleteAttachment, rev), workflows.ErrTaskArchived},
		{"stale expectation", store.StatusFilling, stale, workflows.ErrPrecondition},
		{"no revision", store.StatusFilling, contentChange(writer, workflows.ChangeDeleteForm, workflows.RevisionRef{}), workflows.ErrBadInput},
		{"replacement without content", store.StatusFilling, noContent, workflows.ErrBadInput},
		{"unknown change", store.StatusFilling, contentChange(writer, "Rename", rev), workflows.ErrBadInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newEnv(t)
			o := send(env, at(tc.from), workflows.UpdateChangeContent, tc.in)
			run(env, tc.from)
			require.True(t, o.rejected)
			assert.Equal(t, tc.want, errType(o.err), o.err)
			assert.Empty(t, f.Calls(), "a rejected update runs nothing")
		})
	}
}

// A print with a FormID renders that form alone (RenderFormPrint); without one, the whole task.
func TestFormPrint(t *testing.T) {
	env, f := newEnv(t)
	var printed []workflows.FormPrintInput
	env.RegisterActivityWithOptions(func(in workflows.FormPrintInput) (workflows.PrintResult, error) {
		printed = append(printed, in)
		return workflows.PrintResult{Digest: strings.Repeat("ef", 32)}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityRenderFormPrint})
	one := send(env, time.Minute, workflows.UpdatePrint, workflows.ReadInput{Caller: writer, FormID: 200129})
	all := send(env, 2*time.Minute, workflows.UpdatePrint, workflows.ReadInput{Caller: writer})
	run(env, store.StatusFilling)

	require.NoError(t, one.err)
	assert.Equal(t, strings.Repeat("ef", 32), one.res.PrintDigest)
	assert.Equal(t, []workflows.FormPrintInput{{MessageID: "a3101102", FormID: 200129}}, printed)
	require.NoError(t, all.err)
	assert.Equal(t, strings.Repeat("cd", 32), all.res.PrintDigest)
	assert.Equal(t, []string{"RenderPrint 0"}, f.Calls())
}
