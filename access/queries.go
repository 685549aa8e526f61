package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// Store is the access room's SQL — role definitions and their rights, delegated roles, single rights,
// what a subject holds, the audit log — over the connection of q, a pool or a transaction, beside the
// shared statements of q itself (its events).
type Store struct {
	*store.Queries
}

// NewStore returns the access statements over q.
func NewStore(q *store.Queries) Store { return Store{q} }

// The user-facing authorization area: the roles and rights a subject holds for a reportee, delegations,
// local role definitions, and the audit log of every change to them.

// LocalRoleType is the RoleType of role definitions a reportee made for itself.
const LocalRoleType = "Local"

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
func (q Store) ListReporteeRoleDefinitions(ctx context.Context, reporteeID int64) ([]RoleDefinition, error) {
	rows, err := q.DB().Query(ctx, `SELECT `+roleDefinitionColumns+` FROM role_definitions d
		WHERE (d.owner_party_id IS NULL AND d.role_type = 'Altinn') OR d.owner_party_id = $1
		ORDER BY d.owner_party_id NULLS FIRST, d.id`, reporteeID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RoleDefinition, error) { return scanRoleDefinition(r) })
}

// RoleDefinitionOf is role definition id as the reportee sees it: any platform role, or a local role of
// its own; a local role of another reportee is store.ErrNotFound, like one that does not exist.
func (q Store) RoleDefinitionOf(ctx context.Context, reporteeID int64, id int) (RoleDefinition, error) {
	d, err := q.GetRoleDefinition(ctx, id, "", "")
	if err == nil && d.Local() && d.OwnerPartyID != reporteeID {
		return RoleDefinition{}, store.ErrNotFound
	}
	return d, err
}

// GetRoleDefinition returns a role definition by id, or a platform one by code when code is not "", with
// its rights. Without an owner it returns any definition with all its rights: callers decide who may see
// local ones. With a service owner's code it returns only the rights on the owner's services, and a local
// role only when it has such a right: the owner may see it held, so it may look it up.
func (q Store) GetRoleDefinition(ctx context.Context, id int, code, owner string) (RoleDefinition, error) {
	sql, key := `SELECT `+roleDefinitionColumns+` FROM role_definitions d WHERE d.id = $1`, any(id)
	if code != "" {
		sql, key = `SELECT `+roleDefinitionColumns+` FROM role_definitions d WHERE d.role_definition_code = $1
			AND d.owner_party_id IS NULL ORDER BY d.id LIMIT 1`, code
	}
	d, err := scanRoleDefinition(q.DB().QueryRow(ctx, sql, key))
	if err != nil {
		return d, store.NotFound(err)
	}
	args, onOwnerServices := []any{d.ID}, ""
	if owner != "" {
		args, onOwnerServices = append(args, owner), ` AND EXISTS (SELECT 1 FROM services s WHERE s.service_code = x.service_code
			AND s.service_edition = x.service_edition AND s.service_owner_code = $2)`
	}
	rows, err := q.DB().Query(ctx, `SELECT `+rightColumns+`
		FROM role_definition_rights x WHERE x.role_definition_id = $1`+onOwnerServices+`
		ORDER BY x.service_code, x.service_edition, `+actionOrder, args...)
	if err != nil {
		return d, err
	}
	if d.Rights, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Right]); err != nil {
		return d, err
	}
	if owner != "" && d.Local() && len(d.Rights) == 0 {
		return RoleDefinition{}, store.ErrNotFound
	}
	return d, nil
}

// LockRoleDefinition reads a role definition locked for the rest of the transaction (SELECT … FOR
// UPDATE), so that a change can be checked against it as it is.
func (q Store) LockRoleDefinition(ctx context.Context, id int) (RoleDefinition, error) {
	var locked int
	if err := q.DB().QueryRow(ctx, `SELECT id FROM role_definitions WHERE id = $1 FOR UPDATE`, id).Scan(&locked); err != nil {
		return RoleDefinition{}, store.NotFound(err)
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
func (q Store) UnknownServices(ctx context.Context, keys []store.ServiceKey) ([]store.ServiceKey, error) {
	codes := make([]string, len(keys))
	editions := make([]int32, len(keys))
	for i, k := range keys {
		codes[i], editions[i] = k.Code, int32(k.Edition)
	}
	rows, err := q.DB().Query(ctx, `SELECT DISTINCT k.code, k.edition, k.ord FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS k (code, edition, ord)
		WHERE NOT EXISTS (SELECT 1 FROM services s WHERE s.service_code = k.code AND s.service_edition = k.edition)
		ORDER BY k.ord`, codes, editions)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ServiceKey, error) {
		var k store.ServiceKey
		var ord int64
		err := r.Scan(&k.Code, &k.Edition, &ord)
		return k, err
	})
}

// CreateLocalRole stores a new local role of the owner with its rights and returns its id. Run it in a
// transaction with its audit entry.
func (q Store) CreateLocalRole(ctx context.Context, ownerID int64, name, description string, rights []RightSpec) (int, error) {
	var id int
	err := q.DB().QueryRow(ctx, `INSERT INTO role_definitions (role_type, role_name, role_description, owner_party_id)
		VALUES ($1, $2, $3, $4) RETURNING id`, LocalRoleType, name, description, ownerID).Scan(&id)
	if err != nil {
		return 0, roleNameTaken(err)
	}
	return id, q.insertRights(ctx, id, rights)
}

// UpdateLocalRole replaces the name, description and rights of a local role; rights that stay keep their
// RightID. Run it in a transaction with its audit entry.
func (q Store) UpdateLocalRole(ctx context.Context, id int, name, description string, rights []RightSpec) error {
	tag, err := q.DB().Exec(ctx, `UPDATE role_definitions SET role_name = $2, role_description = $3
		WHERE id = $1 AND owner_party_id IS NOT NULL`, id, name, description)
	if err != nil {
		return roleNameTaken(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	codes, editions, actions := rightArrays(rights)
	if _, err := q.DB().Exec(ctx, `DELETE FROM role_definition_rights r WHERE r.role_definition_id = $1
		AND (r.service_code, r.service_edition, r.action) NOT IN (SELECT * FROM unnest($2::text[], $3::int[], $4::text[]))`,
		id, codes, editions, actions); err != nil {
		return err
	}
	return q.insertRights(ctx, id, rights)
}

func (q Store) insertRights(ctx context.Context, id int, rights []RightSpec) error {
	codes, editions, actions := rightArrays(rights)
	_, err := q.DB().Exec(ctx, `INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
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
func (q Store) DeleteLocalRole(ctx context.Context, id int) ([]DelegatedRole, error) {
	rows, err := q.DB().Query(ctx, delegatedRoleSelect+` WHERE ro.role_definition_id = $1 ORDER BY ro.id FOR UPDATE OF ro`, id)
	if err != nil {
		return nil, err
	}
	held, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DelegatedRole, error) { return scanDelegatedRole(r) })
	if err != nil {
		return nil, err
	}
	if _, err := q.DB().Exec(ctx, `DELETE FROM roles WHERE role_definition_id = $1`, id); err != nil {
		return nil, err
	}
	tag, err := q.DB().Exec(ctx, `DELETE FROM role_definitions WHERE id = $1 AND owner_party_id IS NOT NULL`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrNotFound
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
func (q Store) GetDefinedRight(ctx context.Context, id int64) (DefinedRight, error) {
	var r DefinedRight
	err := q.DB().QueryRow(ctx, `SELECT `+rightColumns+`, d.id, d.role_name,
			COALESCE(d.owner_party_id, 0)
		FROM role_definition_rights x JOIN role_definitions d ON d.id = x.role_definition_id WHERE x.id = $1`, id).
		Scan(&r.RightID, &r.ServiceCode, &r.ServiceEdition, &r.Action, &r.IsDelegatable, &r.RoleDefinitionID, &r.RoleName, &r.OwnerPartyID)
	return r, store.NotFound(err)
}

// DeleteLocalRight removes a right from a local role. Run it in a transaction with its audit entry.
func (q Store) DeleteLocalRight(ctx context.Context, id int64) error {
	tag, err := q.DB().Exec(ctx, `DELETE FROM role_definition_rights r USING role_definitions d
		WHERE r.id = $1 AND d.id = r.role_definition_id AND d.owner_party_id IS NOT NULL`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrNotFound
	}
	return err
}

// HoldsRoleDefinition tells whether s holds a role of the definition for the reportee.
func (q Store) HoldsRoleDefinition(ctx context.Context, s store.Subject, reporteeID int64, definitionID int) (bool, error) {
	var ok bool
	err := q.DB().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM roles WHERE reportee_id = $1 AND role_definition_id = $4
		AND (holder_party_id = $2 OR holder_login_id = $3))`, reporteeID, s.PartyID, s.LoginID, definitionID).Scan(&ok)
	return ok, err
}

// MissingDelegatableRights lists the rights of a definition that s does not hold, as a delegatable right,
// for the reportee through its own roles: what stands in the way of s delegating the role.
func (q Store) MissingDelegatableRights(ctx context.Context, s store.Subject, reporteeID int64, definitionID int) ([]Right, error) {
	rows, err := q.DB().Query(ctx, `SELECT `+rightColumns+`
		FROM role_definition_rights x WHERE x.role_definition_id = $4 AND NOT EXISTS (
			SELECT 1 FROM roles ro JOIN role_definition_rights h ON h.role_definition_id = ro.role_definition_id
			WHERE `+store.HeldBySubjectSQL+`
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
func (q Store) GetDelegatedRole(ctx context.Context, id int64) (DelegatedRole, error) {
	r, err := scanDelegatedRole(q.DB().QueryRow(ctx, delegatedRoleSelect+` WHERE ro.id = $1`, id))
	return r, store.NotFound(err)
}

// DeleteDelegatedRole deletes a role by RoleId. Run it in a transaction with its audit entry.
func (q Store) DeleteDelegatedRole(ctx context.Context, id int64) error {
	tag, err := q.DB().Exec(ctx, `DELETE FROM roles WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrNotFound
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
func (q Store) InsertRole(ctx context.Context, r NewRole) (int64, error) {
	var id int64
	err := q.DB().QueryRow(ctx, `INSERT INTO roles (holder_party_id, holder_login_id, reportee_id, role_definition_id, delegator, delegated_time)
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
// one receiver; the zero value narrows nothing.
type DelegationFilter struct {
	Service store.ServiceFilter
	// Receiver is receiverId as the client wrote it (FindReceiver reads it); nil for every receiver.
	Receiver *string
}

// listDelegations lists the roles held for the reportee, narrowed to a service and to a receiver (by
// party id, 0 for any).
func (q Store) listDelegations(ctx context.Context, reporteeID int64, service store.ServiceFilter, receiverID int64, lq store.ListQuery) ([]DelegatedRole, bool, error) {
	args := []any{reporteeID}
	cond := ""
	if service.Code != "" {
		args = append(args, service.Code, service.Edition)
		cond += " AND " + store.GrantsServiceSQL("ro.role_definition_id", len(args)-1)
	}
	if receiverID != 0 {
		args = append(args, receiverID)
		cond += fmt.Sprintf(" AND ro.holder_party_id = $%d", len(args))
	}
	where, tail, more, err := store.ListClauses(lq, DelegationFields, store.ListOrder{ByDefault: "ro.delegated_time DESC, ro.id DESC", TieBreaker: "ro.id"}, len(args)+1)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q.Queries, delegatedRoleSelect+` WHERE ro.reportee_id = $1`+cond+` AND `+where+tail, append(args, more...), lq.Limit, func(r pgx.CollectableRow) (DelegatedRole, error) { return scanDelegatedRole(r) })
}

// SingleRightRoleType is the role type of the role a single right is held as: it gives that right only.
const SingleRightRoleType = "SingleRight"

// SingleRightDefinition returns the definition of the role that gives only action r on its service edition,
// made the first time it is asked for (with its right, not delegatable further).
func (q Store) SingleRightDefinition(ctx context.Context, r RightSpec) (RoleDefinition, error) {
	d := RoleDefinition{RoleType: SingleRightRoleType, Code: fmt.Sprintf("RIGHT/%s/%d/%s", r.ServiceCode, r.ServiceEdition, r.Action),
		Name: fmt.Sprintf("Enkeltrettighet %s %s/%d", r.Action, r.ServiceCode, r.ServiceEdition)}
	d.Description = fmt.Sprintf("A single right delegated on its own: %s on service %s edition %d", r.Action, r.ServiceCode, r.ServiceEdition)
	err := q.DB().QueryRow(ctx, `INSERT INTO role_definitions (role_type, role_definition_code, role_name, role_description)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (role_definition_code) WHERE role_type = '`+SingleRightRoleType+`' DO UPDATE SET role_name = EXCLUDED.role_name
		RETURNING id`, d.RoleType, d.Code, d.Name, d.Description).Scan(&d.ID)
	if err != nil {
		return d, err
	}
	_, err = q.DB().Exec(ctx, `INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
		VALUES ($1, $2, $3, $4, false) ON CONFLICT DO NOTHING`, d.ID, r.ServiceCode, r.ServiceEdition, r.Action)
	return d, err
}
