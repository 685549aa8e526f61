// Package correspondence is the agency's sending: one correspondence of a service to one or many
// recipients (a shipment), made visible, overdue and purged on durable Temporal timers, retracted by its
// sender while unread.
//
// A shipment is accepted in one transaction (its row, one row per recipient, and for each accepted
// recipient the id its message will have) and its workflow is started before that transaction commits, so
// an accepted shipment always has a workflow. The workflow waits for VisibleDateTime, then makes the
// messages in batches (CreateBatch: the preassigned ids make a batch run twice create nothing twice),
// waits for DueDateTime to mark the unconfirmed ones overdue, and for AllowSystemDeleteDateTime to purge
// them. Until its batch runs a message is not in the mailbox at all.
package correspondence

import (
	"encoding/json"
	"time"

	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/store"
)

// TaskQueue is the task queue of the shipment workflows and their activities (queue group correspondence).
const TaskQueue = "postbox-correspondence"

// WorkflowIDPrefix starts the id of every shipment's workflow.
const WorkflowIDPrefix = "shipment/"

// WorkflowID is the id of the workflow of shipment id.
func WorkflowID(id string) string { return WorkflowIDPrefix + id }

// WorkflowName is the registered name of the shipment workflow.
const WorkflowName = "Shipment"

// Limits of one shipment.
const (
	MaxRecipients    = 10_000
	MaxSubject       = 255
	MaxSummary       = 2_000
	MaxBodyBytes     = 256 << 10 // after cleaning
	MaxReference     = 255
	MaxCustomData    = 50
	MaxReplyOptions  = 10
	MaxCustomDataLen = 1_000
	MaxAttachments   = 20
)

// BatchSize is how many messages one CreateBatch makes in one transaction.
const BatchSize = 1_000

// Send is a request to send one correspondence of a service to recipients. Dates are wall-clock times in
// the service's zone (package clock), as every date of the interface.
type Send struct {
	ServiceCode      string
	ServiceEdition   int
	Recipients       []string // organization numbers (9 digits) or national identity numbers (11)
	Subject          string
	Summary          string
	Body             string // HTML; cleaned by the mailbox's policy before it is stored
	SendersReference string
	// IdempotentKey, when set, makes the send once per owner and key: a repeat answers the first shipment.
	IdempotentKey        string
	Language             int // 1044, 2068 or 1033; 0 is 1044
	ReplyOptions         []store.ReplyOption
	CustomMessageData    []store.CustomData
	IsConfirmationNeeded bool
	VisibleAt            *time.Time
	DueAt                *time.Time
	AllowSystemDeleteAt  *time.Time
	// Attachments go with every recipient's message, their bytes stored once.
	Attachments []Attachment
	// Notification, when set, tells each recipient once its message is visible (package notification).
	Notification *notification.Order
}

// Attachment is a file of a correspondence: its bytes in Data, or uploaded before (UploadID, Upload).
type Attachment struct {
	Name     string // shown in the mailbox; the file name when empty
	FileName string // the upload's when empty and UploadID is set
	Data     []byte
	UploadID string
	// The digest and size of the bytes, their blob's (resolveUploads, saveInline).
	sum  [32]byte
	size int64
}

// Actor is the service owner's client that sends, as a message's LastChangedBy and the audit log name it.
type Actor struct {
	ServiceOwner       string // code
	ServiceOwnerName   string
	OrganizationNumber string
	APIKeyName         string
	AuthMethod         string
	RequestID          string
}

// Why a recipient was refused: nothing was made for it.
const (
	RefusedMalformed = "malformed" // neither 9 nor 11 digits
	RefusedUnknown   = "unknown"   // no party has the number
	RefusedDeleted   = "deleted"   // the party is deleted
	RefusedDuplicate = "duplicate" // named before in the same request
)

// Outcome is what became of one recipient of a request: the id its message has (or will have at
// VisibleDateTime), or why it was refused.
type Outcome struct {
	Recipient string
	MessageID string
	Refused   string
}

// Accepted is the answer to an accepted Send.
type Accepted struct {
	ShipmentID string
	Outcomes   []Outcome
	// NotificationOrderID is the order that came with it ("" for none).
	NotificationOrderID string
}

// Shipment is a shipment as its sender sees it, with the count of its recipients in each state.
type Shipment struct {
	ID                  string
	ServiceCode         string
	ServiceEdition      int
	CreatedAt           time.Time
	CreatedBy           string
	Subject             string
	SendersReference    string
	VisibleAt           *time.Time
	DueAt               *time.Time
	AllowSystemDeleteAt *time.Time
	Recipients          int
	Created             int
	Refused             int
	Retracted           int
	NotificationOrderID string // the order that came with it, "" for none
}

// RecipientStatus is one recipient of a shipment as the sender follows it.
type RecipientStatus struct {
	Ordinal     int
	Recipient   string
	MessageID   string
	Refused     string
	CreatedAt   *time.Time // the message exists since
	RetractedAt *time.Time
	ReadAt      *time.Time
	ConfirmedAt *time.Time
	Purged      bool       // created, then purged (by its recipient or at AllowSystemDeleteDateTime)
	NotifiedAt  *time.Time // the first notice about it went (by e-mail or SMS)
}

// Key is the recipient's key in the keyset pages of its shipment.
func (r RecipientStatus) Key() int64 { return int64(r.Ordinal) }

// The states a recipient can be filtered on (RecipientFilter.State).
const (
	StatePending   = "pending"   // accepted, not created yet (waiting for VisibleDateTime)
	StateCreated   = "created"   // its message exists
	StateRead      = "read"      // its message was opened
	StateUnread    = "unread"    // its message exists and was not opened
	StateConfirmed = "confirmed" // its message was confirmed
	StateRefused   = "refused"   // refused when the shipment was accepted
	StateRetracted = "retracted" // retracted by the sender
)

// States are the recipient states, in the order the documentation lists them.
var States = []string{StatePending, StateCreated, StateRead, StateUnread, StateConfirmed, StateRefused, StateRetracted}

// Kind says why a request was refused; the API maps each kind to its HTTP status.
type Kind int

// Kinds of refusal.
const (
	BadInput    Kind = iota + 1 // a field is malformed, missing or out of range: Error.Detail names it
	NotOwned                    // the service is another owner's
	NoRecipient                 // every recipient was refused
	NotFound                    // no such shipment or message of the caller's
	AlreadyRead                 // a retraction of a message its recipient has opened
	TooLarge                    // an upload over MaxUploadBytes
	Unavailable                 // Temporal does not answer; the client may retry after RetryAfter
)

// RetryAfter is what a client is told to wait when Temporal does not answer.
const RetryAfter = 5 * time.Second

// Error is a refused request of the room.
type Error = refusal.Error[Kind]

func refuse(kind Kind, format string, args ...any) *Error { return refusal.New(kind, format, args...) }

// ErrNotFound answers a shipment or message that does not exist or is another owner's.
var ErrNotFound = refuse(NotFound, "no shipment or message of your services has this id")

// WorkflowInput is what a shipment's workflow starts with: ids and instants, never content.
type WorkflowInput struct {
	ShipmentID string
	// The instants (not wall-clock times) of the shipment's dates; zero when not set.
	VisibleAt           time.Time
	DueAt               time.Time
	AllowSystemDeleteAt time.Time
	// ConfirmationNeeded: only such messages can be overdue.
	ConfirmationNeeded bool
	// Notification is the workflow of the order that came with the shipment, started as a child once the
	// messages exist; nil for none.
	Notification *notification.WorkflowInput
}

// Progress is the workflow's progress, as its query and memo show it in the Temporal UI.
type Progress struct {
	Stage   string // waiting, creating, created, overdue, purged
	Created int
}

// replyOptionsJSON is the messages.reply_options value of opts.
func replyOptionsJSON(opts []store.ReplyOption) string {
	if len(opts) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(opts) // plain strings and ints
	return string(b)
}
