package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

const (
	o1  = "310123455"   // Fjellheim Maskin AS: 135 messages
	p1  = "12857812326" // Ingrid Fjellheim: HADM on O1, and her own mailbox
	all = 135
)

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestGrantArgsReadBackAsGiven holds the text form of the grant arrays to what PostgreSQL reads from it:
// the codes, editions and archived flags in order, whatever characters a code holds.
func TestGrantArgsReadBackAsGiven(t *testing.T) {
	pool := storetest.New(t)
	read := []store.ServiceKey{{Code: "4711", Edition: 2}, {Code: `a"b\c`, Edition: 1}, {Code: "NULL", Edition: 3},
		{Code: "x,y{z}", Edition: 1}, {Code: " spaced ", Edition: 7}, {Code: "", Edition: 1}}
	archiveRead := []store.ServiceKey{{Code: "7102", Edition: 1}, {Code: "ÆØÅ", Edition: 2}}
	for _, vis := range []store.Visibility{store.NewVisibility(read, archiveRead), {Read: read, ArchiveRead: archiveRead},
		store.NewVisibility(nil, nil)} {
		var (
			codes    []string
			editions []int32
			archived []bool
		)
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT $1::text[], $2::int[], $3::bool[]`, store.GrantArgs(vis)...).
			Scan(&codes, &editions, &archived))
		var wantCodes []string
		var wantEditions []int32
		var wantArchived []bool
		for i, k := range slices.Concat(vis.Read, vis.ArchiveRead) {
			wantCodes, wantEditions = append(wantCodes, k.Code), append(wantEditions, int32(k.Edition))
			wantArchived = append(wantArchived, i >= len(vis.Read))
		}
		assert.Equal(t, len(wantCodes), len(codes))
		if len(wantCodes) > 0 {
			assert.Equal(t, wantCodes, codes)
			assert.Equal(t, wantEditions, editions)
			assert.Equal(t, wantArchived, archived)
		}
	}
}

func TestVisibilityAllows(t *testing.T) {
	for _, tc := range []struct {
		vis    store.Visibility
		svc    store.ServiceKey
		status string
		want   bool
	}{
		{store.Visibility{All: true}, storetest.Svc7102, "Arkivert", true},
		{storetest.VisP4, storetest.Svc7102, "Ulest", true},
		{storetest.VisP4, storetest.Svc7102, "Arkivert", false},
		{storetest.VisP4, storetest.Svc7001, "Ulest", false},
		{storetest.VisP3, storetest.Svc4711v2, "Sendt og arkivert", true},
		{storetest.VisP3, storetest.Svc4711v2, "Utfylling", true},
		{storetest.VisP3, storetest.Svc7001, "Arkivert", false},
		{store.Visibility{ArchiveRead: []store.ServiceKey{storetest.Svc7001}}, storetest.Svc7001, "Lest", false},
		{store.Visibility{}, storetest.Svc7001, "Lest", false},
	} {
		assert.Equal(t, tc.want, tc.vis.Allows(tc.svc, tc.status), "%+v %v %s", tc.vis, tc.svc, tc.status)
	}
}

func TestGetMessage(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	demo := storetest.DemoMessages(t)

	for _, tc := range []struct{ id, reportee string }{
		{"a3100808", o1}, // Correspondence, every kind of reply option, two attachments
		{"a3100150", o1}, // Correspondence with an encrypted attachment
		{"a3101116", p1}, // FormTask with MainForm and SubForm, in P1's own mailbox
		{"a3101102", o1}, // FormTask in Utfylling
		{"a3100941", o1}, // FormTask in Signering
	} {
		t.Run(tc.id, func(t *testing.T) {
			want := demo[tc.id]
			m, err := q.GetMessage(ctx, storetest.PartyID(t, pool, tc.reportee), tc.id)
			require.NoError(t, err)
			assert.Equal(t, want.Subject, m.Subject)
			assert.Equal(t, want.Type, m.Type)
			assert.Equal(t, want.Status, m.Status)
			assert.Equal(t, ts(want.CreatedDate), m.CreatedDate)
			assert.Equal(t, want.Summary, m.Summary)
			assert.Equal(t, want.Body, m.Body)
			assert.Equal(t, want.MessageSender, m.MessageSender)
			if want.ArchiveReference != nil {
				assert.Equal(t, *want.ArchiveReference, m.ArchiveReference)
			} else {
				assert.Empty(t, m.ArchiveReference)
			}
			assert.Len(t, m.ReplyOptions, len(want.ReplyOptions))

			require.Len(t, m.Forms, len(want.Forms))
			for i, f := range want.Forms {
				got := m.Forms[i]
				assert.NotZero(t, got.ID)
				assert.Equal(t, store.Form{ID: got.ID, Type: f.Type, DataFormatID: f.DataFormatID,
					DataFormatVersion: f.DataFormatVersion, Name: f.Name, ValidationStatus: "NotValidated"}, got)
			}
			require.Len(t, m.Attachments, len(want.Attachments))
			for i, a := range want.Attachments {
				got := m.Attachments[i]
				assert.Equal(t, a.Name, got.Name)
				assert.Equal(t, a.FileName, got.FileName)
				assert.Equal(t, a.AttachmentType, got.AttachmentType)
				assert.Equal(t, a.Encrypted, got.Encrypted)
				assert.Equal(t, a.SigningLocked, got.SigningLocked)
				assert.Equal(t, a.SignedByDefault, got.SignedByDefault)
				assert.EqualValues(t, len(a.Data), got.FileSize)
				assert.Equal(t, store.ContentTypeOf(a.FileName), got.ContentType)
				assert.Len(t, got.SHA256, 32)
				meta, err := q.GetAttachment(ctx, storetest.PartyID(t, pool, tc.reportee), tc.id, got.ID)
				require.NoError(t, err)
				assert.Equal(t, got, meta, "the single view and the attachment agree")
			}
		})
	}

	t.Run("archived correspondence", func(t *testing.T) {
		m, err := q.GetMessage(ctx, storetest.PartyID(t, pool, o1), "a3100115")
		require.NoError(t, err)
		assert.Equal(t, "Arkivert", m.Status)
		assert.False(t, storetest.VisP4.Allows(m.Service(), m.Status))
	})

	for _, tc := range []struct{ name, id, reportee string }{
		{"another reportee's message", "a3101116", o1},
		{"no such message", "a999", o1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := q.GetMessage(ctx, storetest.PartyID(t, pool, tc.reportee), tc.id)
			assert.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}

func TestGetFormAndFormData(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	demo := storetest.DemoMessages(t)
	org, self := storetest.PartyID(t, pool, o1), storetest.PartyID(t, pool, p1)

	for _, tc := range []struct {
		id       string
		reportee int64
	}{{"a3101116", self}, {"a3101102", org}, {"a3101221", org}, {"a3101067", org}} {
		m, err := q.GetMessage(ctx, tc.reportee, tc.id)
		require.NoError(t, err)
		require.Len(t, m.Forms, len(demo[tc.id].Forms))
		for i, f := range m.Forms {
			form, err := q.GetForm(ctx, tc.reportee, tc.id, f.ID)
			require.NoError(t, err)
			assert.Equal(t, f, form)
			data, err := q.GetFormData(ctx, tc.reportee, tc.id, f.ID)
			require.NoError(t, err)
			assert.Equal(t, []byte(demo[tc.id].Forms[i].FormData), data, "%s form %d byte for byte", tc.id, i)
		}
	}

	first, err := q.GetMessage(ctx, self, "a3101116")
	require.NoError(t, err)
	formID := first.Forms[0].ID
	for _, tc := range []struct {
		name      string
		reportee  int64
		messageID string
		formID    int64
	}{
		{"another reportee", org, "a3101116", formID},
		{"a form of another message", self, "a3101144", formID},
		{"no such form", self, "a3101116", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := q.GetForm(ctx, tc.reportee, tc.messageID, tc.formID)
			assert.ErrorIs(t, err, store.ErrNotFound)
			_, err = q.GetFormData(ctx, tc.reportee, tc.messageID, tc.formID)
			assert.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}

func TestMarkCorrespondenceRead(t *testing.T) {
	pool := storetest.New(t)
	q := store.New(pool)
	ctx := context.Background()
	org := storetest.PartyID(t, pool, o1)
	at := time.Date(2025, 4, 1, 12, 30, 15, 0, time.UTC)
	read := store.Event{Type: "read", Source: "http://x/m", Subject: "/party/x", Data: []byte(`{}`), ReporteeID: org}
	events := func() int {
		evs, err := q.EventsAfter(ctx, 0, 100)
		require.NoError(t, err)
		return len(evs)
	}

	changed, err := q.MarkCorrespondenceRead(ctx, org, "a3100150", "Ingrid Fjellheim", at, read)
	require.NoError(t, err)
	assert.True(t, changed, "Ulest is read the first time")
	m, err := q.GetMessage(ctx, org, "a3100150")
	require.NoError(t, err)
	assert.Equal(t, "Lest", m.Status)
	assert.Equal(t, "Ingrid Fjellheim", m.LastChangedBy)
	assert.Equal(t, at, m.LastChangedDateTime)
	assert.Equal(t, 1, events(), "the first read writes its event")

	for _, tc := range []struct{ name, id string }{
		{"read again", "a3100150"},
		{"already read", "a3100122"},
		{"archived", "a3100115"},
		{"form task", "a3101102"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := q.GetMessage(ctx, org, tc.id)
			require.NoError(t, err)
			changed, err := q.MarkCorrespondenceRead(ctx, org, tc.id, "Per Storvik", at.Add(time.Hour), read)
			require.NoError(t, err)
			assert.False(t, changed)
			assert.Equal(t, 1, events(), "no change, no event")
			after, err := q.GetMessage(ctx, org, tc.id)
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing changes")
		})
	}

	t.Run("another reportee's message", func(t *testing.T) {
		_, err := q.MarkCorrespondenceRead(ctx, storetest.PartyID(t, pool, p1), "a3100199", "x", at, read)
		assert.ErrorIs(t, err, store.ErrNotFound)
		m, err := q.GetMessage(ctx, org, "a3100199")
		require.NoError(t, err)
		assert.Equal(t, "Ulest", m.Status)
	})

	t.Run("concurrent reads change it once", func(t *testing.T) {
		const readers = 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			changes []string
		)
		for i := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				by := []string{"A", "B", "C", "D", "E", "F", "G", "H"}[i]
				changed, err := q.MarkCorrespondenceRead(ctx, org, "a3100234", by, at.Add(time.Duration(i)*time.Minute), read)
				assert.NoError(t, err)
				if changed {
					mu.Lock()
					changes = append(changes, by)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Len(t, changes, 1)
		m, err := q.GetMessage(ctx, org, "a3100234")
		require.NoError(t, err)
		assert.Equal(t, "Lest", m.Status)
		assert.Equal(t, changes[0], m.LastChangedBy, "the one who changed it is recorded")
		assert.Equal(t, 2, events(), "one event for the one change")
	})
}
