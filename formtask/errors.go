package formtask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/postbox/postbox/formtask/taskstatus"
)

// Kind says why a form-task change was refused; the API maps each kind to its HTTP status.
type Kind int

// Kinds of refusal.
const (
	BadInput            Kind = iota + 1 // the request contradicts the contract or the service's rules
	Invalid                             // the content failed validation: see Error.Validation
	Forbidden                           // missing right or security level
	SignRefused                         // signing needs the Sign right and the security level
	NotFound                            // no such form task, or no print of it
	Conflict                            // not possible in the task's status: see Error.Status
	TooLarge                            // an attachment larger than its type allows
	UnsupportedFileType                 // a file name its attachment type does not allow
	Unavailable                         // Temporal does not answer; the client may retry after RetryAfter
	BadFileName                         // an attachment's file name that could not be a plain file name
	BadFileContent                      // an attachment's content that is empty, executable or not what its name says
	PreconditionFailed                  // the task is not as the change expects (If-Match)
	InTrashbin                          // the task is in the trashbin: restore it first; see Error.Status
	NotInTrashbin                       // restore or purge of a task that is in the mailbox
	ServiceClosed                       // the service takes no new tasks through this interface now
	NotSignee                           // a signature the current signing step does not admit: Error.Detail says why
	BadChecksum                         // a checksum that is not a SHA-256 as the request must write it
	ChecksumNotAllowed                  // a checksum for an attachment type without IsCheckSumAllowed
	ChecksumMismatch                    // the bytes received do not have the checksum sent
	NotAFormTask                        // what only a form task has or does, asked of a correspondence
	MainFormStays                       // a delete of the main form: only a sub-form leaves a task
)

// RetryAfter is what a client is told to wait when Temporal does not answer.
const RetryAfter = 5 * time.Second

// Error is a refused form-task change.
type Error struct {
	Kind   Kind
	Detail string
	// Status is the task's status as this service knew it, for Conflict; ArchiveReference is set once
	// the task is archived.
	Status           string
	ArchiveReference string
	// Validation is the failed validation of Invalid.
	Validation *ValidationResult
	// Err is the cause, if any.
	Err error
}

func (e *Error) Error() string { return e.Detail }
func (e *Error) Unwrap() error { return e.Err }

func refuse(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// ErrUnavailable is the refusal of every change while Temporal does not answer (or is not configured).
func ErrUnavailable() *Error {
	return refuse(Unavailable, "form tasks cannot be changed right now; try again shortly")
}

// rejections are the kinds of the workflow's rejections (their error types), each refused with its message.
var rejections = map[string]Kind{
	ErrBadInput:      BadInput,
	ErrForbidden:     Forbidden,
	ErrSecurityLevel: Forbidden,
	ErrTaskArchived:  Conflict,
	ErrPrecondition:  PreconditionFailed,
	ErrNotSignee:     NotSignee,
	ErrContentGone:   NotFound,
	ErrWrongState:    Conflict,
	ErrInTrashbin:    InTrashbin,
	ErrNotInTrashbin: NotInTrashbin,
	ErrPurged:        NotFound,
}

// updateError maps a failed or rejected update to a typed error; other errors are returned as they are.
func updateError(ctx context.Context, task Task, err error) error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		kind, ok := rejections[appErr.Type()]
		if !ok {
			return err
		}
		e := refuse(kind, "%s", appErr.Message())
		switch appErr.Type() {
		case ErrTaskArchived:
			// The archive reference is the workflow's own, should the task have been archived after it was loaded.
			e.Status, e.ArchiveReference = taskstatus.Archived, detailOr(appErr, task.ArchiveReference)
		case ErrContentGone:
			e.Detail += "; another change removed it"
		case ErrWrongState, ErrInTrashbin:
			// The status is the workflow's own, which may be ahead of the task as it was loaded.
			e.Status = detailOr(appErr, task.Status)
		}
		return e
	}
	cause := context.Cause(ctx)
	if ctx.Err() == nil && !unreachable(err) {
		return err
	}
	if errors.Is(cause, context.Canceled) {
		return cause
	}
	e := ErrUnavailable()
	e.Err = errors.Join(err, cause)
	return e
}

// detailOr is the string a rejection carries as its detail, or otherwise.
func detailOr(appErr *temporal.ApplicationError, otherwise string) string {
	var s string
	if appErr.HasDetails() && appErr.Details(&s) == nil && s != "" {
		return s
	}
	return otherwise
}

// unreachable tells whether err says Temporal did not answer, as opposed to answering with a refusal. A
// namespace that is missing or unavailable counts too: a server restarting answers so until it has
// registered its namespaces again, which is no fault of the client's. So does a workflow not ready for an
// Update (its last workflow task failed, e.g. with a worker that died in it, and is being retried): the
// Update was not admitted, nothing changed, and a moment later it is.
func unreachable(err error) bool {
	var (
		notReady           *serviceerror.WorkflowNotReady
		unavailable        *serviceerror.Unavailable
		deadline           *serviceerror.DeadlineExceeded
		exhausted          *serviceerror.ResourceExhausted
		missingNamespace   *serviceerror.NamespaceNotFound
		namespaceNotServed *serviceerror.NamespaceUnavailable
	)
	if errors.As(err, &notReady) || errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.As(err, &missingNamespace) || errors.As(err, &namespaceNotServed) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}
