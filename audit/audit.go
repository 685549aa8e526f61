// Package audit holds the shape of an audit log line, shared by the rooms that write one in the transaction
// of the change it records (access's delegations, the mailbox's and the form-task workflow's changes of a
// message). It imports nothing but time, so workflow code may carry an entry.
package audit

import "time"

// Entry is one line of the append-only authorization audit log: who did what, for whom, when and
// from which client.
type Entry struct {
	ID               int64
	At               time.Time
	ReporteeID       int64
	ActorName        string
	ActorPartyID     int64
	ActorLoginID     int64
	ActorMethod      string
	APIKeyName       string
	RequestID        string
	Action           string
	RoleID           int64
	RoleDefinitionID int
	RightID          int64
	RightHolder      string
	Summary          string
}
