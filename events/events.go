// Package events turns Postbox's state changes into CloudEvents 1.0: the event types, the events each
// change writes into the outbox (store.AppendEvents, in the transaction of the change) and their wire
// form. The outbox table and its gap-free sequence are store's; the feeds and deliveries read them here.
package events

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// The event types: reverse-DNS, versioned. A change of a type's data that is not backward compatible
// gets a new version.
const (
	FormTaskCreated            = "no.postbox.formtask.created.v1"
	FormTaskStatusChanged      = "no.postbox.formtask.status.changed.v1"
	FormTaskAttachmentAdded    = "no.postbox.formtask.attachment.added.v1"
	FormTaskAttachmentDeleted  = "no.postbox.formtask.attachment.deleted.v1"
	FormTaskAttachmentReplaced = "no.postbox.formtask.attachment.replaced.v1"
	FormTaskFormAdded          = "no.postbox.formtask.form.added.v1"
	FormTaskFormChanged        = "no.postbox.formtask.form.changed.v1"
	FormTaskFormDeleted        = "no.postbox.formtask.form.deleted.v1"
	// FormTaskOverdue: a form task a service owner sent with a DueDateTime was not submitted by then.
	FormTaskOverdue = "no.postbox.formtask.overdue.v1"
	// Signing by several: a signature recorded, voided (the task went back to Utfylling), every step signed
	// (the task archives next), and a task still in Signering at its signing deadline.
	FormTaskSigned           = "no.postbox.formtask.signed.v1"
	FormTaskSignatureVoided  = "no.postbox.formtask.signature.voided.v1"
	FormTaskSigningCompleted = "no.postbox.formtask.signing.completed.v1"
	FormTaskSigningOverdue   = "no.postbox.formtask.signing.overdue.v1"

	CorrespondenceCreated   = "no.postbox.correspondence.created.v1"
	CorrespondenceRead      = "no.postbox.correspondence.read.v1"
	CorrespondenceConfirmed = "no.postbox.correspondence.confirmed.v1"
	CorrespondenceArchived  = "no.postbox.correspondence.archived.v1"
	// Sent by a service owner (package correspondence): made visible in the mailbox (at once, or at its
	// VisibleDateTime); due and still unconfirmed at its DueDateTime; taken back by its sender unread.
	CorrespondencePublished = "no.postbox.correspondence.published.v1"
	CorrespondenceOverdue   = "no.postbox.correspondence.overdue.v1"
	CorrespondenceRetracted = "no.postbox.correspondence.retracted.v1"

	// A notification of a message (package notification) was sent, or failed for good: round 0 is the
	// notice, round n its n-th reminder. Neither names the address.
	NotificationSent   = "no.postbox.notification.sent.v1"
	NotificationFailed = "no.postbox.notification.failed.v1"

	// SubmissionConfirmed: the owner of the service has received an archived form task (package submission).
	SubmissionConfirmed = "no.postbox.submission.confirmed.v1"

	MessageDeleted  = "no.postbox.message.deleted.v1"
	MessageRestored = "no.postbox.message.restored.v1"
	MessagePurged   = "no.postbox.message.purged.v1"

	RoleDelegated = "no.postbox.role.delegated.v1"
	RoleDeleted   = "no.postbox.role.deleted.v1"

	RoleDefinitionCreated = "no.postbox.roledefinition.created.v1"
	RoleDefinitionChanged = "no.postbox.roledefinition.changed.v1"
	RoleDefinitionDeleted = "no.postbox.roledefinition.deleted.v1"
)

// Types lists every event type, e.g. for a subscription's filter to be checked against.
var Types = []string{
	FormTaskCreated, FormTaskStatusChanged, FormTaskAttachmentAdded, FormTaskAttachmentDeleted, FormTaskAttachmentReplaced,
	FormTaskFormAdded, FormTaskFormChanged, FormTaskFormDeleted, FormTaskOverdue, SubmissionConfirmed,
	CorrespondenceCreated, CorrespondenceRead, CorrespondenceConfirmed, CorrespondenceArchived,
	CorrespondencePublished, CorrespondenceOverdue, CorrespondenceRetracted, NotificationSent, NotificationFailed,
	MessageDeleted, MessageRestored, MessagePurged,
	RoleDelegated, RoleDeleted,
	RoleDefinitionCreated, RoleDefinitionChanged, RoleDefinitionDeleted,
}

// SpecVersion is the CloudEvents version of every event.
const SpecVersion = "1.0"

// CloudEvent is an event as clients get it (structured JSON mode). Sequence is the CloudEvents sequence
// extension: the outbox seq, which a feed continues after.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject"`
	Time            time.Time       `json:"time"`
	DataContentType string          `json:"datacontenttype"`
	Sequence        string          `json:"sequence"`
	Data            json.RawMessage `json:"data"`
}

// FromStored is the CloudEvent of an outbox event.
func FromStored(e store.Event) CloudEvent {
	return CloudEvent{SpecVersion: SpecVersion, ID: e.ID, Source: e.Source, Type: e.Type, Subject: e.Subject,
		Time: e.Time.UTC(), DataContentType: e.DataContentType, Sequence: strconv.FormatInt(e.Seq, 10), Data: e.Data}
}

// Message is a message after a change: the data of every message event. It names the message and its
// state, never its content.
type Message struct {
	MessageID        string `json:"MessageId"`
	ReporteeID       int64  `json:"-"`
	Type             string `json:"Type"` // FormTask or Correspondence
	ServiceCode      string `json:"ServiceCode"`
	ServiceEdition   int    `json:"ServiceEdition"`
	Status           string `json:"Status"`
	ArchiveReference string `json:"ArchiveReference,omitempty"`
}

// Attachment is the data of FormTaskAttachmentAdded, …Deleted and …Replaced.
type Attachment struct {
	Message
	AttachmentID   int64  `json:"AttachmentId"`
	AttachmentType string `json:"AttachmentType"`
}

// Role is the data of RoleDelegated and RoleDeleted: a role of the reportee held by a party (HolderPartyID)
// or an enterprise user (HolderUserName).
type Role struct {
	RoleID           int64  `json:"RoleId"`
	RoleDefinitionID int    `json:"RoleDefinitionId"`
	ReporteeID       int64  `json:"-"`
	HolderPartyID    int64  `json:"-"` // shown as HolderId "r…", never an identity number
	HolderUserName   string `json:",omitempty"`
}

// RoleDefinition is the data of the role-definition events: a local role definition of the reportee.
type RoleDefinition struct {
	RoleDefinitionID int    `json:"RoleDefinitionId"`
	ReporteeID       int64  `json:"-"`
	Name             string `json:"Name"`
}

// Builder makes the outbox events of changes, with sources under the service's public base URL.
type Builder struct{ base string }

// NewBuilder returns a builder whose sources start with publicURL (config.PublicURL).
func NewBuilder(publicURL string) Builder { return Builder{base: strings.TrimRight(publicURL, "/")} }

func subject(reportee int64) string { return "/party/" + identity.ReporteeID(reportee) }

func (b Builder) messageSource(m Message) string {
	return fmt.Sprintf("%s/api/%s/messages/%s", b.base, identity.ReporteeID(m.ReporteeID), m.MessageID)
}

func (b Builder) event(eventType, source string, reportee int64, data any) store.Event {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("events: the data of %s does not marshal: %v", eventType, err)) // fixed structs of plain fields
	}
	return store.Event{Type: eventType, Source: source, Subject: subject(reportee), Data: raw, ReporteeID: reportee,
		DataContentType: "application/json"}
}

func (b Builder) onMessage(e store.Event, m Message) store.Event {
	e.MessageID, e.Service = m.MessageID, store.ServiceKey{Code: m.ServiceCode, Edition: m.ServiceEdition}
	e.Archived = store.ArchivedStatus(m.Status)
	return e
}

// MessageEvent is the event eventType (a form-task, correspondence or message type) of message m as it
// is after the change.
func (b Builder) MessageEvent(eventType string, m Message) store.Event {
	data := struct {
		Message
		ReporteeID string `json:"ReporteeId"`
	}{m, identity.ReporteeID(m.ReporteeID)}
	return b.onMessage(b.event(eventType, b.messageSource(m), m.ReporteeID, data), m)
}

// partEvent is the event eventType of a part (forms, attachments, signatures) of message m, with data.
func (b Builder) partEvent(eventType string, m Message, part string, id int64, data any) store.Event {
	source := fmt.Sprintf("%s/%s/%d", b.messageSource(m), part, id)
	return b.onMessage(b.event(eventType, source, m.ReporteeID, data), m)
}

// SubmissionEvent is the SubmissionConfirmed event of the archived form task m: it is seen in the owner's
// feed and, by those who may read the archive, in the party's.
func (b Builder) SubmissionEvent(m Message) store.Event {
	return b.MessageEvent(SubmissionConfirmed, m)
}

// AttachmentEvent is the event eventType (FormTaskAttachmentAdded, …Deleted or …Replaced) of attachment a of
// form task a.Message.
func (b Builder) AttachmentEvent(eventType string, a Attachment) store.Event {
	return b.partEvent(eventType, a.Message, "attachments", a.AttachmentID, struct {
		Attachment
		ReporteeID string `json:"ReporteeId"`
	}{a, identity.ReporteeID(a.ReporteeID)})
}

// Signature is the data of FormTaskSigned and FormTaskSignatureVoided: who signed (their reportee id, never
// an identity number), on behalf of whom, in which step.
type Signature struct {
	Message
	SignatureID int64 `json:"SignatureId"`
	Step        int   `json:"Step"`
	Signer      int64 `json:"-"`
	OnBehalfOf  int64 `json:"-"`
}

// SignatureEvent is the event eventType (FormTaskSigned, FormTaskSignatureVoided) of signature s.
func (b Builder) SignatureEvent(eventType string, s Signature) store.Event {
	return b.partEvent(eventType, s.Message, "signatures", s.SignatureID, struct {
		Signature
		ReporteeID string `json:"ReporteeId"`
		Signer     string `json:"SignerReporteeId"`
		OnBehalfOf string `json:"OnBehalfOfReporteeId"`
	}{s, identity.ReporteeID(s.ReporteeID), identity.ReporteeID(s.Signer), identity.ReporteeID(s.OnBehalfOf)})
}

// Form is the data of FormTaskFormAdded, …Changed and …Deleted: a sub-form of a form task.
type Form struct {
	Message
	FormID int64 `json:"FormId"`
}

// FormEvent is the event eventType (FormTaskFormAdded, …Changed or …Deleted) of form f of form task
// f.Message.
func (b Builder) FormEvent(eventType string, f Form) store.Event {
	return b.partEvent(eventType, f.Message, "forms", f.FormID, struct {
		Form
		ReporteeID string `json:"ReporteeId"`
	}{f, identity.ReporteeID(f.ReporteeID)})
}

// Notification is the data of NotificationSent and NotificationFailed: a round of an order's notice about
// a message, on a channel (Email or Sms; none when no address was found), and why it failed.
type Notification struct {
	Message
	OrderID string `json:"NotificationOrderId"`
	Round   int    `json:"Round"`
	Channel string `json:"Channel,omitempty"`
	Reason  string `json:"Reason,omitempty"`
}

// NotificationEvent is the event eventType (NotificationSent or NotificationFailed) of n; its source is
// the order.
func (b Builder) NotificationEvent(eventType string, n Notification) store.Event {
	source := fmt.Sprintf("%s/api/serviceowner/notifications/%s", b.base, n.OrderID)
	data := struct {
		Notification
		ReporteeID string `json:"ReporteeId"`
	}{n, identity.ReporteeID(n.ReporteeID)}
	return b.onMessage(b.event(eventType, source, n.ReporteeID, data), n.Message)
}

// RoleEvent is the event eventType (RoleDelegated or RoleDeleted) of role r.
func (b Builder) RoleEvent(eventType string, r Role) store.Event {
	source := fmt.Sprintf("%s/api/%s/authorization/roles/%d", b.base, identity.ReporteeID(r.ReporteeID), r.RoleID)
	data := struct {
		Role
		ReporteeID string `json:"ReporteeId"`
		HolderID   string `json:"HolderId,omitempty"`
	}{Role: r, ReporteeID: identity.ReporteeID(r.ReporteeID)}
	if r.HolderPartyID != 0 {
		data.HolderID = identity.ReporteeID(r.HolderPartyID)
	}
	return b.event(eventType, source, r.ReporteeID, data)
}

// RoleDefinitionEvent is the event eventType (RoleDefinitionCreated, …Changed or …Deleted) of d.
func (b Builder) RoleDefinitionEvent(eventType string, d RoleDefinition) store.Event {
	source := fmt.Sprintf("%s/api/%s/authorization/roledefinitions/%d", b.base, identity.ReporteeID(d.ReporteeID), d.RoleDefinitionID)
	data := struct {
		RoleDefinition
		ReporteeID string `json:"ReporteeId"`
	}{d, identity.ReporteeID(d.ReporteeID)}
	return b.event(eventType, source, d.ReporteeID, data)
}
