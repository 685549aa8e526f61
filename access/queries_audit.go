package access

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// The audit log of access changes: written in the transaction of each change, read newest first.

// The actions the audit log records.
const (
	AuditDelegateRole         = "DelegateRole"
	AuditDelegateRight        = "DelegateRight" // a single right, held as a role that gives only it
	AuditDeleteRole           = "DeleteRole"
	AuditDeleteRight          = "DeleteRight"
	AuditCreateRoleDefinition = "CreateRoleDefinition"
	AuditUpdateRoleDefinition = "UpdateRoleDefinition"
	AuditDeleteRoleDefinition = "DeleteRoleDefinition"
)

// AppendAudit writes an entry; call it in the transaction of the change it records.
func (q Store) AppendAudit(ctx context.Context, e audit.Entry) error {
	_, err := q.DB().Exec(ctx, `INSERT INTO authorization_audit (occurred_at, reportee_id, actor_name, actor_party_id, actor_login_id,
			actor_method, api_key_name, request_id, action, role_id, role_definition_id, right_id, right_holder, summary)
		VALUES ($1, $2, $3, NULLIF($4, 0::bigint), NULLIF($5, 0::bigint), $6, $7, $8, $9, NULLIF($10, 0::bigint),
			NULLIF($11, 0::integer), NULLIF($12, 0::bigint), NULLIF($13, ''), $14)`,
		e.At, e.ReporteeID, e.ActorName, e.ActorPartyID, e.ActorLoginID, e.ActorMethod, e.APIKeyName, e.RequestID, e.Action,
		e.RoleID, e.RoleDefinitionID, e.RightID, e.RightHolder, e.Summary)
	return err
}

// AuditFields are the fields of an audit entry that clients can filter and order on.
var AuditFields = odatasql.Fields{
	"AuditEntryId":     {Column: "a.id", Kind: odatasql.Int},
	"Time":             {Column: "a.occurred_at", Kind: odatasql.DateTime},
	"Action":           {Column: "a.action", Kind: odatasql.String},
	"Actor":            {Column: "a.actor_name", Kind: odatasql.String},
	"Authentication":   {Column: "a.actor_method", Kind: odatasql.String},
	"ApiKey":           {Column: "a.api_key_name", Kind: odatasql.String},
	"RoleId":           {Column: "a.role_id", Kind: odatasql.Int},
	"RoleDefinitionId": {Column: "a.role_definition_id", Kind: odatasql.Int},
	"RightID":          {Column: "a.right_id", Kind: odatasql.Int},
	"RightHolder":      {Column: "a.right_holder", Kind: odatasql.String},
}

// ListAudit lists the audit entries of a reportee, newest first.
func (q Store) ListAudit(ctx context.Context, reporteeID int64, lq store.ListQuery) ([]audit.Entry, bool, error) {
	where, tail, args, err := store.ListClauses(lq, AuditFields, store.ListOrder{ByDefault: "a.occurred_at DESC, a.id DESC", TieBreaker: "a.id DESC"}, 2)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q.Queries, `SELECT a.id, a.occurred_at, a.reportee_id, a.actor_name, COALESCE(a.actor_party_id, 0),
			COALESCE(a.actor_login_id, 0), a.actor_method, a.api_key_name, a.request_id, a.action, COALESCE(a.role_id, 0),
			COALESCE(a.role_definition_id, 0), COALESCE(a.right_id, 0), COALESCE(a.right_holder, ''), a.summary
		FROM authorization_audit a WHERE a.reportee_id = $1 AND `+where+tail, append([]any{reporteeID}, args...), lq.Limit, pgx.RowToStructByPos[audit.Entry])
}
