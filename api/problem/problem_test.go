package problem

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask"
)

// Each refusal of the form-task service has its problem; the worker's tests assert the kinds, these the
// HTTP answers they get.
func TestFormTaskProblems(t *testing.T) {
	validation := &formtask.ValidationResult{ValidationErrors: []formtask.ValidationEntry{{FieldName: "anim.gif", ErrorMessage: "file type not allowed"}}}
	cases := []struct {
		kind   formtask.Kind
		status int
		typ    string
	}{
		{formtask.BadInput, http.StatusBadRequest, "urn:postbox:problem:bad-request"},      // e.g. exactly one MainForm
		{formtask.Invalid, http.StatusBadRequest, "urn:postbox:problem:validation-failed"}, // failed validation, wrong attachment, main form as sub-form
		{formtask.Forbidden, http.StatusForbidden, "urn:postbox:problem:forbidden"},        // no Write, security level
		{formtask.SignRefused, http.StatusForbidden, "urn:postbox:problem:sign-refused"},   // signing without Sign
		{formtask.NotFound, http.StatusNotFound, "urn:postbox:problem:not-found"},          // no such task, no print yet
		{formtask.Conflict, http.StatusConflict, "urn:postbox:problem:conflict"},           // archived, validation outside Utfylling
		{formtask.TooLarge, http.StatusRequestEntityTooLarge, "urn:postbox:problem:attachment-too-large"},
		{formtask.UnsupportedFileType, http.StatusUnsupportedMediaType, "urn:postbox:problem:file-type-not-allowed"},
		{formtask.Unavailable, http.StatusServiceUnavailable, "urn:postbox:problem:temporal-unavailable"},
		{formtask.BadFileName, http.StatusBadRequest, "urn:postbox:problem:file-name-not-allowed"},       // CON.pdf, U+202E, ../
		{formtask.BadFileContent, http.StatusBadRequest, "urn:postbox:problem:file-content-not-allowed"}, // empty, executable, not what the name says
		{formtask.ServiceClosed, http.StatusConflict, "urn:postbox:problem:service-closed"},              // not REST-enabled, outside its dates
		{formtask.NotSignee, http.StatusForbidden, "urn:postbox:problem:not-a-signee"},                   // the signing step does not admit the signer
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			err := &formtask.Error{Kind: tc.kind, Detail: "why", Validation: validation}
			p, internal := From(err)
			require.False(t, internal)
			assert.Equal(t, tc.status, p.Status)
			assert.Equal(t, tc.typ, p.Type)
			assert.Equal(t, "why", p.Detail)
			assert.Equal(t, validation.ValidationErrors, p.Errors)
			after, retry := RetryAfter(err)
			assert.Equal(t, tc.kind == formtask.Unavailable, retry)
			if retry {
				assert.Equal(t, 5*time.Second, after)
			}
		})
	}
}
