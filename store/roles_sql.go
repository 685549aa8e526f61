package store

import "fmt"

// SQL fragments over the roles table that the identity reads share with the access room's.

// HeldBySubjectSQL holds for the roles ro a subject (party $2 or login $3) holds for the reportee $1.
const HeldBySubjectSQL = `ro.reportee_id = $1 AND (ro.holder_party_id = $2 OR ro.holder_login_id = $3)`

// GrantsServiceSQL is the condition that the role definition in column definition grants a right on the
// service whose code is argument $codeArg and whose edition (0 for any) is the argument after it.
func GrantsServiceSQL(definition string, codeArg int) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM role_definition_rights rr WHERE rr.role_definition_id = %s
		AND rr.service_code = $%d AND ($%d = 0 OR rr.service_edition = $%[3]d))`, definition, codeArg, codeArg+1)
}
