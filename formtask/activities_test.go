package formtask_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/printpdf/pdftext"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

type fixture struct {
	pool *pgxpool.Pool
	acts *formtask.Activities
	env  *testsuite.TestActivityEnvironment
	q    formtask.Store
}

func newFixture(t *testing.T) *fixture {
	pool := storetest.New(t)
	acts, err := formtask.NewActivities(pool, storetest.FilesOf(pool))
	require.NoError(t, err)
	acts.Events, acts.PublicURL = events.NewBuilder("https://postbox.test"), "https://postbox.test"
	t.Cleanup(acts.Schemas.Close)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	return &fixture{pool: pool, acts: acts, env: env, q: formtask.NewStore(store.New(pool))}
}

// run executes an activity through the SDK's activity environment and decodes its result into out.
func (f *fixture) run(t *testing.T, out any, fn any, args ...any) error {
	t.Helper()
	v, err := f.env.ExecuteActivity(fn, args...)
	if err != nil {
		return err
	}
	if out != nil {
		require.NoError(t, v.Get(out))
	}
	return nil
}

// revision stores nr as the service does: its attachments' bytes in the object store first.
func (f *fixture) revision(t *testing.T, nr formtask.NewRevision) formtask.ContentRef {
	t.Helper()
	for i, a := range nr.Attachments {
		saved, err := f.acts.Files.SaveBytes(context.Background(), a.Data, "")
		require.NoError(t, err)
		nr.Attachments[i].Data, nr.Attachments[i].SHA256, nr.Attachments[i].Size = nil, saved.SHA256, saved.Size
	}
	rev, err := f.q.CreateRevision(context.Background(), nr)
	require.NoError(t, err)
	return formtask.ContentRef{MessageID: nr.MessageID, Revision: formtask.RevisionRef{ID: rev.ID, Digest: rev.DigestHex()}}
}

func (f *fixture) currentForms(t *testing.T, messageID string) []formtask.RevisionForm {
	t.Helper()
	forms, _, err := f.q.MessageContent(context.Background(), messageID)
	require.NoError(t, err)
	var out []formtask.RevisionForm
	for _, fm := range forms {
		out = append(out, formtask.RevisionForm{Type: fm.Type, DataFormatID: fm.DataFormatID, DataFormatVersion: fm.DataFormatVersion, Name: fm.Name, FormData: fm.FormData})
	}
	return out
}

func TestValidateForms(t *testing.T) {
	f := newFixture(t)

	var bad formtask.Findings
	require.NoError(t, f.run(t, &bad, f.acts.ValidateForms, formtask.ContentRef{MessageID: "a3101221"}))
	require.Len(t, bad.Errors, 2, "%+v", bad.Errors)
	assert.Equal(t, "AntallAnsatte", bad.Errors[0].FieldName)
	assert.Equal(t, "/Skjema/AntallAnsatte", bad.Errors[0].FieldXPath)
	assert.Contains(t, bad.Errors[0].ErrorMessage, "99999")
	assert.Equal(t, "Naeringstype", bad.Errors[1].FieldName)
	assert.Equal(t, "/Skjema/Naeringstype", bad.Errors[1].FieldXPath)
	res := bad.Result()
	assert.False(t, res.Success)
	assert.Equal(t, res.ValidationErrors, res.ValidationWarnings)

	var good formtask.Findings
	require.NoError(t, f.run(t, &good, f.acts.ValidateForms, formtask.ContentRef{MessageID: "a3101102"}))
	assert.Empty(t, good.Errors)
	assert.True(t, good.Result().Success)

	// A revision: the main form twice and a form the service does not have.
	forms := f.currentForms(t, "a3101109")
	forms = append(forms, forms[0], formtask.RevisionForm{Type: "SubForm", DataFormatID: "9999", DataFormatVersion: 1, Name: "x", FormData: "<x/>"})
	ref := f.revision(t, formtask.NewRevision{MessageID: "a3101109", Kind: formtask.RevisionKindReplace, Forms: forms})
	var rev formtask.Findings
	require.NoError(t, f.run(t, &rev, f.acts.ValidateForms, ref))
	var names []string
	for _, e := range rev.Errors {
		names = append(names, e.FieldName+": "+e.ErrorMessage)
	}
	assert.Equal(t, []string{
		"Type: exactly one MainForm is required, not 2",
		"DataFormatId: data format 9999 version 1 is not a form of service 4711/2",
	}, names)

	// A main form the parser refuses: the error names the form and the line, beside the parser's words.
	malformed := f.currentForms(t, "a3101109")
	malformed[0].FormData = "<Skjema>\n<Innsender>\n</Skjema>"
	var broken formtask.Findings
	require.NoError(t, f.run(t, &broken, f.acts.ValidateForms,
		f.revision(t, formtask.NewRevision{MessageID: "a3101109", Kind: formtask.RevisionKindReplace, Forms: malformed})))
	require.NotEmpty(t, broken.Errors)
	assert.Equal(t, fmt.Sprintf("MainForm %s version %d, line 3: Opening and ending tag mismatch: Innsender line 2 and Skjema",
		malformed[0].DataFormatID, malformed[0].DataFormatVersion), broken.Errors[0].ErrorMessage)

	// The workflow must apply exactly what the API stored.
	wrong := ref
	wrong.Revision.Digest = strings.Repeat("00", 32)
	err := f.run(t, nil, f.acts.ValidateForms, wrong)
	assert.Equal(t, formtask.ErrRevisionDigest, errType(err))
	other := ref
	other.MessageID = "a3101102"
	err = f.run(t, nil, f.acts.ValidateForms, other)
	assert.Equal(t, formtask.ErrRevisionDigest, errType(err))
	err = f.run(t, nil, f.acts.ValidateForms, formtask.ContentRef{MessageID: "a3100150"})
	assert.Equal(t, formtask.ErrNotFormTask, errType(err))
}

// pngBytes is the start of a PNG file.
const pngBytes = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

func TestCheckAttachmentsActivity(t *testing.T) {
	f := newFixture(t)
	in := func(ref formtask.ContentRef) formtask.CheckAttachmentsInput {
		return formtask.CheckAttachmentsInput{Content: ref, ServiceCode: "6120", ServiceEdition: 1, Final: true}
	}
	png := f.revision(t, formtask.NewRevision{MessageID: "a3101067", Kind: formtask.RevisionKindAttachment,
		Attachments: []formtask.RevisionAttachment{{Name: "Bilde", FileName: "kvittering.PNG", AttachmentType: "Bilde", Data: []byte(pngBytes)}}})
	var ok formtask.Findings
	require.NoError(t, f.run(t, &ok, f.acts.CheckAttachments, in(png)))
	assert.Empty(t, ok.Errors)

	// The content is re-checked from what was stored: an executable named as a picture is refused.
	exe := f.revision(t, formtask.NewRevision{MessageID: "a3101067", Kind: formtask.RevisionKindAttachment,
		Attachments: []formtask.RevisionAttachment{{Name: "Bilde", FileName: "kvittering.png", AttachmentType: "Bilde", Data: []byte("MZ\x90\x00\x03")}}})
	var disguised formtask.Findings
	require.NoError(t, f.run(t, &disguised, f.acts.CheckAttachments, in(exe)))
	require.Len(t, disguised.Errors, 1)
	assert.Equal(t, "kvittering.png", disguised.Errors[0].FieldName)
	assert.Contains(t, disguised.Errors[0].ErrorMessage, "executable")

	big := f.revision(t, formtask.NewRevision{MessageID: "a3101067", Kind: formtask.RevisionKindAttachment,
		Attachments: []formtask.RevisionAttachment{{Name: "Bilde", FileName: "stort.jpg", AttachmentType: "Bilde", Data: append([]byte("\xff\xd8\xff"), make([]byte, 1<<20)...)}}})
	var tooBig formtask.Findings
	require.NoError(t, f.run(t, &tooBig, f.acts.CheckAttachments, in(big)))
	require.Len(t, tooBig.Errors, 1)
	assert.Equal(t, "stort.jpg", tooBig.Errors[0].FieldName)
	assert.Contains(t, tooBig.Errors[0].ErrorMessage, "1048576")

	// Three pictures on the message already: a fourth is one too many.
	for range 3 {
		_, _, err := f.q.PromoteRevision(context.Background(), f.revision(t, formtask.NewRevision{MessageID: "a3101067", Kind: formtask.RevisionKindAttachment,
			Attachments: []formtask.RevisionAttachment{{Name: "Bilde", FileName: "b.png", AttachmentType: "Bilde", Data: []byte(pngBytes)}}}).Revision.ID)
		require.NoError(t, err)
	}
	var fourth formtask.Findings
	require.NoError(t, f.run(t, &fourth, f.acts.CheckAttachments, in(png)))
	require.Len(t, fourth.Errors, 1)
	assert.Equal(t, "Bilde", fourth.Errors[0].FieldName)
}

// pdfText returns the text a PDF shows.
func pdfText(t *testing.T, b []byte) string {
	t.Helper()
	text, err := pdftext.Text(b)
	require.NoError(t, err)
	return text
}

func TestRenderPrintCachedByContent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var first, second formtask.PrintResult
	require.NoError(t, f.run(t, &first, f.acts.RenderPrint, "a3101102"))
	require.NoError(t, f.run(t, &second, f.acts.RenderPrint, "a3101102"))
	assert.Equal(t, first.Digest, second.Digest)
	var n int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM prints`).Scan(&n))
	assert.Equal(t, 1, n, "the same content renders once")

	var pdfSum []byte
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT pdf_sha256 FROM prints`).Scan(&pdfSum))
	pdfBytes, err := f.acts.Files.Bytes(ctx, pdfSum)
	require.NoError(t, err)
	text := pdfText(t, pdfBytes)
	assert.Contains(t, text, "Årsoppgave for næringsvirksomhet")
	assert.Contains(t, text, "Fjellheim Maskin AS (310123455)")
	assert.Contains(t, text, "Utfylling")
	assert.Contains(t, text, "Innsender/Navn")

	// Another status is other content.
	_, err = f.q.SetFormTaskState(ctx, "a3101102", taskstatus.Signing, "Ingrid Fjellheim", time.Date(2025, 4, 1, 12, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	var third formtask.PrintResult
	require.NoError(t, f.run(t, &third, f.acts.RenderPrint, "a3101102"))
	assert.NotEqual(t, first.Digest, third.Digest)
}

func TestProjectStateAndArchiveOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 6, 2, 8, 15, 0, 0, time.UTC) // 10:15 in Oslo (summer time)

	forms := f.currentForms(t, "a3101151")
	ref := f.revision(t, formtask.NewRevision{MessageID: "a3101151", Kind: formtask.RevisionKindReplace, Forms: forms,
		Attachments: []formtask.RevisionAttachment{{Name: "Revisjonsberetning", FileName: "revisjon.pdf", AttachmentType: "Revisjonsberetning", Data: []byte("%PDF-1.4 beretning")}}})
	in := formtask.ProjectInput{Content: ref, Status: taskstatus.Filling, By: "Ingrid Fjellheim", At: at}
	for range 2 { // retried
		require.NoError(t, f.run(t, nil, f.acts.ProjectState, in))
	}
	var lastChanged time.Time
	var by string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT last_changed, last_changed_by FROM messages WHERE id = 'a3101151'`).Scan(&lastChanged, &by))
	assert.Equal(t, "2025-06-02T10:15:00", lastChanged.Format("2006-01-02T15:04:05"))
	assert.Equal(t, "Ingrid Fjellheim", by)
	_, atts, err := f.q.MessageContent(ctx, "a3101151")
	require.NoError(t, err)
	require.Len(t, atts, 1, "promoted once")
	evs := f.events(t)
	require.Len(t, evs, 1, "the attachment added, once; the status stayed")
	assert.Equal(t, events.FormTaskAttachmentAdded, evs[0].Type)
	assert.Equal(t, fmt.Sprintf("https://postbox.test/api/%s/messages/a3101151/attachments/%d", f.reportee(t, "a3101151"), atts[0].ID), evs[0].Source)
	assert.JSONEq(t, fmt.Sprintf(`{"MessageId":"a3101151","ReporteeId":%q,"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2,
		"Status":"Utfylling","AttachmentId":%d,"AttachmentType":"Revisjonsberetning"}`, f.reportee(t, "a3101151"), atts[0].ID), string(evs[0].Data))

	archive := formtask.ArchiveInput{Content: formtask.ContentRef{MessageID: "a3101151"}, By: "Ingrid Fjellheim", At: at}
	var first, again formtask.ArchiveResult
	require.NoError(t, f.run(t, &first, f.acts.Archive, archive))
	require.NoError(t, f.run(t, &again, f.acts.Archive, archive))
	assert.Equal(t, first, again, "a retried archive returns the first")
	assert.Regexp(t, `^AR\d+$`, first.ArchiveReference)
	evs = f.events(t)
	require.Len(t, evs, 2, "archived once")
	assert.Equal(t, events.FormTaskStatusChanged, evs[1].Type)
	assert.True(t, evs[1].Archived)
	assert.JSONEq(t, fmt.Sprintf(`{"MessageId":"a3101151","ReporteeId":%q,"Type":"FormTask","ServiceCode":"4711","ServiceEdition":2,
		"Status":"Sendt og arkivert","ArchiveReference":%q}`, f.reportee(t, "a3101151"), first.ArchiveReference), string(evs[1].Data))

	var archives, prints int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM archives), (SELECT count(*) FROM prints)`).Scan(&archives, &prints))
	assert.Equal(t, 1, archives)
	assert.Equal(t, 1, prints)
	task, err := f.q.GetFormTask(ctx, "a3101151")
	require.NoError(t, err)
	assert.Equal(t, taskstatus.Archived, task.Status)
	assert.Equal(t, first.ArchiveReference, task.ArchiveReference)

	ar, err := f.q.GetArchive(ctx, "a3101151")
	require.NoError(t, err)
	pdfSum, err := f.q.GetPrint(ctx, ar.PrintDigest)
	require.NoError(t, err)
	pdfBytes, err := f.acts.Files.Bytes(ctx, pdfSum)
	require.NoError(t, err)
	text := pdfText(t, pdfBytes)
	assert.Contains(t, text, first.ArchiveReference)
	assert.Contains(t, text, "Sendt og arkivert")
	assert.Contains(t, text, "revisjon.pdf")
	assert.Contains(t, text, "02.06.2025 kl. 10:15:00")
	blob, err := f.acts.Files.Bytes(ctx, ar.Attachments[0].SHA256)
	require.NoError(t, err)
	assert.Equal(t, "%PDF-1.4 beretning", string(blob))
	var kept int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM archive_blobs WHERE archive_reference = $1 AND sha256 = $2`,
		ar.ArchiveReference, ar.Attachments[0].SHA256).Scan(&kept))
	assert.Equal(t, 1, kept, "the archive keeps its attachment's blob")

	// Once archived, the read model keeps its status.
	require.NoError(t, f.run(t, nil, f.acts.ProjectState, formtask.ProjectInput{Content: formtask.ContentRef{MessageID: "a3101151"}, Status: taskstatus.Filling, By: "x", At: at}))
	task, err = f.q.GetFormTask(ctx, "a3101151")
	require.NoError(t, err)
	assert.Equal(t, taskstatus.Archived, task.Status)
	assert.Len(t, f.events(t), 2, "and writes no event")
}

// events are the events of the outbox, oldest first.
func (f *fixture) events(t *testing.T) []store.Event {
	t.Helper()
	evs, err := f.q.EventsAfter(context.Background(), 0, 100)
	require.NoError(t, err)
	return evs
}

// reportee is the ReporteeId of a message's owner.
func (f *fixture) reportee(t *testing.T, messageID string) string {
	t.Helper()
	task, err := f.q.GetFormTask(context.Background(), messageID)
	require.NoError(t, err)
	return task.ReporteeID
}

func TestDiscardRevision(t *testing.T) {
	f := newFixture(t)
	ref := f.revision(t, formtask.NewRevision{MessageID: "a3101179", Kind: formtask.RevisionKindReplace, Forms: f.currentForms(t, "a3101179")})
	other := ref
	other.MessageID = "a3101186"
	require.NoError(t, f.run(t, nil, f.acts.DiscardRevision, other))
	_, err := f.q.GetRevision(context.Background(), ref.Revision.ID)
	require.NoError(t, err, "only the message's own revisions are discarded")
	require.NoError(t, f.run(t, nil, f.acts.DiscardRevision, ref))
	_, err = f.q.GetRevision(context.Background(), ref.Revision.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Signing straight from Utfylling: Archive promotes the revision and archives it in one transaction, once.
func TestArchiveWithRevision(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ref := f.revision(t, formtask.NewRevision{MessageID: "a3101263", Kind: formtask.RevisionKindReplace, Forms: f.currentForms(t, "a3101263"),
		Attachments: []formtask.RevisionAttachment{{Name: "R", FileName: "r.pdf", AttachmentType: "Revisjonsberetning", Data: []byte("%PDF")}}})
	in := formtask.ArchiveInput{Content: ref, By: "Ingrid Fjellheim", At: time.Now()}
	var first, again formtask.ArchiveResult
	require.NoError(t, f.run(t, &first, f.acts.Archive, in))
	require.NoError(t, f.run(t, &again, f.acts.Archive, in))
	assert.Equal(t, first, again)
	ar, err := f.q.GetArchive(ctx, "a3101263")
	require.NoError(t, err)
	require.Len(t, ar.Attachments, 1, "the archive holds the revision's content")
	_, atts, err := f.q.MessageContent(ctx, "a3101263")
	require.NoError(t, err)
	assert.Len(t, atts, 1, "promoted once")
}

// A save's checks and projection as one local activity, run again after the first committed (its worker
// died before its workflow task completed): the promoted revision is not checked again beside itself on
// the message, and the answer is the first one's.
func TestCheckAndProjectAgainAfterItsProjection(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	task, err := f.q.GetFormTask(ctx, "a3101102")
	require.NoError(t, err)
	ref := f.revision(t, formtask.NewRevision{MessageID: "a3101102", Kind: formtask.RevisionKindReplace, Forms: f.currentForms(t, "a3101102")})
	in := formtask.CheckAndProjectInput{Content: ref, Forms: true, Attachments: true, ServiceCode: task.ServiceCode,
		ServiceEdition: task.ServiceEdition, Project: &formtask.ProjectInput{Content: ref, Status: taskstatus.Filling, By: "Ingrid Fjellheim", At: time.Now()}}
	var first, again formtask.CheckAndProjectResult
	require.NoError(t, f.run(t, &first, f.acts.CheckAndProject, in))
	require.Empty(t, first.Findings.Errors)
	// Checked again, the revision would now be found wanting: it has no forms left.
	_, err = f.pool.Exec(ctx, `DELETE FROM revision_forms WHERE revision_id = $1`, ref.Revision.ID)
	require.NoError(t, err)
	require.NoError(t, f.run(t, &again, f.acts.CheckAndProject, in))
	assert.Empty(t, again.Findings.Errors)
	assert.Equal(t, first.Ref, again.Ref)
	_, err = f.q.GetRevision(ctx, ref.Revision.ID)
	require.NoError(t, err, "not discarded")
}

// A submission's checks and archive as one local activity. An attempt run again after the first committed
// (its worker died before its workflow task completed) answers the same archive and writes nothing more;
// content the checks refuse is discarded, and nothing is archived.
func TestCheckAndArchive(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	in := func(messageID string) formtask.CheckAndArchiveInput {
		task, err := f.q.GetFormTask(ctx, messageID)
		require.NoError(t, err)
		ref := f.revision(t, formtask.NewRevision{MessageID: messageID, Kind: formtask.RevisionKindReplace, Forms: f.currentForms(t, messageID)})
		return formtask.CheckAndArchiveInput{Archive: formtask.ArchiveInput{Content: ref, By: "Ingrid Fjellheim", At: time.Now()},
			ServiceCode: task.ServiceCode, ServiceEdition: task.ServiceEdition}
	}

	valid := in("a3101102")
	var first, again formtask.CheckAndArchiveResult
	require.NoError(t, f.run(t, &first, f.acts.CheckAndArchive, valid))
	require.Empty(t, first.Findings.Errors)
	assert.Regexp(t, `^AR\d+$`, first.Archive.ArchiveReference)
	evs := f.events(t)
	require.NoError(t, f.run(t, &again, f.acts.CheckAndArchive, valid))
	assert.Equal(t, first.Archive, again.Archive, "the first archive")
	assert.Empty(t, again.Findings.Errors)
	assert.Equal(t, evs, f.events(t), "no second event")
	var archives int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM archives WHERE message_id = 'a3101102'`).Scan(&archives))
	assert.Equal(t, 1, archives)
	// Its revision was promoted, so the checks are not run again: a service whose rules changed since, or
	// content now beside itself on the message, cannot turn the archived submission into an invalid one.
	_, err := f.pool.Exec(ctx, `DELETE FROM revision_forms WHERE revision_id = $1`, valid.Archive.Content.Revision.ID)
	require.NoError(t, err)
	require.NoError(t, f.run(t, &again, f.acts.CheckAndArchive, valid))
	assert.Equal(t, first.Archive, again.Archive)
	assert.Empty(t, again.Findings.Errors)

	invalid := in("a3101221")
	var refused formtask.CheckAndArchiveResult
	require.NoError(t, f.run(t, &refused, f.acts.CheckAndArchive, invalid))
	assert.Len(t, refused.Findings.Errors, 2)
	assert.Empty(t, refused.Archive.ArchiveReference)
	_, err = f.q.GetRevision(ctx, invalid.Archive.Content.Revision.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "discarded")
	task, err := f.q.GetFormTask(ctx, "a3101221")
	require.NoError(t, err)
	assert.NotEqual(t, taskstatus.Archived, task.Status)
	assert.Equal(t, evs, f.events(t))
}
