package store

import (
	"context"
	"fmt"
)

// SingleRightRoleType is the role type of the role a single right is held as: it gives that right only.
const SingleRightRoleType = "SingleRight"

// SingleRightDefinition returns the definition of the role that gives only action r on its service edition,
// made the first time it is asked for (with its right, not delegatable further).
func (q *Queries) SingleRightDefinition(ctx context.Context, r RightSpec) (RoleDefinition, error) {
	d := RoleDefinition{RoleType: SingleRightRoleType, Code: fmt.Sprintf("RIGHT/%s/%d/%s", r.ServiceCode, r.ServiceEdition, r.Action),
		Name: fmt.Sprintf("Enkeltrettighet %s %s/%d", r.Action, r.ServiceCode, r.ServiceEdition)}
	d.Description = fmt.Sprintf("A single right delegated on its own: %s on service %s edition %d", r.Action, r.ServiceCode, r.ServiceEdition)
	err := q.db.QueryRow(ctx, `INSERT INTO role_definitions (role_type, role_definition_code, role_name, role_description)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (role_definition_code) WHERE role_type = '`+SingleRightRoleType+`' DO UPDATE SET role_name = EXCLUDED.role_name
		RETURNING id`, d.RoleType, d.Code, d.Name, d.Description).Scan(&d.ID)
	if err != nil {
		return d, err
	}
	_, err = q.db.Exec(ctx, `INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
		VALUES ($1, $2, $3, $4, false) ON CONFLICT DO NOTHING`, d.ID, r.ServiceCode, r.ServiceEdition, r.Action)
	return d, err
}
