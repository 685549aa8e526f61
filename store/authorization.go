package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/store/odatasql"
)

// The user-facing authorization area: the roles and rights a subject holds for a reportee, delegations,
// local role definitions, and the audit log of every change to them.

// LocalRoleType is the RoleType of role definitions a reportee made for itself.
const LocalRoleType = "Local"

// MainAdministratorCode is the role definition code of the main administrator, the automatic base role of
// a party acting for itself.
const MainAdministratorCode = "HADM"

// Errors of authorization changes; the api maps them to 409.
var (
	ErrRoleHeld      = errors.New("the right holder already holds this role for the reportee")
	ErrRoleNameTaken = errors.New("the reportee already has a local role with this name")
)

// RoleDefinition is a role definition. OwnerPartyID is set for local roles, the ones a reportee made.
type RoleDefinition struct {
	ID           int
	RoleType     string
	Code         string
	Name         string
	Description  string
	OwnerPartyID int64
	Rights       []Right // only from GetRoleDefinition
}

// Local tells whether the definition is a local role of a reportee.
func (d RoleDefinition) Local() bool { return d.OwnerPartyID != 0 }

const roleDefinitionColumns = `d.id, d.role_type, COALESCE(d.role_definition_code, ''), d.role_name, d.role_description, COALESCE(d.owner_party_id, 0)`

func scanRoleDefinition(row pgx.Row) (RoleDefinition, error) {
	var d RoleDefinition
	err := row.Scan(&d.ID, &d.RoleType, &d.Code, &d.Name, &d.Description, &d.OwnerPartyID)
	return d, err
}

// ListReporteeRoleDefinitions lists the platform roles of type Altinn and the local roles of the reportee, by id.
func (q *Queries) ListReporteeRoleDefinitions(ctx context.Context, reporteeID int64) ([]RoleDefinition, error) {
	rows, err := q.db.Query(ctx, `SELECT `+roleDefinitionColumns+` FROM role_definitions d
		WHERE (d.owner_party_id IS NULL AND d.role_type = 'Altinn') OR d.owner_party_id = $1
		ORDER BY d.owner_party_id NULLS FIRST, d.id`, reporteeID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RoleDefinition, error) { return scanRoleDefinition(r) })
}

// GetRoleDefinition returns a role definition by id, or a platform one by code when code is not "", with
// its rights. Without an owner it returns any definition with all its rights: callers decide who may see
// local ones. With a service owner's code it returns only the rights on the owner's services, and a local
// role only when it has such a right: the owner may see it held, so it may look it up.
func (q *Queries) GetRoleDefinition(ctx context.Context, id int, code, owner string) (RoleDefinition, error) {
	sql, key := `SELECT `+roleDefinitionColumns+` FROM role_definitions d WHERE d.id = $1`, any(id)
	if code != "" {
		sql, key = `SELECT `+roleDefinitionColumns+` FROM role_definitions d WHERE d.role_definition_code = $1
			AND d.owner_party_id IS NULL ORDER BY d.id LIMIT 1`, code
	}
	d, err := scanRoleDefinition(q.db.QueryRow(ctx, sql, key))
	if err != nil {
		return d, NotFound(err)
	}
	args, onOwnerServices := []any{d.ID}, ""
	if owner != "" {
		args, onOwnerServices = append(args, owner), ` AND EXISTS (SELECT 1 FROM services s WHERE s.service_code = x.service_code
			AND s.service_edition = x.service_edition AND s.service_owner_code = $2)`
	}
	rows, err := q.db.Query(ctx, `SELECT `+rightColumns+`
		FROM role_definition_rights x WHERE x.role_definition_id = $1`+onOwnerServices+`
		ORDER BY x.service_code, x.service_edition, `+actionOrder, args...)
	if err != nil {
		return d, err
	}
	if d.Rights, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Right]); err != nil {
		return d, err
	}
	if owner != "" && d.Local() && len(d.Rights) == 0 {
		return RoleDefinition{}, ErrNotFound
	}
	return d, nil
}

// LockRoleDefinition reads a role definition locked for the rest of the transaction (SELECT … FOR
// UPDATE), so that a change can be checked against it as it is.
func (q *Queries) LockRoleDefinition(ctx context.Context, id int) (RoleDefinition, error) {
	var locked int
	if err := q.db.QueryRow(ctx, `SELECT id FROM role_definitions WHERE id = $1 FOR UPDATE`, id).Scan(&locked); err != nil {
		return RoleDefinition{}, NotFound(err)
	}
	return q.GetRoleDefinition(ctx, id, "", "")
}

// RightSpec is a right of a local role being written: a service edition and a stored action name.
type RightSpec struct {
	ServiceCode    string
	ServiceEdition int
	Action         string
}

// UnknownServices returns the service editions among keys that do not exist.
func (q *Queries) UnknownServices(ctx context.Context, keys []ServiceKey) ([]ServiceKey, error) {
	codes := make([]string, len(keys))
	editions := make([]int32, len(keys))
	for i, k := range keys {
		codes[i], editions[i] = k.Code, int32(k.Edition)
	}
	rows, err := q.db.Query(ctx, `SELECT DISTINCT k.code, k.edition, k.ord FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS k (code, edition, ord)
		WHERE NOT EXISTS (SELECT 1 FROM services s WHERE s.service_code = k.code AND s.service_edition = k.edition)
		ORDER BY k.ord`, codes, editions)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ServiceKey, error) {
		var k ServiceKey
		var ord int64
		err := r.Scan(&k.Code, &k.Edition, &ord)
		return k, err
	})
}

// CreateLocalRole stores a new local role of the owner with its rights and returns its id. Run it in a
// transaction with its audit entry.
func (q *Queries) CreateLocalRole(ctx context.Context, ownerID int64, name, description string, rights []RightSpec) (int, error) {
	var id int
	err := q.db.QueryRow(ctx, `INSERT INTO role_definitions (role_type, role_name, role_description, owner_party_id)
		VALUES ($1, $2, $3, $4) RETURNING id`, LocalRoleType, name, description, ownerID).Scan(&id)
	if err != nil {
		return 0, roleNameTaken(err)
	}
	return id, q.insertRights(ctx, id, rights)
}

// UpdateLocalRole replaces the name, description and rights of a local role; rights that stay keep their
// RightID. Run it in a transaction with its audit entry.
func (q *Queries) UpdateLocalRole(ctx context.Context, id int, name, description string, rights []RightSpec) error {
	tag, err := q.db.Exec(ctx, `UPDATE role_definitions SET role_name = $2, role_description = $3
		WHERE id = $1 AND owner_party_id IS NOT NULL`, id, name, description)
	if err != nil {
		return roleNameTaken(err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	codes, editions, actions := rightArrays(rights)
	if _, err := q.db.Exec(ctx, `DELETE FROM role_definition_rights r WHERE r.role_definition_id = $1
		AND (r.service_code, r.service_edition, r.action) NOT IN (SELECT * FROM unnest($2::text[], $3::int[], $4::text[]))`,
		id, codes, editions, actions); err != nil {
		return err
	}
	return q.insertRights(ctx, id, rights)
}

func (q *Queries) insertRights(ctx context.Context, id int, rights []RightSpec) error {
	codes, editions, actions := rightArrays(rights)
	_, err := q.db.Exec(ctx, `INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
		SELECT $1, k.code, k.edition, k.action, true FROM unnest($2::text[], $3::int[], $4::text[]) AS k (code, edition, action)
		ON CONFLICT (role_definition_id, service_code, service_edition, action) DO NOTHING`, id, codes, editions, actions)
	return err
}

func rightArrays(rights []RightSpec) (codes []string, editions []int32, actions []string) {
	codes, editions, actions = make([]string, len(rights)), make([]int32, len(rights)), make([]string, len(rights))
	for i, r := range rights {
		codes[i], editions[i], actions[i] = r.ServiceCode, int32(r.ServiceEdition), r.Action
	}
	return codes, editions, actions
}

func roleNameTaken(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" && pg.ConstraintName == "role_definitions_local_name" {
		return ErrRoleNameTaken
	}
	return err
}

// DeleteLocalRole deletes a local role with its rights and every delegation of it, and returns the
// deleted delegations. Run it in a transaction with its audit entry.
func (q *Queries) DeleteLocalRole(ctx context.Context, id int) ([]DelegatedRole, error) {
	rows, err := q.db.Query(ctx, delegatedRoleSelect+` WHERE ro.role_definition_id = $1 ORDER BY ro.id FOR UPDATE OF ro`, id)
	if err != nil {
		return nil, err
	}
	held, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DelegatedRole, error) { return scanDelegatedRole(r) })
	if err != nil {
		return nil, err
	}
	if _, err := q.db.Exec(ctx, `DELETE FROM roles WHERE role_definition_id = $1`, id); err != nil {
		return nil, err
	}
	tag, err := q.db.Exec(ctx, `DELETE FROM role_definitions WHERE id = $1 AND owner_party_id IS NOT NULL`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	return held, err
}

// DefinedRight is one right of a role definition, with the definition it belongs to.
type DefinedRight struct {
	Right
	RoleDefinitionID int
	RoleName         string
	OwnerPartyID     int64 // of a local role; 0 for platform roles
}

// GetDefinedRight returns a right of a role definition by RightID.
func (q *Queries) GetDefinedRight(ctx context.Context, id int64) (DefinedRight, error) {
	var r DefinedRight
	err := q.db.QueryRow(ctx, `SELECT `+rightColumns+`, d.id, d.role_name,
			COALESCE(d.owner_party_id, 0)
		FROM role_definition_rights x JOIN role_definitions d ON d.id = x.role_definition_id WHERE x.id = $1`, id).
		Scan(&r.RightID, &r.ServiceCode, &r.ServiceEdition, &r.Action, &r.IsDelegatable, &r.RoleDefinitionID, &r.RoleName, &r.OwnerPartyID)
	return r, NotFound(err)
}

// DeleteLocalRight removes a right from a local role. Run it in a transaction with its audit entry.
func (q *Queries) DeleteLocalRight(ctx context.Context, id int64) error {
	tag, err := q.db.Exec(ctx, `DELETE FROM role_definition_rights r USING role_definitions d
		WHERE r.id = $1 AND d.id = r.role_definition_id AND d.owner_party_id IS NOT NULL`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	return err
}

// HoldsRoleDefinition tells whether s holds a role of the definition for the reportee.
func (q *Queries) HoldsRoleDefinition(ctx context.Context, s Subject, reporteeID int64, definitionID int) (bool, error) {
	var ok bool
	err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM roles WHERE reportee_id = $1 AND role_definition_id = $4
		AND (holder_party_id = $2 OR holder_login_id = $3))`, reporteeID, s.PartyID, s.LoginID, definitionID).Scan(&ok)
	return ok, err
}

// MissingDelegatableRights lists the rights of a definition that s does not hold, as a delegatable right,
// for the reportee through its own roles: what stands in the way of s delegating the role.
func (q *Queries) MissingDelegatableRights(ctx context.Context, s Subject, reporteeID int64, definitionID int) ([]Right, error) {
	rows, err := q.db.Query(ctx, `SELECT `+rightColumns+`
		FROM role_definition_rights x WHERE x.role_definition_id = $4 AND NOT EXISTS (
			SELECT 1 FROM roles ro JOIN role_definition_rights h ON h.role_definition_id = ro.role_definition_id
			WHERE `+heldBySubjectSQL+`
			AND h.service_code = x.service_code AND h.service_edition = x.service_edition AND h.action = x.action AND h.is_delegatable)
		ORDER BY x.service_code, x.service_edition, `+actionOrder, reporteeID, s.PartyID, s.LoginID, definitionID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Right])
}

// DelegatedRole is a role held by someone for a reportee, with its holder. A delegation always has a
// Delegator and a DelegatedTime.
type DelegatedRole struct {
	HeldRole
	ReporteeID    int64
	HolderPartyID int64
	HolderLoginID int64
	// The holder: Person, Organization or EnterpriseUser; its name; the organization number of an
	// organization or of an enterprise user's organization; the enterprise user's user name.
	HolderType               string
	HolderName               string
	HolderOrganizationNumber string
	HolderUserName           string
}

const delegatedRoleColumns = `ro.id, ro.reportee_id, COALESCE(ro.holder_party_id, 0), COALESCE(ro.holder_login_id, 0), d.id, d.role_type,
	COALESCE(d.role_definition_code, ''), d.role_name, d.role_description, ro.delegator, ro.delegated_time,
	CASE WHEN ro.holder_login_id IS NOT NULL THEN 'EnterpriseUser' ELSE hp.kind END,
	COALESCE(hp.name, hl.user_name), COALESCE(hp.organization_number, lo.organization_number, ''), COALESCE(hl.user_name, '')`

const delegatedRoleFrom = ` FROM roles ro JOIN role_definitions d ON d.id = ro.role_definition_id
	LEFT JOIN parties hp ON hp.id = ro.holder_party_id
	LEFT JOIN logins hl ON hl.id = ro.holder_login_id
	LEFT JOIN parties lo ON lo.id = hl.organization_id`

const delegatedRoleSelect = `SELECT ` + delegatedRoleColumns + delegatedRoleFrom

// scanDelegatedRole scans the delegatedRoleColumns of a row, and the columns after them into extra.
func scanDelegatedRole(row pgx.Row, extra ...any) (DelegatedRole, error) {
	var r DelegatedRole
	err := row.Scan(append([]any{&r.RoleID, &r.ReporteeID, &r.HolderPartyID, &r.HolderLoginID, &r.RoleDefinitionID, &r.RoleType,
		&r.RoleDefinitionCode, &r.RoleName, &r.RoleDescription, &r.Delegator, &r.DelegatedTime,
		&r.HolderType, &r.HolderName, &r.HolderOrganizationNumber, &r.HolderUserName}, extra...)...)
	return r, err
}

// GetDelegatedRole returns a role by RoleId.
func (q *Queries) GetDelegatedRole(ctx context.Context, id int64) (DelegatedRole, error) {
	r, err := scanDelegatedRole(q.db.QueryRow(ctx, delegatedRoleSelect+` WHERE ro.id = $1`, id))
	return r, NotFound(err)
}

// DeleteDelegatedRole deletes a role by RoleId. Run it in a transaction with its audit entry.
func (q *Queries) DeleteDelegatedRole(ctx context.Context, id int64) error {
	tag, err := q.db.Exec(ctx, `DELETE FROM roles WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	return err
}

// NewRole is a delegation: a role of a definition given to a holder (a party, or an enterprise user's login)
// for a reportee.
type NewRole struct {
	HolderPartyID    int64
	HolderLoginID    int64
	ReporteeID       int64
	RoleDefinitionID int
	Delegator        string
	DelegatedTime    time.Time
}

// InsertRole stores a delegation and returns its RoleId; ErrRoleHeld when the holder already holds the role.
func (q *Queries) InsertRole(ctx context.Context, r NewRole) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO roles (holder_party_id, holder_login_id, reportee_id, role_definition_id, delegator, delegated_time)
		VALUES (NULLIF($1, 0::bigint), NULLIF($2, 0::bigint), $3, $4, $5, $6) RETURNING id`,
		r.HolderPartyID, r.HolderLoginID, r.ReporteeID, r.RoleDefinitionID, r.Delegator, r.DelegatedTime).Scan(&id)
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" && strings.HasPrefix(pg.ConstraintName, "roles_") {
		return 0, ErrRoleHeld
	}
	return id, err
}

// DelegationFields are the fields of a delegation that clients can filter and order on.
var DelegationFields = odatasql.Fields{
	"RoleId":                        {Column: "ro.id", Kind: odatasql.Int},
	"RoleType":                      {Column: "d.role_type", Kind: odatasql.String},
	"RoleDefinitionId":              {Column: "d.id", Kind: odatasql.Int},
	"RoleName":                      {Column: "d.role_name", Kind: odatasql.String},
	"Delegator":                     {Column: "ro.delegator", Kind: odatasql.String},
	"DelegatedTime":                 {Column: "ro.delegated_time", Kind: odatasql.DateTime},
	"RightHolderType":               {Column: "CASE WHEN ro.holder_login_id IS NOT NULL THEN 'EnterpriseUser' ELSE hp.kind END", Kind: odatasql.String},
	"RightHolderName":               {Column: "COALESCE(hp.name, hl.user_name)", Kind: odatasql.String},
	"RightHolderOrganizationNumber": {Column: "COALESCE(hp.organization_number, lo.organization_number)", Kind: odatasql.String},
	"RightHolderUserName":           {Column: "hl.user_name", Kind: odatasql.String},
}

// DelegationFilter narrows the delegations of a reportee to roles that grant a right on a service and to
// one receiver (a party, by id); the zero value narrows nothing.
type DelegationFilter struct {
	Service         ServiceFilter
	ReceiverPartyID int64
}

// ListDelegations lists every role held by anyone for the reportee, newest first.
func (q *Queries) ListDelegations(ctx context.Context, reporteeID int64, f DelegationFilter, lq ListQuery) ([]DelegatedRole, bool, error) {
	args := []any{reporteeID}
	cond := ""
	if f.Service.Code != "" {
		args = append(args, f.Service.Code, f.Service.Edition)
		cond += " AND " + grantsServiceSQL("ro.role_definition_id", len(args)-1)
	}
	if f.ReceiverPartyID != 0 {
		args = append(args, f.ReceiverPartyID)
		cond += fmt.Sprintf(" AND ro.holder_party_id = $%d", len(args))
	}
	where, tail, more, err := ListClauses(lq, DelegationFields, ListOrder{ByDefault: "ro.delegated_time DESC, ro.id DESC", TieBreaker: "ro.id"}, len(args)+1)
	if err != nil {
		return nil, false, err
	}
	return QueryPage(ctx, q, delegatedRoleSelect+` WHERE ro.reportee_id = $1`+cond+` AND `+where+tail, append(args, more...), lq.Limit, func(r pgx.CollectableRow) (DelegatedRole, error) { return scanDelegatedRole(r) })
}

// grantsServiceSQL is the condition that the role definition in column definition grants a right on the
// service whose code is argument $codeArg and whose edition (0 for any) is the argument after it.
func grantsServiceSQL(definition string, codeArg int) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM role_definition_rights rr WHERE rr.role_definition_id = %s
		AND rr.service_code = $%d AND ($%d = 0 OR rr.service_edition = $%[3]d))`, definition, codeArg, codeArg+1)
}

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
func (q *Queries) AppendAudit(ctx context.Context, e audit.Entry) error {
	_, err := q.db.Exec(ctx, `INSERT INTO authorization_audit (occurred_at, reportee_id, actor_name, actor_party_id, actor_login_id,
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
func (q *Queries) ListAudit(ctx context.Context, reporteeID int64, lq ListQuery) ([]audit.Entry, bool, error) {
	where, tail, args, err := ListClauses(lq, AuditFields, ListOrder{ByDefault: "a.occurred_at DESC, a.id DESC", TieBreaker: "a.id DESC"}, 2)
	if err != nil {
		return nil, false, err
	}
	return QueryPage(ctx, q, `SELECT a.id, a.occurred_at, a.reportee_id, a.actor_name, COALESCE(a.actor_party_id, 0),
			COALESCE(a.actor_login_id, 0), a.actor_method, a.api_key_name, a.request_id, a.action, COALESCE(a.role_id, 0),
			COALESCE(a.role_definition_id, 0), COALESCE(a.right_id, 0), COALESCE(a.right_holder, ''), a.summary
		FROM authorization_audit a WHERE a.reportee_id = $1 AND `+where+tail, append([]any{reporteeID}, args...), lq.Limit, pgx.RowToStructByPos[audit.Entry])
}
