package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// What one receiver of delegations holds for a reportee, as the reportee's access managers see and
// remove it; the roles and rights themselves are listed by ListHeldRoles and ListHeldRights.

// GrantingRole is a role a holder holds for a reportee whose definition grants a given right, with the
// number of rights the definition grants in all.
type GrantingRole struct {
	DelegatedRole
	Rights int
}

// RolesGranting lists, by RoleId, the roles holder holds for the reportee whose definitions grant right
// r (its service edition and action, whichever definition's RightID it has), each locked (SELECT … FOR
// UPDATE) for the rest of the transaction.
func (q *Queries) RolesGranting(ctx context.Context, holder Subject, reporteeID int64, r Right) ([]GrantingRole, error) {
	rows, err := q.db.Query(ctx, `SELECT `+delegatedRoleColumns+`,
			(SELECT count(*) FROM role_definition_rights a WHERE a.role_definition_id = ro.role_definition_id)`+delegatedRoleFrom+`
		WHERE `+heldBySubjectSQL+` AND EXISTS (SELECT 1 FROM role_definition_rights x WHERE x.role_definition_id = ro.role_definition_id
			AND x.service_code = $4 AND x.service_edition = $5 AND x.action = $6)
		ORDER BY ro.id FOR UPDATE OF ro`, reporteeID, holder.PartyID, holder.LoginID, r.ServiceCode, r.ServiceEdition, r.Action)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (GrantingRole, error) {
		var g GrantingRole
		var err error
		g.DelegatedRole, err = scanDelegatedRole(row, &g.Rights)
		return g, err
	})
}
