// The form-task workflow's contract: the task queues, the workflow id, the update names and the types that
// cross between the service, the workflow and the activities.
//
// One workflow runs per form task (id "formtask/<MessageId>"). It holds the task's status and carries
// revision ids and SHA-256 digests, never form data or attachment bytes: the API stores a submission's
// payloads first (Store.CreateRevision) and then sends an Update with the reference.
//
// Changing the workflow's code: running workflows replay their history against the new code, so a change
// in the commands it issues (activities, timers, their order) is guarded with a workflow.GetVersion patch
// (docs/formtasks.md, "Changing the workflow"), and testdata/formtask-baseline.json must still replay.

package formtask

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/notification"
)

// Task queues. Each group of work has its own queue, so its workers scale on their own:
//
//   - TaskQueue: the FormTask and TrashbinPurge workflows, and the local activities, which run inside the
//     workflow task of the update that needs them: CheckAndProject (the checks of a change's content and
//     its projection into the read model), CheckAndArchive (a submission's checks and its archive),
//     DiscardRevision, ChangePlace and ReadTaskState, and those of signing (RecordSignature,
//     ReturnToFilling, WriteSignees, MarkSigningOverdue).
//   - TaskQueueValidation: the prints (RenderPrint, RenderFormPrint), CPU-bound PDF rendering.
//   - TaskQueueArchive: the scheduled purge of the trashbins (PurgeTrashbin).
const (
	TaskQueue           = "postbox-formtasks"
	TaskQueueValidation = "postbox-validation"
	TaskQueueArchive    = "postbox-archive"
)

// ActivitiesOn lists the activities the workers of a task queue register, by method value (each is
// registered under its method's name, the name the workflow schedules it by).
func ActivitiesOn(a *Activities, taskQueue string) []any {
	switch taskQueue {
	case TaskQueue:
		return []any{a.CheckAndProject, a.CheckAndArchive, a.DiscardRevision, a.ChangePlace, a.ReadTaskState,
			a.RecordSignature, a.ReturnToFilling, a.WriteSignees, a.MarkSigningOverdue}
	case TaskQueueValidation:
		return []any{a.RenderPrint, a.RenderFormPrint}
	case TaskQueueArchive:
		return []any{a.PurgeTrashbin}
	}
	return nil
}

// A submission's archive runs as a local activity, which commits before the workflow task that accepts
// its update completes, and Temporal keeps an admitted update in memory: a restart in that window loses
// the update, and the workflow never learns of the archive. So every archive is noted as unconfirmed in
// its own transaction, and the workers' sweep (ConfirmArchives) makes a workflow still running 20 s after
// its archive take its state from the read model (UpdateResync), which ends the run.

// HeartbeatTimeout is how long a worker may stay silent in a heartbeating activity before Temporal gives
// the attempt to another worker (after the retry policy's first interval, 1 s). The activities heartbeat
// every fifth of it, and the workers send heartbeats at least that often (worker.New).
const HeartbeatTimeout = 5 * time.Second

// MetricTransitions counts status changes of form tasks, tagged "from" and "to". The workflow emits it
// through the SDK's metrics handler (which records nothing while replaying); the Prometheus naming of the
// worker's handler adds "_total".
const MetricTransitions = "postbox_formtask_transitions"

// WorkflowIDPrefix starts the id of every form-task workflow.
const WorkflowIDPrefix = "formtask/"

// WorkflowID is the id of the workflow of a message.
func WorkflowID(messageID string) string { return WorkflowIDPrefix + messageID }

// Update names.
const (
	UpdateSubmit     = "submit"         // PUT message?complete=&sign=
	UpdateSubForm    = "put-subform"    // PUT forms/{formId}
	UpdateAttachment = "add-attachment" // POST attachments
	UpdateValidate   = "validate"       // GET validate
	UpdatePrint      = "print"          // GET print: renders the current content (an archive has its own print)
	// UpdateChangeContent (formtask_forms.go): DELETE forms/{formId}, POST and DELETE attachments/{attachmentId}

)

// Custom search attributes of form-task workflows. The reportee is its ReporteeId ("r" + digits), so no
// identity number reaches Temporal.
var (
	SearchReportee       = temporal.NewSearchAttributeKeyKeyword("Reportee")
	SearchServiceCode    = temporal.NewSearchAttributeKeyKeyword("ServiceCode")
	SearchServiceEdition = temporal.NewSearchAttributeKeyInt64("ServiceEdition")
	SearchStatus         = temporal.NewSearchAttributeKeyKeyword("FormTaskStatus")
)

// MemoSubject is the memo field of a form-task workflow that holds the task's subject.
const MemoSubject = "Subject"

// SearchAttributes are the search attributes of the task's workflow.
func (s TaskState) SearchAttributes() []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		SearchReportee.ValueSet(s.ReporteeID),
		SearchServiceCode.ValueSet(s.ServiceCode),
		SearchServiceEdition.ValueSet(int64(s.ServiceEdition)),
		SearchStatus.ValueSet(s.Status),
	}
}

// Memo is the memo of the task's workflow.
func (s TaskState) Memo() map[string]any { return map[string]any{MemoSubject: s.Subject} }

// Error types of rejected updates (temporal.ApplicationError.Type), for the API to map to HTTP statuses.
const (
	ErrBadInput       = "BadInput"                  // 400: the request contradicts the contract
	ErrForbidden      = "Forbidden"                 // 403: the caller lacks Write on the service
	ErrSecurityLevel  = "InsufficientSecurityLevel" // 403: below the service's security level
	ErrTaskArchived   = "TaskArchived"              // 409: the task is sent and archived; details: its ArchiveReference
	ErrWrongState     = "WrongState"                // 409: not possible in the task's status; details: that status
	ErrRevisionDigest = "RevisionMismatch"          // activities: the revision is not the one referenced
	ErrPrecondition   = "PreconditionFailed"        // 412: the task is not as the change expects (If-Match)
)

// TaskState is the workflow's input and what it carries over continue-as-new. A task's first run gets it
// from the message (store.GetFormTask), so UpdateWithStart can start a workflow for any existing message.
type TaskState struct {
	MessageID        string
	ReporteeID       string
	ServiceCode      string
	ServiceEdition   int
	Subject          string
	Status           string
	ArchiveReference string
	// Revision is the revision last promoted into the message, 0 for none. Runs started before it was
	// kept have 0 until their next promotion.
	Revision int64
	// InTrashbin says the task is in the reportee's trashbin (formtask_lifecycle.go).
	InTrashbin bool `json:",omitempty"`
	// SigningDeadline, when set, is when a task in Signering that still lacks signatures gets
	// formtask.signing.overdue (SigningOverdue once it has).
	SigningDeadline *time.Time `json:",omitempty"`
	SigningOverdue  bool       `json:",omitempty"`
}

// Expectation is what a change made under If-Match expects of the task: the revision last promoted and
// the status, as the ETag the client sent was made of. The workflow checks it under its mutex, so no other
// change comes between the check and this one.
type Expectation struct {
	Revision int64
	Status   string
}

// ChangeRefusal says why the caller may not change the task in this state, or nil when it may: the caller's
// WriteRefusal, ErrTaskArchived once the task is archived (with its ArchiveReference as the error's
// details too, so the caller learns the outcome without parsing the message), or ErrInTrashbin while it is
// in the trashbin. The workflow's validators apply it to every change of the content, and formtask to a
// task as the store has it, so both refuse alike.
func (s TaskState) ChangeRefusal(c Caller) error {
	if err := c.WriteRefusal(s.ServiceCode, s.ServiceEdition); err != nil {
		return err
	}
	if s.Status == taskstatus.Archived {
		return s.archived()
	}
	if s.InTrashbin {
		return s.inTrashbinRefusal()
	}
	return nil
}

// archived is the refusal of a change of an archived task.
func (s TaskState) archived() error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("the form task is sent and archived (%s)", s.ArchiveReference),
		ErrTaskArchived, nil, s.ArchiveReference)
}

// Caller is what the API knows about who sends an update: the workflow enforces the rights, it does not
// look them up.
type Caller struct {
	Name          string // shown as LastChangedBy
	ID            string // login or party id, for the log; never an identity number
	Write         bool   // holds Write on the service for the reportee
	Sign          bool   // holds Sign on the service for the reportee
	Delete        bool   // holds Delete on the service for the reportee: moves the task to and from the trashbin
	SecurityLevel int    // of the caller's authentication
	RequiredLevel int    // the highest SecurityLevel of the service's ProcessSteps
}

// WriteRefusal says why the caller may not change a form task of the service, or nil when it may: without
// the Write right (ErrForbidden) or below the service's security level (ErrSecurityLevel). The workflow's
// validators apply it to every change and formtask to the creation of a task, so both refuse alike.
func (c Caller) WriteRefusal(serviceCode string, serviceEdition int) error {
	switch {
	case !c.Write:
		return reject(ErrForbidden, "the caller may not fill in service %s/%d for this reportee", serviceCode, serviceEdition)
	case c.SecurityLevel < c.RequiredLevel:
		return reject(ErrSecurityLevel, "the service requires security level %d; the caller has %d", c.RequiredLevel, c.SecurityLevel)
	}
	return nil
}

// RevisionRef names a revision stored by the API and the SHA-256 (hex) of its content.
type RevisionRef struct {
	ID     int64
	Digest string
}

// FormRef describes a submitted form without its data.
type FormRef struct {
	Type              string // MainForm or SubForm
	DataFormatID      string
	DataFormatVersion int
}

// AttachmentRef describes a submitted attachment without its bytes.
type AttachmentRef struct {
	FileName       string
	AttachmentType string
	Size           int64
}

// SubmitInput is a PUT on the message. Complete and Sign are the query parameters with their defaults
// (true) applied. The revision holds all forms and attachments; it may be empty (ID 0) only when a task in
// Signering is signed.
type SubmitInput struct {
	Caller      Caller
	Complete    bool
	Sign        bool
	Revision    RevisionRef
	Forms       []FormRef
	Attachments []AttachmentRef
	// Expect, when set, refuses the submission (ErrPrecondition) unless the task is as expected.
	Expect *Expectation `json:",omitempty"`
	// Signer is the caller as a signer of a task with signing steps (signing_contract.go); a login that is
	// no person (an enterprise user) has none, and cannot sign such a task.
	Signer Signer `json:",omitzero"`
}

// SubFormInput adds a sub-form (FormID 0 or unknown) or changes the sub-form FormID.
type SubFormInput struct {
	Caller   Caller
	FormID   int64
	Revision RevisionRef
	Form     FormRef
	// Expect, when set, refuses the change (ErrPrecondition) unless the task is as expected.
	Expect *Expectation `json:",omitempty"`
}

// AttachmentInput adds one attachment.
type AttachmentInput struct {
	Caller     Caller
	Revision   RevisionRef
	Attachment AttachmentRef
}

// ReadInput is the input of the read-only updates (validate, print).
type ReadInput struct {
	Caller Caller
	// FormID is the one form a print is of (GET forms/{formId}/print); 0 prints the whole task.
	FormID int64 `json:",omitempty"`
}

// Outcome says what an update did.
type Outcome string

// Outcomes of updates.
const (
	OutcomeSaved         Outcome = "Saved"         // content stored, still Utfylling
	OutcomeSentToSigning Outcome = "SentToSigning" // now Signering
	OutcomeArchived      Outcome = "Archived"      // signed, now Sendt og arkivert
	OutcomeSignRefused   Outcome = "SignRefused"   // signing needs the Sign right and the security level; left in Signering
	OutcomeInvalid       Outcome = "Invalid"       // validation failed; nothing of the revision kept, status unchanged
	OutcomeValidated     Outcome = "Validated"     // validate: see Validation
	OutcomePrinted       Outcome = "Printed"       // print: see PrintDigest
)

// Result is the answer to every update.
type Result struct {
	Outcome          Outcome
	Status           string            // the task's status after the update
	Validation       *ValidationResult `json:",omitempty"`
	ArchiveReference string            `json:",omitempty"`
	FormID           int64             `json:",omitempty"` // put-subform: the form written
	AttachmentID     int64             `json:",omitempty"` // add-attachment: the attachment written
	PrintDigest      string            `json:",omitempty"` // print: key of the PDF in the store (hex)
}

// ValidationResult is the interface's validation result.
type ValidationResult struct {
	Success            bool
	ValidationErrors   []ValidationEntry
	ValidationWarnings []ValidationEntry
}

// ValidationEntry is one error or warning.
type ValidationEntry struct {
	FieldName    string
	ErrorMessage string
	FieldXPath   string
}

// Findings are the errors and warnings of one check; activities return them and the workflow joins them
// into a ValidationResult.
type Findings struct {
	Errors   []ValidationEntry
	Warnings []ValidationEntry
}

// Join adds other's entries to f.
func (f Findings) Join(other Findings) Findings {
	return Findings{
		Errors:   append(append([]ValidationEntry{}, f.Errors...), other.Errors...),
		Warnings: append(append([]ValidationEntry{}, f.Warnings...), other.Warnings...),
	}
}

// Result applies the interface's rule: without errors, Success is true, ValidationErrors is empty and
// ValidationWarnings lists the warnings; with errors, Success is false and both lists hold the errors and
// the warnings.
func (f Findings) Result() ValidationResult {
	if len(f.Errors) == 0 {
		return ValidationResult{Success: true, ValidationErrors: []ValidationEntry{}, ValidationWarnings: append([]ValidationEntry{}, f.Warnings...)}
	}
	all := append(append([]ValidationEntry{}, f.Errors...), f.Warnings...)
	return ValidationResult{ValidationErrors: all, ValidationWarnings: append([]ValidationEntry{}, all...)}
}

// ContentRef names the content an activity works on: a revision, or the message's current content when the
// revision is zero.
type ContentRef struct {
	MessageID string
	Revision  RevisionRef
}

// CheckAttachmentsInput asks whether content satisfies the service's attachment rules. Final also checks
// MinAttachmentCount, which applies only when the task is completed.
type CheckAttachmentsInput struct {
	Content        ContentRef
	ServiceCode    string
	ServiceEdition int
	Final          bool
}

// ProjectInput writes the read model: promotes the revision (if any) and sets status and last change.
type ProjectInput struct {
	Content ContentRef
	Status  string
	By      string
	At      time.Time
	// Signing is the plan of a task signed by several entering Signering: its deadline is kept with the
	// status, and its signees are called to sign.
	Signing *SigningPlan `json:",omitempty"`
}

// CheckAndProjectInput asks CheckAndProject for the checks of an update's content (the forms
// against their schemas, the attachments against the service's rules, Final as in CheckAttachmentsInput)
// and, when they find no error and Project is set, its projection (Project.Content is Content). A revision
// the checks find invalid is discarded.
type CheckAndProjectInput struct {
	Content        ContentRef
	Forms          bool
	Attachments    bool
	ServiceCode    string
	ServiceEdition int
	Final          bool
	Project        *ProjectInput `json:",omitempty"`
}

// CheckAndProjectResult is what the checks found and, when they passed and a projection was asked for,
// what it wrote.
type CheckAndProjectResult struct {
	Findings Findings
	Ref      int64
	// Signing is the plan of a task signed by several being sent to Signering (signing_contract.go): with
	// a Refusal the projection was not made.
	Signing *SigningPlan `json:",omitempty"`
}

// CheckAndArchiveInput asks CheckAndArchive for a submission's checks and archive: the checks of
// Archive.Content's revision, if it has one (the forms and the attachments, final), and, when they find no
// error, the archive. A revision the checks find invalid is discarded.
type CheckAndArchiveInput struct {
	Archive        ArchiveInput
	ServiceCode    string
	ServiceEdition int
	// Signed says every signing step of a task signed by several is signed: archive it.
	Signed bool `json:",omitempty"`
}

// CheckAndArchiveResult is what the checks found and, when they found no error, the archive; or, for a task
// signed by several (Signing set), no archive: its completion sent to Signering instead (unless Signing has
// a Refusal), or, in Signering, nothing done (the workflow records the signature).
type CheckAndArchiveResult struct {
	Findings Findings
	Archive  ArchiveResult
	Signing  *SigningPlan `json:",omitempty"`
}

// ProjectResult says what a promotion wrote.
type ProjectResult struct {
	Ref int64 // id of the form or attachment written by a sub-form or attachment revision
	// Notify is the notification order of the calls to sign of a task entering Signering, for its run to
	// start; nil for none.
	Notify *notification.WorkflowInput `json:",omitempty"`
}

// ArchiveInput archives a message: its revision (if any) becomes its content, then that is archived, in
// one transaction.
type ArchiveInput struct {
	Content ContentRef
	By      string
	At      time.Time
}

// ArchiveResult is the archive's reference and the digest of its print.
type ArchiveResult struct {
	ArchiveReference string
	PrintDigest      string
}

// PrintResult is the digest of the stored print.
type PrintResult struct {
	Digest string
}
