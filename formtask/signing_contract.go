// Signing by several: what crosses between the service, the workflow and the activities. A task whose
// service declares signing steps (store.ServiceDetail.SigningSteps), or that names signees, waits in
// Signering once completed until every step has its signatures, then archives. The workflow orders every
// signature under its mutex; RecordSignature decides each in one transaction against the read model, so
// signatures that race are each counted once and a run started anew knows all of them.

package formtask

import (
	"time"

	"github.com/postbox/postbox/notification"
)

// Updates of signing.
const (
	UpdateSignees = "put-signees" // PUT signees: the task's signees, while it is in Utfylling
	// UpdateSign is a named signee's signature (POST …/signing/{messageId}); a signer with rights for the
	// task's party signs through UpdateSubmit (PUT ?sign=true) alike.
	UpdateSign = "sign"
	// UpdateReturnToFilling sends a task in Signering back to Utfylling (DELETE signatures), voiding its
	// signatures.
	UpdateReturnToFilling = "return-to-filling"
)

// Outcomes of signing.
const (
	OutcomeSigned   Outcome = "Signed"   // the signature is recorded (or was); other signatures are missing
	OutcomeReturned Outcome = "Returned" // back in Utfylling, the signatures voided
)

// ErrNotSignee is the refusal of a signature by someone the current step does not admit (403).
const ErrNotSignee = "NotSignee"

// MaxSignees bounds the signees of one task.
const MaxSignees = 50

// Signer is who signs: the person (PartyID and Name), the signee they sign for when it is an organization
// (OnBehalfOf; 0 signs as themselves, or for the task's party in a Role or Right step), whether they hold
// Sign on the service for the task's party, and their security level against the service's.
type Signer struct {
	PartyID       int64
	Name          string
	OnBehalfOf    int64 `json:",omitempty"`
	MaySign       bool
	SecurityLevel int
	RequiredLevel int
}

// SigneesInput names the task's signees by party id, in order, and its signing deadline (a wall-clock
// time; nil for the service's).
type SigneesInput struct {
	Caller   Caller
	PartyIDs []int64
	Deadline *time.Time `json:",omitempty"`
}

// SignInput is a named signee's signature; Expect, when set, is the content digest the signee read: a
// signature of content that changed since is refused.
type SignInput struct {
	Signer Signer
	Expect string `json:",omitempty"`
}

// ReturnInput sends a task back to Utfylling.
type ReturnInput struct{ Caller Caller }

// SigningPlan is the signing of a task signed by several, as CheckAndArchive and CheckAndProject find it
// when it is completed or signed: how many steps it has, its deadline, and why it cannot be completed yet
// ("" when it can). Their results carry none for a task signed once, so its history is as it always was.
type SigningPlan struct {
	Steps int
	// Deadline is the instant set with the signees, or else the service's SigningDeadlineDays after the
	// completion; nil for none. The read model keeps it while the task is in Signering.
	Deadline *time.Time `json:",omitempty"`
	Refusal  string     `json:",omitempty"`
	// Notify is the order that notifies the signees of their calls to sign, made as the task entered
	// Signering, for the run to start; nil when the task names no signees or was in Signering already.
	Notify *notification.WorkflowInput `json:",omitempty"`
}

// RecordSignatureInput is one signature for RecordSignature to decide.
type RecordSignatureInput struct {
	MessageID string
	Signer    Signer
	Expect    string `json:",omitempty"`
	At        time.Time
}

// Signature decisions (RecordSignatureResult.Decision).
const (
	SignatureRecorded = "Recorded" // a new signature
	SignatureRepeated = "Repeated" // the signer had signed for that signee: the same answer again
	SignatureRefused  = "Refused"  // not a signee of the current step, or the content changed: Detail says why
)

// RecordSignatureResult is what RecordSignature decided, and whether every step is now signed.
type RecordSignatureResult struct {
	Decision string
	Detail   string `json:",omitempty"`
	Stale    bool   `json:",omitempty"` // refused because the content is not the one the signer read
	Complete bool
}

// ReturnToFillingInput is a task sent back to Utfylling by By at At.
type ReturnToFillingInput struct {
	MessageID string
	By        string
	At        time.Time
}

// SigningOverdueInput marks a task still in Signering at its deadline.
type SigningOverdueInput struct {
	MessageID string
	Deadline  time.Time
}
