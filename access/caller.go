package access

import (
	"context"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Caller is who changes access for a reportee: the audit line's actor (ReporteeID the reportee, no
// action), the principal it logged in as, and its rights for the reportee.
type Caller struct {
	Actor     audit.Entry
	Principal identity.Principal
	Rights    identity.RightSet
	// Who is the reportee as the client named it, for details.
	Who string
}

// entry is the caller's audit line of action for the reportee, made now.
func (c Caller) entry(reporteeID int64, action string) audit.Entry {
	e := c.Actor
	e.At, e.ReporteeID, e.Action = clock.Now(), reporteeID, action
	return e
}

// Rights looks up effective rights, and forgets them once access has changed.
type Rights interface {
	For(ctx context.Context, p identity.Principal, reporteeID int64) (identity.RightSet, error)
	ForSubject(ctx context.Context, s store.Subject, reporteeID int64) (identity.RightSet, error)
	Invalidate()
}
