package formtask_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/internal/temporaltest"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

var ingrid = formtask.Caller{Name: "Ingrid Fjellheim", Write: true, Sign: true, SecurityLevel: 1}

func kindOf(t *testing.T, err error) formtask.Kind {
	t.Helper()
	var e *formtask.Error
	require.True(t, errors.As(err, &e), "want a *formtask.Error, got %v", err)
	return e.Kind
}

// With Temporal away, a submission is Unavailable (the client may retry), and its revision does not stay
// behind.
func TestTemporalUnreachable(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: storetest.UnusedAddr(t)})
	require.NoError(t, err)
	defer c.Close()
	pool := storetest.New(t)
	ft := formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool), ConnectTimeout: 200 * time.Millisecond})

	ctx := context.Background() // the connect timeout bounds the wait
	task, err := ft.Load(ctx, "a3101102")
	require.NoError(t, err)
	_, err = ft.Submit(ctx, task, ingrid, formtask.Submission{Complete: false, Sign: true,
		Forms: []formtask.RevisionForm{{Type: "MainForm", DataFormatID: "3106", DataFormatVersion: 21845, Name: "x", FormData: "<Skjema/>"}}})
	assert.Equal(t, formtask.Unavailable, kindOf(t, err))
	assert.Equal(t, 5*time.Second, formtask.RetryAfter)

	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions`).Scan(&n))
	assert.Zero(t, n)

	_, err = ft.Load(ctx, "nosuch")
	assert.Equal(t, formtask.NotFound, kindOf(t, err))
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// A Temporal server that answers without the namespace (as one restarting does until it has registered
// it again) is Unavailable too, never an internal error.
func TestNamespaceMissingIsUnavailable(t *testing.T) {
	dev, err := temporaltest.StartDevServer(context.Background(), "", "")
	require.NoError(t, err)
	defer func() { _ = dev.Stop() }()
	c, err := client.NewLazyClient(client.Options{HostPort: dev.FrontendHostPort(), Namespace: "postbox-not-registered",
		Logger: temporaltest.QuietLogger()})
	require.NoError(t, err)
	defer c.Close()
	pool := storetest.New(t)
	ft := formtask.New(c, store.New(pool), formtask.Options{Files: storetest.FilesOf(pool), ConnectTimeout: 2 * time.Second})

	ctx := context.Background()
	task, err := ft.Load(ctx, "a3101102")
	require.NoError(t, err)
	_, err = ft.Submit(ctx, task, ingrid, formtask.Submission{Complete: false, Sign: true,
		Forms: []formtask.RevisionForm{{Type: "MainForm", DataFormatID: "3106", DataFormatVersion: 21845, Name: "x", FormData: "<Skjema/>"}}})
	assert.Equal(t, formtask.Unavailable, kindOf(t, err))

	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM form_revisions`).Scan(&n))
	assert.Zero(t, n)
}

// The rules of a change's shape are checked before anything is stored or sent, so a service without a
// store or Temporal refuses them.
func TestRefusedBeforeStoring(t *testing.T) {
	ft := formtask.New(nil, nil, formtask.Options{})
	ctx := context.Background()
	task := formtask.Task{MessageID: "a3101263", Status: taskstatus.Filling}
	main := formtask.RevisionForm{Type: "MainForm", DataFormatID: "3106", DataFormatVersion: 21845, FormData: "<Skjema/>"}
	sub := formtask.RevisionForm{Type: "SubForm", DataFormatID: "5571", DataFormatVersion: 41234, FormData: "<Skjema/>"}

	cases := []struct {
		name  string
		forms []formtask.RevisionForm
	}{
		{"two MainForms", []formtask.RevisionForm{main, main}},
		{"no MainForm", []formtask.RevisionForm{sub}},
		{"no content in Utfylling", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ft.Submit(ctx, task, ingrid, formtask.Submission{Complete: true, Sign: true, Forms: tc.forms})
			assert.Equal(t, formtask.BadInput, kindOf(t, err))
		})
	}
	t.Run("sub-form that is a MainForm", func(t *testing.T) {
		_, err := ft.PutSubForm(ctx, task, ingrid, 0, main, nil, nil)
		assert.Equal(t, formtask.BadInput, kindOf(t, err))
	})
}

// A change of a task the store says is archived — the repetition of a submission whose answer was lost —
// is refused as the workflow refuses it, before anything is stored or sent: a Conflict that carries the
// status and the ArchiveReference, whatever the change and whether or not it has content; a caller without
// the Write right is still Forbidden first. (A signing submission looks for the archive it may repeat:
// this task has none in the store.)
func TestArchivedTaskRefusedBeforeStoring(t *testing.T) {
	ft := formtask.New(nil, store.New(storetest.New(t)), formtask.Options{})
	ctx := context.Background()
	task := formtask.Task{MessageID: "a3101263", ServiceCode: "4711", ServiceEdition: 2,
		Status: taskstatus.Archived, ArchiveReference: "AR7000001"}
	main := formtask.RevisionForm{Type: "MainForm", DataFormatID: "3106", DataFormatVersion: 21845, FormData: "<Skjema/>"}
	sub := formtask.RevisionForm{Type: "SubForm", DataFormatID: "5571", DataFormatVersion: 41234, FormData: "<Skjema/>"}
	pdf := formtask.RevisionAttachment{FileName: "a.pdf", AttachmentType: "Dokumentasjon", Data: []byte("%PDF-1.4")}

	changes := map[string]func(formtask.Caller) error{}
	for _, params := range []struct{ complete, sign bool }{{true, true}, {true, false}, {false, false}} {
		for name, forms := range map[string][]formtask.RevisionForm{"no content": nil, "content": {main}} {
			changes[fmt.Sprintf("submit complete=%t sign=%t, %s", params.complete, params.sign, name)] = func(c formtask.Caller) error {
				_, err := ft.Submit(ctx, task, c, formtask.Submission{Complete: params.complete, Sign: params.sign, Forms: forms})
				return err
			}
		}
	}
	changes["sub-form"] = func(c formtask.Caller) error { _, err := ft.PutSubForm(ctx, task, c, 0, sub, nil, nil); return err }
	changes["attachment"] = func(c formtask.Caller) error { _, err := ft.AddAttachment(ctx, task, c, pdf, nil); return err }
	changes["streamed attachment"] = func(c formtask.Caller) error {
		_, err := ft.AddStreamedAttachment(ctx, task, c, pdf, strings.NewReader("%PDF-1.4"), 1<<20, nil)
		return err
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			err := change(ingrid)
			var e *formtask.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, formtask.Conflict, e.Kind)
			assert.Equal(t, taskstatus.Archived, e.Status)
			assert.Equal(t, "AR7000001", e.ArchiveReference)

			noWrite := ingrid
			noWrite.Write = false
			assert.Equal(t, formtask.Forbidden, kindOf(t, change(noWrite)))
		})
	}
}
