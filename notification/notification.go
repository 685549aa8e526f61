// Package notification tells the people behind a mailbox that something arrived: an owner's order to
// send an e-mail or SMS for each message of a shipment, a pre-filled form task or one existing message,
// at a requested time, with reminders sent only while the message still waits for its reader.
//
// An order is stored with one row per message and one Temporal workflow (WorkflowID) that sleeps on
// durable timers until each round (0: the notice; 1…: the reminders) and fans the round's batches out to
// SendBatch. A send is recorded 'sending' before the mail or SMS goes, with an idempotency key made of
// the order, the recipient and the round (the e-mail's Message-ID, the SMS gateway's idempotency header),
// and decided after; a batch retried after a crash sends only what is undecided, with the same keys.
// Addresses are resolved at send time from the party's contact data unless the order gave them; they
// never appear in a log line or an event.
package notification

import (
	"time"

	"github.com/postbox/postbox/internal/refusal"
)

// TaskQueue is the task queue of the notification workflows and their activities (queue group notification).
const TaskQueue = "postbox-notification"

// WorkflowIDPrefix starts the id of every order's workflow.
const WorkflowIDPrefix = "notification/"

// WorkflowID is the id of the workflow of order id.
func WorkflowID(id string) string { return WorkflowIDPrefix + id }

// WorkflowName is the registered name of the order workflow.
const WorkflowName = "NotificationOrder"

// The channels of an order. The …Preferred ones fall back to the other channel for a recipient without
// an address for the first.
const (
	Email          = "Email"
	Sms            = "Sms"
	EmailPreferred = "EmailPreferred"
	SmsPreferred   = "SmsPreferred"
)

// Channels are the channels an order may name.
var Channels = []string{Email, Sms, EmailPreferred, SmsPreferred}

// Limits of one order.
const (
	MaxEmailSubject = 255
	MaxEmailBody    = 10_000
	MaxSmsText      = 1_600 // ten concatenated SMS parts
	MaxReminders    = 5
	MaxReminderDays = 90
)

// BatchSize is how many recipients one SendBatch decides.
const BatchSize = 500

// Order is an owner's request to notify the recipients of messages. Zero templates take the defaults
// (DefaultEmailSubject, …); a zero SendAt sends as soon as the messages are visible.
type Order struct {
	Channel      string
	EmailSubject string
	EmailBody    string
	SmsText      string
	SendAt       *time.Time // wall-clock, in the service's zone (package clock)
	ReminderDays int        // days between reminders
	Reminders    int        // how many reminders at most
	// Addresses replace the party's contact data; only for an order of one message.
	Addresses *Addresses
}

// Addresses are where a recipient is reached.
type Addresses struct {
	EmailAddress string
	MobileNumber string
}

// The placeholders of the templates, replaced per recipient at send time.
const (
	PlaceholderName    = "$recipientName$"
	PlaceholderSubject = "$subject$"
	PlaceholderLink    = "$link$"
	PlaceholderDueDate = "$dueDate$"
)

// The templates an order without its own uses.
const (
	DefaultEmailSubject = "New in your Postbox: $subject$"
	DefaultEmailBody    = "Dear $recipientName$,\n\nyou have a new message in your Postbox: $subject$.\nRead it at $link$\n"
	DefaultSmsText      = "New in your Postbox: $subject$. $link$"
)

// Target is what an order notifies about: the messages, each with its reportee and the addresses given.
type Target struct {
	ShipmentID string // the order comes with a shipment
	Messages   []TargetMessage
}

// TargetMessage is one message an order notifies about.
type TargetMessage struct {
	MessageID string
	PartyID   int64
}

// Placed is an order stored, to be followed at its id.
type Placed struct {
	OrderID    string
	Recipients int
}

// The states of a send (a round to a recipient).
const (
	StateSending = "sending" // begun, outcome not recorded
	StateSent    = "sent"
	StateFailed  = "failed"
	StateSkipped = "skipped"
)

// Why a send failed or was skipped.
const (
	ReasonNoAddress   = "no-address"  // the recipient has no address for the channel, nor for its fallback
	ReasonRejected    = "rejected"    // the mail server or SMS gateway refused the address or the message
	ReasonGaveUp      = "gave-up"     // the channel kept failing until the retries were spent (a dead letter)
	ReasonRead        = "read"        // a reminder: the message has been read
	ReasonConfirmed   = "confirmed"   // a reminder: the message has been confirmed
	ReasonSubmitted   = "submitted"   // a reminder: the form task has been submitted
	ReasonGone        = "gone"        // the message was retracted, purged or deleted by its reader
	ReasonUnavailable = "unavailable" // the channel is not configured on the worker
)

// OrderStatus is an order as its owner follows it.
type OrderStatus struct {
	ID           string
	ShipmentID   string
	Channel      string
	SendAt       time.Time
	ReminderDays int
	Reminders    int
	Recipients   int
	CreatedAt    time.Time
	CreatedBy    string
}

// MessageOrder is an order as one of its messages sees it: the order, and that message's sends.
type MessageOrder struct {
	OrderStatus
	Recipient RecipientStatus
}

// RecipientStatus is one recipient of an order with its sends, round by round.
type RecipientStatus struct {
	Ordinal   int
	MessageID string
	Sends     []Send
}

// Key is the recipient's key in the keyset pages of its order.
func (r RecipientStatus) Key() int64 { return int64(r.Ordinal) }

// Send is one round's notice to a recipient as its owner sees it.
type Send struct {
	Round     int // 0: the notice; n: reminder n
	State     string
	Channel   string
	Address   string // the owner's own view only
	Reason    string
	Attempts  int
	DecidedAt *time.Time
}

// Kind says why a request was refused; the API maps each kind to its HTTP status.
type Kind int

// Kinds of refusal.
const (
	BadInput           Kind = iota + 1 // a field is malformed, missing or out of range: Error.Detail names it
	ChannelUnavailable                 // the order's channel is not configured here
	NotFound                           // no such order or message of the caller's
	Unavailable                        // Temporal does not answer; the client may retry after RetryAfter
)

// RetryAfter is what a client is told to wait when Temporal does not answer.
const RetryAfter = 5 * time.Second

// Error is a refused request of the room.
type Error = refusal.Error[Kind]

func refuse(kind Kind, format string, args ...any) *Error { return refusal.New(kind, format, args...) }

// ErrNotFound answers an order or message that does not exist or is another owner's.
var ErrNotFound = refuse(NotFound, "no notification order or message of your services has this id")

// WorkflowInput is what an order's workflow starts with: ids, counts and instants, never content.
type WorkflowInput struct {
	OrderID    string
	Recipients int
	SendAt     time.Time // the instant of the first round; zero: at once
	// ReminderEvery is the wait between rounds; Reminders how many rounds follow the first.
	ReminderEvery time.Duration
	Reminders     int
}
