package access

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// What a holder holds for a reportee: its roles and the rights they give. The user-facing area shows the
// logged-in subject its own; the service-owner area shows anyone's, narrowed to the owner's services.

// Holding names whose roles and rights to list: those Holder holds for the reportee through delegated
// roles and, with Self, through the automatic base role (main administrator) of a party acting for
// itself. Owner, when set, narrows them to what concerns a service owner's services: the roles whose
// definitions grant at least one right on them, and the rights on them.
type Holding struct {
	Holder     store.Subject
	ReporteeID int64
	Self       bool
	Owner      string
}

func (h Holding) args() []any { return []any{h.ReporteeID, h.Holder.PartyID, h.Holder.LoginID, h.Self} }

// baseRoleSQL selects the main administrator's definition id: the automatic base role of a party acting for itself.
const baseRoleSQL = `(SELECT id FROM role_definitions WHERE role_definition_code = '` + identity.MainAdministratorCode + `'
	AND owner_party_id IS NULL ORDER BY id LIMIT 1)`

// actionOrder sorts rights (as x) by action in the order the interface lists them.
const actionOrder = `array_position(ARRAY['Read', 'Write', 'Delete', 'Sign', 'ArchiveRead', 'ArchiveDelete'], x.action)`

// HeldRole is a role held for a reportee. RoleID is 0 for the automatic base role of a party acting for
// itself, which no delegation made; it has no Delegator and no DelegatedTime either.
type HeldRole struct {
	RoleID             int64
	RoleDefinitionID   int
	RoleType           string
	RoleDefinitionCode string
	RoleName           string
	RoleDescription    string
	Delegator          string
	DelegatedTime      *time.Time
}

// heldRoleFields are the fields of a held role that service owners can filter and order on.
var heldRoleFields = odatasql.Fields{
	"RoleId":             {Column: "x.role_id", Kind: odatasql.Int},
	"RoleType":           {Column: "x.role_type", Kind: odatasql.String},
	"RoleDefinitionId":   {Column: "x.role_definition_id", Kind: odatasql.Int},
	"RoleDefinitionCode": {Column: "x.code", Kind: odatasql.String},
	"RoleName":           {Column: "x.role_name", Kind: odatasql.String},
	"RoleDescription":    {Column: "x.role_description", Kind: odatasql.String},
	"Delegator":          {Column: "x.delegator", Kind: odatasql.String},
	"DelegatedTime":      {Column: "x.delegated_time", Kind: odatasql.DateTime},
}

// userRoleFields are those the user-facing area offers: its interface gives the base role a null RoleId
// and does not name the RoleDefinitionCode.
var userRoleFields = func() odatasql.Fields {
	f := odatasql.Fields{"RoleId": {Column: "NULLIF(x.role_id, 0)", Kind: odatasql.Int}}
	for name, field := range heldRoleFields {
		if name != "RoleId" && name != "RoleDefinitionCode" {
			f[name] = field
		}
	}
	return f
}()

// ListHeldRoles lists the roles of h by RoleID, the base role first. A page starts after the RoleID after:
// -1 starts at the beginning.
func (q Store) ListHeldRoles(ctx context.Context, h Holding, lq store.ListQuery, after int64) ([]HeldRole, bool, error) {
	args, fields, owner := h.args(), userRoleFields, ""
	if h.Owner != "" {
		args, fields = append(args, h.Owner), heldRoleFields
		owner = fmt.Sprintf(` AND EXISTS (SELECT 1 FROM role_definition_rights rr
			JOIN services s ON s.service_code = rr.service_code AND s.service_edition = rr.service_edition
			WHERE rr.role_definition_id = x.role_definition_id AND s.service_owner_code = $%d)`, len(args))
	}
	where, tail, more, err := store.ListClauses(lq, fields, store.Keyset("x.role_id", after), len(args)+1)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q.Queries, `SELECT x.role_id, x.role_definition_id, x.role_type, x.code, x.role_name, x.role_description,
			COALESCE(x.delegator, ''), x.delegated_time
		FROM (
			SELECT 0::bigint AS role_id, d.id AS role_definition_id, d.role_type, COALESCE(d.role_definition_code, '') AS code,
				d.role_name, d.role_description, NULL::text AS delegator, NULL::timestamp AS delegated_time
			FROM role_definitions d WHERE $4 AND d.id = `+baseRoleSQL+`
			UNION ALL
			SELECT ro.id, d.id, d.role_type, COALESCE(d.role_definition_code, ''), d.role_name, d.role_description, ro.delegator, ro.delegated_time
			FROM roles ro JOIN role_definitions d ON d.id = ro.role_definition_id
			WHERE `+store.HeldBySubjectSQL+`
		) x WHERE `+where+owner+tail, append(args, more...), lq.Limit, pgx.RowToStructByPos[HeldRole])
}

// Right is a right on a service: as a role definition grants it, or as a holder has it through its roles.
type Right struct {
	RightID        int64
	ServiceCode    string
	ServiceEdition int
	Action         string
	IsDelegatable  bool
}

// rightColumns are the columns of a Right of role_definition_rights x.
const rightColumns = `x.id, x.service_code, x.service_edition, x.action, x.is_delegatable`

// rightFields are the fields of a held right that clients can filter and order on.
var rightFields = odatasql.Fields{
	"RightID":            {Column: "x.right_id", Kind: odatasql.Int},
	"ServiceCode":        {Column: "x.service_code", Kind: odatasql.String},
	"ServiceEditionCode": {Column: "x.service_edition", Kind: odatasql.Int},
	"Action":             {Column: "x.action", Kind: odatasql.String},
	"IsDelegatable":      {Column: "x.is_delegatable", Kind: odatasql.Bool},
}

// ListHeldRights lists the rights of h by service edition and action, one entry for each: the lowest
// RightID of the definitions that grant it, delegatable when any of them lets it be delegated.
func (q Store) ListHeldRights(ctx context.Context, h Holding, lq store.ListQuery) ([]Right, bool, error) {
	args, owner := h.args(), ""
	if h.Owner != "" {
		args = append(args, h.Owner)
		owner = fmt.Sprintf(` AND EXISTS (SELECT 1 FROM services s WHERE s.service_code = r.service_code
			AND s.service_edition = r.service_edition AND s.service_owner_code = $%d)`, len(args))
	}
	where, tail, more, err := store.ListClauses(lq, rightFields,
		store.ListOrder{ByDefault: "x.service_code, x.service_edition, " + actionOrder, TieBreaker: "x.right_id"}, len(args)+1)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q.Queries, `SELECT x.right_id, x.service_code, x.service_edition, x.action, x.is_delegatable FROM (
			SELECT min(r.id) AS right_id, r.service_code, r.service_edition, r.action, bool_or(r.is_delegatable) AS is_delegatable
			FROM role_definition_rights r
			WHERE r.role_definition_id IN (
				SELECT ro.role_definition_id FROM roles ro WHERE `+store.HeldBySubjectSQL+`
				UNION SELECT `+baseRoleSQL+` WHERE $4)`+owner+`
			GROUP BY r.service_code, r.service_edition, r.action
		) x WHERE `+where+tail, append(args, more...), lq.Limit, pgx.RowToStructByPos[Right])
}

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
func (q Store) RolesGranting(ctx context.Context, holder store.Subject, reporteeID int64, r Right) ([]GrantingRole, error) {
	rows, err := q.DB().Query(ctx, `SELECT `+delegatedRoleColumns+`,
			(SELECT count(*) FROM role_definition_rights a WHERE a.role_definition_id = ro.role_definition_id)`+delegatedRoleFrom+`
		WHERE `+store.HeldBySubjectSQL+` AND EXISTS (SELECT 1 FROM role_definition_rights x WHERE x.role_definition_id = ro.role_definition_id
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
