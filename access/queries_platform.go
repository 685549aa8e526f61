package access

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// The platform's role definitions as the open metadata (what a service requires) and the service-owner
// area list them; the local roles reportees made are their own and are not listed here.

// RoleRequirements lists, by id, the platform role definitions that grant a right on the service edition,
// each with the rights it grants on it. Local roles are their reportees' own and are not shown.
func (q Store) RoleRequirements(ctx context.Context, service store.ServiceKey, lq store.ListQuery) ([]RoleDefinition, bool, error) {
	where, tail, args, err := store.ListClauses(lq, RoleDefinitionFields, store.ListOrder{ByDefault: "d.id", TieBreaker: "d.id"}, 3)
	if err != nil {
		return nil, false, err
	}
	defs, more, err := store.QueryPage(ctx, q.Queries, `SELECT `+roleDefinitionColumns+` FROM role_definitions d
		WHERE d.owner_party_id IS NULL AND d.role_type <> '`+SingleRightRoleType+`' AND EXISTS (SELECT 1 FROM role_definition_rights x WHERE x.role_definition_id = d.id
			AND x.service_code = $1 AND x.service_edition = $2) AND `+where+tail,
		append([]any{service.Code, service.Edition}, args...), lq.Limit, func(r pgx.CollectableRow) (RoleDefinition, error) { return scanRoleDefinition(r) })
	if err != nil || len(defs) == 0 {
		return defs, more, err
	}
	ids := make([]int32, len(defs))
	at := make(map[int]int, len(defs))
	for i, d := range defs {
		ids[i], at[d.ID] = int32(d.ID), i
	}
	rows, err := q.DB().Query(ctx, `SELECT x.role_definition_id, `+rightColumns+` FROM role_definition_rights x
		WHERE x.role_definition_id = ANY($1) AND x.service_code = $2 AND x.service_edition = $3
		ORDER BY x.role_definition_id, `+actionOrder, ids, service.Code, service.Edition)
	if err != nil {
		return nil, false, err
	}
	var (
		id int
		r  Right
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &r.RightID, &r.ServiceCode, &r.ServiceEdition, &r.Action, &r.IsDelegatable}, func() error {
		defs[at[id]].Rights = append(defs[at[id]].Rights, r)
		return nil
	})
	return defs, more, err
}

// RoleDefinitionFields are the fields of a role definition that clients can filter and order on.
var RoleDefinitionFields = odatasql.Fields{
	"RoleType":           {Column: "d.role_type", Kind: odatasql.String},
	"RoleDefinitionId":   {Column: "d.id", Kind: odatasql.Int},
	"RoleDefinitionCode": {Column: "d.role_definition_code", Kind: odatasql.String},
	"RoleName":           {Column: "d.role_name", Kind: odatasql.String},
	"RoleDescription":    {Column: "d.role_description", Kind: odatasql.String},
}

// ListRoleDefinitions lists the platform's role definitions (not the local roles reportees made), by id.
func (q Store) ListRoleDefinitions(ctx context.Context, lq store.ListQuery, after int64) ([]RoleDefinition, bool, error) {
	where, tail, args, err := store.ListClauses(lq, RoleDefinitionFields, store.Keyset("d.id", after), 1)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q.Queries, `SELECT `+roleDefinitionColumns+` FROM role_definitions d
		WHERE d.owner_party_id IS NULL AND d.role_type <> '`+SingleRightRoleType+`' AND `+where+tail, args, lq.Limit, func(r pgx.CollectableRow) (RoleDefinition, error) { return scanRoleDefinition(r) })
}
