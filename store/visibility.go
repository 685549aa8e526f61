package store

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/postbox/postbox/formtask/taskstatus"
)

// Visibility says which of a reportee's messages a caller may see. A person acting for themself sees
// everything (All). Anyone else sees the messages of the services in Read, except archived ones
// (FormTask "Sendt og arkivert", Correspondence "Arkivert"), which need the service in ArchiveRead instead.
type Visibility struct {
	All         bool
	Read        []ServiceKey
	ArchiveRead []ServiceKey
	// grants are the arguments of GrantsSQL, made once by NewVisibility for a visibility that is kept
	// (the cached rights of a caller); nil when made as a literal, and then made per statement.
	grants []any
}

// NewVisibility is the visibility of the services in read and archiveRead, with the arguments of its
// statements made once: a caller's rights are cached and used by every request, and encoding a few hundred
// services per request was a tenth of the API's work for a list. read and archiveRead must not change after.
func NewVisibility(read, archiveRead []ServiceKey) Visibility {
	v := Visibility{Read: read, ArchiveRead: archiveRead}
	v.grants = v.grantArgs()
	return v
}

// Allows reports whether a message of service s in status is visible: the rule the list queries apply in
// SQL, for the handlers of a single message and its forms and attachments.
func (v Visibility) Allows(s ServiceKey, status string) bool {
	if v.All {
		return true
	}
	if ArchivedStatus(status) {
		return slices.Contains(v.ArchiveRead, s)
	}
	return slices.Contains(v.Read, s)
}

// ArchivedStatus reports whether status is an archived state; status names are unique across types.
func ArchivedStatus(status string) bool {
	return status == taskstatus.Archived || status == StatusCorrespondenceFiled
}

// ArchivedSQL is ArchivedStatus over messages m.
const ArchivedSQL = `m.status IN ('` + taskstatus.Archived + `', 'Arkivert')`

// VisibilitySQL is the condition of vis over messages m with its arguments, placeholders from $first.
// The grants travel as three parallel arrays of service and "archived" flag (one statement whatever their
// number), so both rules are one semi-join: with few grants PostgreSQL drives it through
// messages_mailbox_service, with many it filters the walk of messages_mailbox.
func VisibilitySQL(vis Visibility, first int) (string, []any) {
	return GrantsSQL(vis, "m.service_code, m.service_edition, "+ArchivedSQL, first)
}

// GrantsSQL is the condition of vis over a row whose service code, edition and archived flag are the
// expressions of tuple, with its arguments, placeholders from $first.
func GrantsSQL(vis Visibility, tuple string, first int) (string, []any) {
	if vis.All {
		return "TRUE", nil
	}
	args := vis.grants
	if args == nil {
		args = vis.grantArgs()
	}
	return fmt.Sprintf(`(%s) IN (SELECT * FROM unnest($%d::text[], $%d::int[], $%d::bool[]))`,
		tuple, first, first+1, first+2), args
}

// grantArgs are the three parallel arrays of GrantsSQL — service codes, editions, archived flags — in
// PostgreSQL's text form of an array, which pgx sends as it is: PostgreSQL reads it as fast as the binary
// form (measured: the same backend CPU per statement for 200 services), and the client does no work per
// element.
func (vis Visibility) grantArgs() []any {
	var codes, editions, archived []byte
	for _, b := range []*[]byte{&codes, &editions, &archived} {
		*b = append(*b, '{')
	}
	for _, g := range []struct {
		keys     []ServiceKey
		archived bool
	}{{vis.Read, false}, {vis.ArchiveRead, true}} {
		for _, k := range g.keys {
			if len(codes) > 1 {
				codes, editions, archived = append(codes, ','), append(editions, ','), append(archived, ',')
			}
			codes = appendArrayText(codes, k.Code)
			editions = strconv.AppendInt(editions, int64(int32(k.Edition)), 10)
			if g.archived {
				archived = append(archived, 't')
			} else {
				archived = append(archived, 'f')
			}
		}
	}
	return []any{string(append(codes, '}')), string(append(editions, '}')), string(append(archived, '}'))}
}

// appendArrayText appends s as an element of an array's text form: quoted, with '"' and '\\' escaped, so
// that no code reads as NULL, a delimiter or a brace.
func appendArrayText(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
