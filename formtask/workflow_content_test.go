package formtask_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
)

func contentChange(c formtask.Caller, change formtask.ContentChange, r formtask.RevisionRef) formtask.ContentChangeInput {
	in := formtask.ContentChangeInput{Caller: c, Change: change, Revision: r}
	if change == formtask.ChangeReplaceAttachment {
		in.Attachment = &formtask.AttachmentRef{FileName: "ny.pdf", AttachmentType: "Dokumentasjon", Size: 8}
	}
	return in
}

// A removal is promoted without checks (the minimum counts hold only at completion); new attachment
// content is checked against the attachment rules first, and not against the schemas.
func TestContentChanges(t *testing.T) {
	env, f := newEnv(t)
	delForm := send(env, time.Minute, formtask.UpdateChangeContent, contentChange(writer, formtask.ChangeDeleteForm, rev))
	delAtt := send(env, 2*time.Minute, formtask.UpdateChangeContent,
		contentChange(writer, formtask.ChangeDeleteAttachment, formtask.RevisionRef{ID: 2, Digest: rev.Digest}))
	repl := send(env, 3*time.Minute, formtask.UpdateChangeContent,
		contentChange(writer, formtask.ChangeReplaceAttachment, formtask.RevisionRef{ID: 3, Digest: rev.Digest}))
	run(env, taskstatus.Filling)

	for _, o := range []*outcome{delForm, delAtt, repl} {
		require.NoError(t, o.err)
		assert.Equal(t, formtask.OutcomeSaved, o.res.Outcome)
		assert.Equal(t, taskstatus.Filling, o.res.Status)
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
	stale := contentChange(writer, formtask.ChangeDeleteForm, rev)
	stale.Expect = &formtask.Expectation{Revision: 41, Status: taskstatus.Filling}
	noContent := contentChange(writer, formtask.ChangeReplaceAttachment, rev)
	noContent.Attachment = nil
	cases := []struct {
		name, from string
		in         formtask.ContentChangeInput
		want       string
	}{
		{"no Write", taskstatus.Filling, contentChange(noWrite, formtask.ChangeDeleteAttachment, rev), formtask.ErrForbidden},
		{"in Signering", taskstatus.Signing, contentChange(writer, formtask.ChangeDeleteForm, rev), formtask.ErrWrongState},
		{"archived", taskstatus.Archived, contentChange(writer, formtask.ChangeDeleteAttachment, rev), formtask.ErrTaskArchived},
		{"stale expectation", taskstatus.Filling, stale, formtask.ErrPrecondition},
		{"no revision", taskstatus.Filling, contentChange(writer, formtask.ChangeDeleteForm, formtask.RevisionRef{}), formtask.ErrBadInput},
		{"replacement without content", taskstatus.Filling, noContent, formtask.ErrBadInput},
		{"unknown change", taskstatus.Filling, contentChange(writer, "Rename", rev), formtask.ErrBadInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newEnv(t)
			o := send(env, at(tc.from), formtask.UpdateChangeContent, tc.in)
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
	var printed []formtask.FormPrintInput
	env.RegisterActivityWithOptions(func(in formtask.FormPrintInput) (formtask.PrintResult, error) {
		printed = append(printed, in)
		return formtask.PrintResult{Digest: strings.Repeat("ef", 32)}, nil
	}, activity.RegisterOptions{Name: "RenderFormPrint"})
	one := send(env, time.Minute, formtask.UpdatePrint, formtask.ReadInput{Caller: writer, FormID: 200129})
	all := send(env, 2*time.Minute, formtask.UpdatePrint, formtask.ReadInput{Caller: writer})
	run(env, taskstatus.Filling)

	require.NoError(t, one.err)
	assert.Equal(t, strings.Repeat("ef", 32), one.res.PrintDigest)
	assert.Equal(t, []formtask.FormPrintInput{{MessageID: "a3101102", FormID: 200129}}, printed)
	require.NoError(t, all.err)
	assert.Equal(t, strings.Repeat("cd", 32), all.res.PrintDigest)
	assert.Equal(t, []string{"RenderPrint 0"}, f.Calls())
}
