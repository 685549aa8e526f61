// Package submission is the agency's receiving room: the download queue of the archived form tasks of a
// service owner's services, their parts byte for byte as archived (form data, attachments, the print, the
// whole as one ZIP), the owner's confirmation that it has received one, and the log of every download and
// confirmation. An archive enters the queue in its own transaction (formtask.Store.ArchiveFormTask), so the queue
// holds every archive exactly once; this package only reads it and records confirmations.
package submission

import (
	"mime"
	"path"
	"strconv"
	"time"

	"github.com/postbox/postbox/formtask"
)

// Submission is an archived form task as the owner of its service receives it.
type Submission struct {
	ArchiveReference string
	MessageID        string
	Reportee         Reportee
	ServiceCode      string
	ServiceEdition   int
	ArchivedAt       time.Time
	// FilledBy last changed the content before it was sent; SignedBy signed and sent it.
	FilledBy    string
	SignedBy    string
	Forms       []Form
	Attachments []Attachment
	Print       Print
	// Signatures are every signature of a task signed by several, as its archive keeps them; none for a
	// task signed once (SignedBy).
	Signatures   []formtask.ArchivedSignature
	Confirmation *Confirmation // nil until the owner confirms it
	seq          int64         // the queue's keyset key: the reference's number
}

// Key is the submission's place in the queue, for continuing a list after it.
func (s Submission) Key() int64 { return s.seq }

// Reportee is the party the task was sent for. The owner of the service is entitled to its identity.
type Reportee struct {
	ID                   int64
	Name                 string
	OrganizationNumber   string // for an organization
	SocialSecurityNumber string // for a person
}

// Form is an archived form: its data is the XML as it was signed.
type Form struct {
	ID                int64
	Type              string // MainForm or SubForm
	DataFormatID      string
	DataFormatVersion int
	Name              string
	Size              int64
	SHA256            []byte
}

// Attachment is an archived attachment.
type Attachment struct {
	ID             int64
	Name           string
	FileName       string
	AttachmentType string
	FileSize       int64
	SHA256         []byte
}

// ContentType is the media type of the attachment by its file name, application/octet-stream when the
// name says none: the archive keeps no declared type.
func (a Attachment) ContentType() string {
	if t := mime.TypeByExtension(path.Ext(a.FileName)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Print is the PDF of the submission as archived.
type Print struct {
	Size   int64
	SHA256 []byte // of the PDF: names its blob
}

// Confirmation is the owner's receipt of a submission.
type Confirmation struct {
	At time.Time
	By string // the organization number of the owner that confirmed it
}

// Actor is the service owner's client making a download or a confirmation, as the log records it.
type Actor struct {
	ServiceOwner       string // the owner's code: whose queue is read
	OrganizationNumber string
	APIKeyName         string
	AuthMethod         string
	RequestID          string
}

// A part of a submission, as the log names it and a ZIP holds it.
const (
	PartZIP   = "submission.zip"
	PartPrint = "print.pdf"
)

// FormPart names form id's data.
func FormPart(id int64) string { return "forms/" + strconv.FormatInt(id, 10) + ".xml" }

// AttachmentPart names attachment id's bytes.
func AttachmentPart(id int64) string { return "attachments/" + strconv.FormatInt(id, 10) }

// LogEntry is one download or confirmation of a submission.
type LogEntry struct {
	ID                 int64
	At                 time.Time
	Action             string // Download or Confirm
	Part               string // for a download: a part name (FormPart, AttachmentPart, PartPrint, PartZIP)
	OrganizationNumber string
	APIKeyName         string
	AuthMethod         string
	RequestID          string
}
