package mailbox

import (
	"cmp"
	"context"
	"slices"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Mailbox is one reportee's part of the messagebox overview: the messages the caller may see there,
// counted by type and status with unread correspondence first.
type Mailbox struct {
	Party                identity.Party
	Counts               []MessageCount
	UnreadCorrespondence int
}

// Messagebox is the overview of the mailboxes of everyone p represents, a page of them as lq asks, with
// whether more follow: every reportee's counts as p's rights there show them, in one statement.
func (l *Lists) Messagebox(ctx context.Context, p identity.Principal, rights *identity.Rights, lq store.ListQuery) ([]Mailbox, bool, error) {
	parties, more, err := identity.NewStore(l.q).ListReportees(ctx, p.Subject(), p.Self(), store.ServiceFilter{}, lq)
	if err != nil {
		return nil, false, err
	}
	vis := make(map[int64]store.Visibility, len(parties))
	for _, party := range parties {
		r, err := rights.For(ctx, p, party.ID)
		if err != nil {
			return nil, false, err
		}
		vis[party.ID] = r.Visibility()
	}
	counts, err := l.Count(ctx, vis)
	if err != nil {
		return nil, false, err
	}
	byReportee := map[int64][]MessageCount{}
	for _, n := range counts {
		byReportee[n.ReporteeID] = append(byReportee[n.ReporteeID], n)
	}
	boxes := make([]Mailbox, len(parties))
	for i, party := range parties {
		box := Mailbox{Party: party, Counts: byReportee[party.ID]}
		slices.SortStableFunc(box.Counts, func(a, b MessageCount) int { return cmp.Compare(unread(b), unread(a)) })
		for _, n := range box.Counts {
			box.UnreadCorrespondence += n.Count * unread(n)
		}
		boxes[i] = box
	}
	return boxes, more, nil
}

// unread is 1 for the count of unread correspondence, 0 for any other.
func unread(n MessageCount) int {
	if n.Type == store.TypeCorrespondence && n.Status == store.StatusUnread {
		return 1
	}
	return 0
}
