// Package taskstatus names the statuses of a form task as the interface shows them. It imports nothing, so the
// workflow, the activities, the read model and the API share one spelling.
package taskstatus

// Form-task statuses of the interface, in the order a task moves through them.
const (
	Filling  = "Utfylling"
	Signing  = "Signering"
	Archived = "Sendt og arkivert"
)
