package formtask_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

const mainXML = `<Skjema dataFormatProvider="SERES" dataFormatId="5570" dataFormatVersion="41233"><A>1</A></Skjema>`

func TestFormTaskRevisions(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	q := formtask.NewStore(store.New(pool))
	fs := storetest.Files(t, pool)
	// saved is an attachment with its bytes in the object store, as package formtask hands it over.
	saved := func(a formtask.RevisionAttachment) formtask.RevisionAttachment {
		f, err := fs.SaveBytes(ctx, a.Data, "")
		require.NoError(t, err)
		a.Data, a.SHA256, a.Size = nil, f.SHA256, f.Size
		return a
	}

	task, err := q.GetFormTask(ctx, "a3101081") // O2's 4711/1, security level 3
	require.NoError(t, err)
	assert.Equal(t, 3, task.RequiredSecurityLevel)
	assert.Equal(t, taskstatus.Filling, task.Status)
	assert.Regexp(t, `^r\d+$`, task.ReporteeID)
	_, err = q.GetFormTask(ctx, "a3100150") // correspondence
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a0000000", Kind: formtask.RevisionKindReplace})
	require.ErrorIs(t, err, store.ErrNotFound, "a change of a message deleted for good meanwhile")

	t.Run("replace", func(t *testing.T) {
		nr := formtask.NewRevision{MessageID: "a3101116", Kind: formtask.RevisionKindReplace,
			Forms: []formtask.RevisionForm{{Type: "MainForm", DataFormatID: "5570", DataFormatVersion: 41233, Name: "Hoved", FormData: mainXML}},
			Attachments: []formtask.RevisionAttachment{
				saved(formtask.RevisionAttachment{Name: "Stor", FileName: "stor.pdf", AttachmentType: "X", Data: make([]byte, 300_000)}),
				saved(formtask.RevisionAttachment{Name: "Tom", FileName: "tom.txt", AttachmentType: "X", Data: nil}),
			}}
		rev, err := q.CreateRevision(ctx, nr)
		require.NoError(t, err)
		again, err := q.CreateRevision(ctx, nr)
		require.NoError(t, err)
		assert.Equal(t, rev.Digest, again.Digest, "the digest depends on the content only")
		assert.Len(t, rev.DigestHex(), 64)

		forms, atts, err := q.RevisionContent(ctx, rev.ID)
		require.NoError(t, err)
		require.Len(t, forms, 1)
		require.Len(t, atts, 2)
		assert.EqualValues(t, 300_000, atts[0].FileSize)

		for i := range 2 { // a retried promotion changes nothing
			_, added, err := q.PromoteRevision(ctx, rev.ID)
			require.NoError(t, err)
			if i == 0 {
				require.Len(t, added, 2, "a whole set adds its attachments (the task had none)")
				assert.Equal(t, formtask.AttachmentAdded, added[0].Change)
				assert.Equal(t, atts[0].AttachmentType, added[0].AttachmentType)
			} else {
				assert.Empty(t, added, "a retried promotion adds nothing")
			}
		}
		forms, atts, err = q.MessageContent(ctx, "a3101116")
		require.NoError(t, err)
		require.Len(t, forms, 1, "the sub-form of the old set is gone")
		assert.Equal(t, mainXML, forms[0].FormData)
		require.Len(t, atts, 2)
		var blobs int
		var size int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*), sum(b.size) FROM blobs b WHERE b.sha256 = $1`, atts[0].SHA256).Scan(&blobs, &size))
		assert.Equal(t, 1, blobs, "the promoted attachment names the revision's blob: no byte is copied")
		assert.EqualValues(t, 300_000, size)
		got, err := q.GetRevision(ctx, rev.ID)
		require.NoError(t, err)
		assert.True(t, got.Promoted)

		// The unpromoted twin can be deleted; the promoted one stays.
		require.NoError(t, q.DeleteRevision(ctx, "a3101116", again.ID))
		require.NoError(t, q.DeleteRevision(ctx, "a3101116", rev.ID))
		_, err = q.GetRevision(ctx, again.ID)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = q.GetRevision(ctx, rev.ID)
		require.NoError(t, err)
	})

	t.Run("sub-form and attachment", func(t *testing.T) {
		forms, _, err := q.MessageContent(ctx, "a3101144")
		require.NoError(t, err)
		require.Len(t, forms, 2)
		sub := formtask.RevisionForm{Type: "SubForm", DataFormatID: "5571", DataFormatVersion: 41234, Name: "Budsjett", FormData: "<x/>"}

		changed, err := q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a3101144", Kind: formtask.RevisionKindSubForm, TargetFormID: forms[1].ID, Forms: []formtask.RevisionForm{sub}})
		require.NoError(t, err)
		ref, addedAtts, err := q.PromoteRevision(ctx, changed.ID)
		require.NoError(t, err)
		assert.Equal(t, forms[1].ID, ref)
		assert.Empty(t, addedAtts, "a sub-form adds no attachment")

		added, err := q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a3101144", Kind: formtask.RevisionKindSubForm, Forms: []formtask.RevisionForm{sub}})
		require.NoError(t, err)
		ref, _, err = q.PromoteRevision(ctx, added.ID)
		require.NoError(t, err)
		again, _, err := q.PromoteRevision(ctx, added.ID)
		require.NoError(t, err)
		assert.Equal(t, ref, again, "a retried promotion returns the same form")

		now, _, err := q.MessageContent(ctx, "a3101144")
		require.NoError(t, err)
		require.Len(t, now, 3)
		assert.Equal(t, "<x/>", now[1].FormData)
		assert.Equal(t, ref, now[2].ID)

		onMain, err := q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a3101144", Kind: formtask.RevisionKindSubForm, TargetFormID: forms[0].ID, Forms: []formtask.RevisionForm{sub}})
		require.NoError(t, err)
		_, _, err = q.PromoteRevision(ctx, onMain.ID)
		require.ErrorIs(t, err, formtask.ErrBadRevision)

		att, err := q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a3101144", Kind: formtask.RevisionKindAttachment,
			Attachments: []formtask.RevisionAttachment{saved(formtask.RevisionAttachment{Name: "B", FileName: "b.pdf", AttachmentType: "Dok", Data: []byte("%PDF")})}})
		require.NoError(t, err)
		attID, addedAtts, err := q.PromoteRevision(ctx, att.ID)
		require.NoError(t, err)
		_, atts, err := q.MessageContent(ctx, "a3101144")
		require.NoError(t, err)
		require.Len(t, atts, 1)
		assert.Equal(t, attID, atts[0].ID)
		require.Len(t, addedAtts, 1)
		assert.Equal(t, formtask.AttachmentChange{Change: formtask.AttachmentAdded, AttachmentInfo: formtask.AttachmentInfo{ID: attID, Name: "B",
			FileName: "b.pdf", AttachmentType: "Dok", FileSize: 4, SHA256: atts[0].SHA256}}, addedAtts[0])

		_, err = q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a3101144", Kind: formtask.RevisionKindAttachment})
		require.ErrorIs(t, err, formtask.ErrBadRevision)
		_, err = q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a3101144", Kind: formtask.RevisionKindAttachment,
			Attachments: []formtask.RevisionAttachment{{Name: "B", FileName: "b.pdf", AttachmentType: "Dok", Data: []byte("%PDF")}}})
		require.ErrorIs(t, err, formtask.ErrBadRevision, "an attachment not in the object store")
	})

	t.Run("stale", func(t *testing.T) {
		rev, err := q.CreateRevision(ctx, formtask.NewRevision{MessageID: "a3101200", Kind: formtask.RevisionKindReplace})
		require.NoError(t, err)
		n, err := q.DeleteStaleRevisions(ctx, time.Hour)
		require.NoError(t, err)
		assert.Zero(t, n)
		_, err = pool.Exec(ctx, `UPDATE form_revisions SET created_at = now() - interval '2 hours' WHERE id = $1`, rev.ID)
		require.NoError(t, err)
		n, err = q.DeleteStaleRevisions(ctx, time.Hour)
		require.NoError(t, err)
		assert.EqualValues(t, 1, n)
	})
}

func TestArchiveFormTaskOnce(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	q := formtask.NewStore(store.New(pool))
	at := time.Date(2025, 4, 1, 10, 30, 0, 0, time.UTC)
	pdf, err := storetest.Files(t, pool).SaveBytes(ctx, []byte("%PDF-1.4"), "application/pdf")
	require.NoError(t, err)

	renders := 0
	render := func(_ formtask.Store, h formtask.PrintHeader, a formtask.Archive) ([]byte, []byte, error) {
		renders++
		assert.Equal(t, taskstatus.Archived, h.Status)
		assert.Equal(t, a.ArchiveReference, h.ArchiveReference)
		assert.Equal(t, "Ingrid Fjellheim", h.LastChangedBy)
		assert.Contains(t, h.Reportee, "(310123455)")
		require.Len(t, a.Forms, 1)
		return []byte("digest-of-a3101102-000000000000"), pdf.SHA256, nil
	}
	first, created, err := q.ArchiveFormTask(ctx, "a3101102", "Ingrid Fjellheim", at, render)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Regexp(t, `^AR\d+$`, first.ArchiveReference)
	second, created, err := q.ArchiveFormTask(ctx, "a3101102", "Someone Else", at.Add(time.Hour), render)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, first.ArchiveReference, second.ArchiveReference)
	assert.Equal(t, "Ingrid Fjellheim", second.ArchivedBy)
	assert.Equal(t, 1, renders)

	task, err := q.GetFormTask(ctx, "a3101102")
	require.NoError(t, err)
	assert.Equal(t, taskstatus.Archived, task.Status)
	assert.Equal(t, first.ArchiveReference, task.ArchiveReference)
	printed, err := q.GetPrint(ctx, first.PrintDigest)
	require.NoError(t, err)
	assert.Equal(t, pdf.SHA256, printed, "the print names the blob of its PDF")

	// The read model of an archived task no longer changes, and the archive never does.
	changed, err := q.SetFormTaskState(ctx, "a3101102", taskstatus.Filling, "x", at)
	require.NoError(t, err)
	assert.False(t, changed)
	task, err = q.GetFormTask(ctx, "a3101102")
	require.NoError(t, err)
	assert.Equal(t, taskstatus.Archived, task.Status)
	_, err = pool.Exec(ctx, `UPDATE archives SET archived_by = 'x'`)
	require.ErrorContains(t, err, "immutable")
	_, err = pool.Exec(ctx, `DELETE FROM archives`)
	require.ErrorContains(t, err, "immutable")
}

func TestSetFormTaskStateTellsWhetherTheStatusChanged(t *testing.T) {
	pool := storetest.New(t)
	q := formtask.NewStore(store.New(pool))
	ctx := context.Background()
	at := time.Date(2025, 4, 1, 12, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		status  string
		changed bool
	}{{taskstatus.Filling, false}, {taskstatus.Signing, true}, {taskstatus.Signing, false}, {taskstatus.Filling, true}} {
		changed, err := q.SetFormTaskState(ctx, "a3101102", step.status, "x", at)
		require.NoError(t, err)
		assert.Equal(t, step.changed, changed, step.status)
	}
	changed, err := q.SetFormTaskState(ctx, "a3100150", taskstatus.Signing, "x", at)
	require.NoError(t, err)
	assert.False(t, changed, "a correspondence is no form task")
}
