package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store/odatasql"
)

// The service-owner area: what agencies may read about the parties of their services. Every list pages
// either by $skip (OFFSET) or, in its default order, by keyset: After is the key of the last row the
// client has seen, and the page starts after it, so rows inserted or deleted elsewhere in the list while a
// client walks it never shift the rows it has yet to see.

// ServiceOwner is an agency that owns services.
type ServiceOwner struct {
	Code               string
	Name               string
	OrganizationNumber string
}

// ServiceOwnerByOrganization finds the service owner an organization number belongs to.
func (q *Queries) ServiceOwnerByOrganization(ctx context.Context, organizationNumber string) (ServiceOwner, error) {
	var o ServiceOwner
	err := q.db.QueryRow(ctx, `SELECT code, name, organization_number FROM service_owners WHERE organization_number = $1`,
		organizationNumber).Scan(&o.Code, &o.Name, &o.OrganizationNumber)
	return o, notFound(err)
}

// ServiceFilter narrows a list to a service: Code "" means no narrowing, Edition 0 any edition of Code.
type ServiceFilter struct {
	Code    string
	Edition int
}

// OwnsService tells whether the owner has the service (any edition when f.Edition is 0).
func (q *Queries) OwnsService(ctx context.Context, owner string, f ServiceFilter) (bool, error) {
	var ok bool
	err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM services WHERE service_owner_code = $1 AND service_code = $2
		AND ($3 = 0 OR service_edition = $3))`, owner, f.Code, f.Edition).Scan(&ok)
	return ok, err
}

// OwnerServices lists the owner's service editions in code and edition order.
func (q *Queries) OwnerServices(ctx context.Context, owner string) ([]ServiceKey, error) {
	rows, err := q.db.Query(ctx, `SELECT service_code, service_edition FROM services WHERE service_owner_code = $1
		ORDER BY service_code, service_edition`, owner)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ServiceKey])
}

// AuditPseudonymKey is the key audit lines hash national identity numbers with (made by migration 006).
func (q *Queries) AuditPseudonymKey(ctx context.Context) ([]byte, error) {
	var key []byte
	err := q.db.QueryRow(ctx, `SELECT key FROM audit_pseudonym_key`).Scan(&key)
	return key, notFound(err)
}

// keysetClauses compiles lq over fields like listClauses, in the order of key (a unique, never-null
// integer column) unless $orderby says otherwise, and starts the page after the key value after (0: from
// the start). Placeholders start at firstArg.
func keysetClauses(lq ListQuery, after int64, fields odatasql.Fields, key string, firstArg int) (where, tail string, args []any, err error) {
	where = "TRUE"
	if lq.Filter != nil {
		if where, args, err = odatasql.Where(lq.Filter, fields, firstArg); err != nil {
			return "", "", nil, err
		}
	}
	order := key
	if len(lq.OrderBy) > 0 {
		if order, err = odatasql.OrderBy(lq.OrderBy, fields, key); err != nil {
			return "", "", nil, err
		}
	}
	n := firstArg + len(args)
	where = fmt.Sprintf("%s AND %s > $%d", where, key, n)
	tail = fmt.Sprintf(" ORDER BY %s OFFSET $%d LIMIT $%d", order, n+1, n+2)
	return where, tail, append(args, after, lq.Skip, lq.Limit+1), nil
}

// collect scans every row with scan and trims the page to limit, telling whether more rows follow.
func collect[T any](rows pgx.Rows, err error, limit int, scan func(pgx.Rows) (T, error)) ([]T, bool, error) {
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	return trimPage(out, limit)
}

// Organization is an organization as service owners see it.
type Organization struct {
	ID                 int64
	Name               string
	OrganizationNumber string
	OrganizationForm   string
	LastChanged        *time.Time
	LastConfirmed      *time.Time
}

const organizationColumns = `p.id, p.name, p.organization_number, COALESCE(p.organization_form, ''), p.last_changed, p.last_confirmed`

func scanOrganization(row pgx.Row) (Organization, error) {
	var o Organization
	err := row.Scan(&o.ID, &o.Name, &o.OrganizationNumber, &o.OrganizationForm, &o.LastChanged, &o.LastConfirmed)
	return o, err
}

// OrganizationFields are the fields of an organization that clients can filter and order on.
var OrganizationFields = odatasql.Fields{
	"Name":               {Column: "p.name", Kind: odatasql.String},
	"OrganizationNumber": {Column: "p.organization_number", Kind: odatasql.String},
	"Type":               {Column: "p.organization_form", Kind: odatasql.String},
	"LastChanged":        {Column: "p.last_changed", Kind: odatasql.DateTime},
	"LastConfirmed":      {Column: "p.last_confirmed", Kind: odatasql.DateTime},
}

// ContactSearch looks organizations up by contact point. An organization matches a term when its official
// contact or the own contact data of a person holding a role for it has that e-mail address (any case) or
// phone number (normalised by contact_phone_key); with both terms it must match both.
type ContactSearch struct {
	Email string
	Phone string
}

// listOrganizationsSQL is the statement behind ListOrganizations.
func listOrganizationsSQL(search ContactSearch, lq ListQuery, after int64) (string, []any, error) {
	var args []any
	cond := "p.kind = 'Organization'"
	if search.Email != "" {
		args = append(args, search.Email)
		cond += fmt.Sprintf(` AND p.id IN (
			SELECT o.id FROM parties o WHERE lower(btrim(o.email_address)) = lower(btrim($%[1]d))
			UNION SELECT ro.reportee_id FROM parties pc JOIN roles ro ON ro.holder_party_id = pc.id
				WHERE pc.kind = 'Person' AND lower(btrim(pc.email_address)) = lower(btrim($%[1]d)))`, len(args))
	}
	if search.Phone != "" {
		args = append(args, search.Phone)
		cond += fmt.Sprintf(` AND p.id IN (
			SELECT o.id FROM parties o WHERE contact_phone_key(o.mobile_number) = contact_phone_key($%[1]d)
			UNION SELECT ro.reportee_id FROM parties pc JOIN roles ro ON ro.holder_party_id = pc.id
				WHERE pc.kind = 'Person' AND contact_phone_key(pc.mobile_number) = contact_phone_key($%[1]d))`, len(args))
	}
	where, tail, more, err := keysetClauses(lq, after, OrganizationFields, "p.id", len(args)+1)
	if err != nil {
		return "", nil, err
	}
	return `SELECT ` + organizationColumns + ` FROM parties p WHERE ` + cond + ` AND ` + where + tail, append(args, more...), nil
}

// ListOrganizations lists organizations, all of them or those a contact search finds, by party id.
func (q *Queries) ListOrganizations(ctx context.Context, search ContactSearch, lq ListQuery, after int64) ([]Organization, bool, error) {
	sql, args, err := listOrganizationsSQL(search, lq, after)
	if err != nil {
		return nil, false, err
	}
	rows, err := q.db.Query(ctx, sql, args...)
	return collect(rows, err, lq.Limit, func(r pgx.Rows) (Organization, error) { return scanOrganization(r) })
}

// GetOrganization returns an organization by party id.
func (q *Queries) GetOrganization(ctx context.Context, id int64) (Organization, error) {
	o, err := scanOrganization(q.db.QueryRow(ctx, `SELECT `+organizationColumns+` FROM parties p
		WHERE p.id = $1 AND p.kind = 'Organization'`, id))
	return o, notFound(err)
}

// ContactPoint is a mobile number and an e-mail address with when each last changed.
type ContactPoint struct {
	MobileNumber        string
	MobileNumberChanged *time.Time
	EMailAddress        string
	EMailAddressChanged *time.Time
}

// OfficialContactFields are the fields of an official contact that clients can filter and order on.
var OfficialContactFields = odatasql.Fields{
	"MobileNumber":        {Column: "p.mobile_number", Kind: odatasql.String},
	"MobileNumberChanged": {Column: "p.mobile_number_changed", Kind: odatasql.DateTime},
	"EMailAddress":        {Column: "p.email_address", Kind: odatasql.String},
	"EMailAddressChanged": {Column: "p.email_address_changed", Kind: odatasql.DateTime},
}

// OfficialContacts lists the organization's official contact data: one entry, or none when it has none.
func (q *Queries) OfficialContacts(ctx context.Context, orgID int64, lq ListQuery) ([]ContactPoint, bool, error) {
	where, tail, args, err := keysetClauses(lq, 0, OfficialContactFields, "p.id", 2)
	if err != nil {
		return nil, false, err
	}
	rows, err := q.db.Query(ctx, `SELECT COALESCE(p.mobile_number, ''), p.mobile_number_changed, COALESCE(p.email_address, ''),
		p.email_address_changed FROM parties p
		WHERE p.id = $1 AND (p.mobile_number IS NOT NULL OR p.email_address IS NOT NULL) AND `+where+tail,
		append([]any{orgID}, args...)...)
	return collect(rows, err, lq.Limit, func(r pgx.Rows) (ContactPoint, error) {
		var c ContactPoint
		err := r.Scan(&c.MobileNumber, &c.MobileNumberChanged, &c.EMailAddress, &c.EMailAddressChanged)
		return c, err
	})
}

// PersonalContact is a person holding a role for an organization, with their own contact data.
type PersonalContact struct {
	ID   int64
	Name string
	SSN  string
	ContactPoint
}

// PersonalContactFields are the fields of a personal contact that clients can filter and order on.
var PersonalContactFields = odatasql.Fields{
	"Name":                 {Column: "pc.name", Kind: odatasql.String},
	"SocialSecurityNumber": {Column: "pc.ssn", Kind: odatasql.String},
	"MobileNumber":         {Column: "pc.mobile_number", Kind: odatasql.String},
	"MobileNumberChanged":  {Column: "pc.mobile_number_changed", Kind: odatasql.DateTime},
	"EMailAddress":         {Column: "pc.email_address", Kind: odatasql.String},
	"EMailAddressChanged":  {Column: "pc.email_address_changed", Kind: odatasql.DateTime},
}

// ContactFilter narrows personal contacts to holders of a role (by code) and to those with a right on a
// service through one of their roles for the organization; the zero value narrows nothing.
type ContactFilter struct {
	RoleDefinitionCode string
	Service            ServiceFilter
}

// PersonalContacts lists the persons holding at least one role for the organization, by party id.
func (q *Queries) PersonalContacts(ctx context.Context, orgID int64, f ContactFilter, lq ListQuery, after int64) ([]PersonalContact, bool, error) {
	args := []any{orgID}
	cond := ""
	if f.RoleDefinitionCode != "" {
		args = append(args, f.RoleDefinitionCode)
		cond += fmt.Sprintf(` AND ro.role_definition_id IN (SELECT id FROM role_definitions
			WHERE role_definition_code = $%d AND owner_party_id IS NULL)`, len(args))
	}
	if f.Service.Code != "" {
		args = append(args, f.Service.Code, f.Service.Edition)
		cond += fmt.Sprintf(` AND EXISTS (SELECT 1 FROM roles r2 JOIN role_definition_rights rr ON rr.role_definition_id = r2.role_definition_id
			WHERE r2.holder_party_id = ro.holder_party_id AND r2.reportee_id = $1 AND rr.service_code = $%d
			AND ($%d = 0 OR rr.service_edition = $%[2]d))`, len(args)-1, len(args))
	}
	where, tail, more, err := keysetClauses(lq, after, PersonalContactFields, "pc.id", len(args)+1)
	if err != nil {
		return nil, false, err
	}
	rows, err := q.db.Query(ctx, `SELECT pc.id, pc.name, pc.ssn, COALESCE(pc.mobile_number, ''), pc.mobile_number_changed,
		COALESCE(pc.email_address, ''), pc.email_address_changed
		FROM parties pc
		WHERE pc.kind = 'Person' AND pc.id IN (SELECT ro.holder_party_id FROM roles ro WHERE ro.reportee_id = $1`+cond+`)
		AND `+where+tail, append(args, more...)...)
	return collect(rows, err, lq.Limit, func(r pgx.Rows) (PersonalContact, error) {
		var c PersonalContact
		err := r.Scan(&c.ID, &c.Name, &c.SSN, &c.MobileNumber, &c.MobileNumberChanged, &c.EMailAddress, &c.EMailAddressChanged)
		return c, err
	})
}

// relevantToOwnerSQL holds for a role definition d that grants at least one right on a service of the owner
// named by placeholder $%d: the rule that decides which roles service-owner views show.
const relevantToOwnerSQL = `EXISTS (SELECT 1 FROM role_definition_rights rr
	JOIN services s ON s.service_code = rr.service_code AND s.service_edition = rr.service_edition
	WHERE rr.role_definition_id = d.id AND s.service_owner_code = $%d)`

// HeldRole is a role someone holds for a reportee, as service-owner views show it. RoleID is 0 for the
// automatic base role (main administrator) of a person acting for themself, which no delegation made;
// it has no Delegator and no DelegatedTime either.
type HeldRole struct {
	RoleID             int64
	RoleType           string
	RoleDefinitionID   int
	RoleDefinitionCode string
	RoleName           string
	RoleDescription    string
	Delegator          string
	DelegatedTime      *time.Time
}

// HeldRoleFields are the fields of a held role that clients can filter and order on.
var HeldRoleFields = odatasql.Fields{
	"RoleId":             {Column: "x.role_id", Kind: odatasql.Int},
	"RoleType":           {Column: "x.role_type", Kind: odatasql.String},
	"RoleDefinitionId":   {Column: "x.role_definition_id", Kind: odatasql.Int},
	"RoleDefinitionCode": {Column: "x.code", Kind: odatasql.String},
	"RoleName":           {Column: "x.role_name", Kind: odatasql.String},
	"RoleDescription":    {Column: "x.role_description", Kind: odatasql.String},
	"Delegator":          {Column: "x.delegator", Kind: odatasql.String},
	"DelegatedTime":      {Column: "x.delegated_time", Kind: odatasql.DateTime},
}

// mainAdministratorSQL is the definition id of the main administrator (HADM), the automatic base role of
// a person acting for themself.
const mainAdministratorSQL = `(SELECT id FROM role_definitions WHERE role_definition_code = 'HADM' AND owner_party_id IS NULL
	ORDER BY id LIMIT 1)`

// HeldRoles lists the roles the holder (a person or organization) holds for the reportee whose definitions
// grant at least one right on the owner's services, by role id; self puts the automatic base role first.
// The key of a role is its RoleID (0 for the base role), so after is -1 to start at the beginning.
func (q *Queries) HeldRoles(ctx context.Context, owner string, holderID, reporteeID int64, self bool, lq ListQuery, after int64) ([]HeldRole, bool, error) {
	where, tail, args, err := keysetClauses(lq, after, HeldRoleFields, "x.role_id", 5)
	if err != nil {
		return nil, false, err
	}
	rows, err := q.db.Query(ctx, `SELECT x.role_id, x.role_type, x.role_definition_id, x.code, x.role_name, x.role_description,
			COALESCE(x.delegator, ''), x.delegated_time
		FROM (
			SELECT 0::bigint AS role_id, d.role_type, d.id AS role_definition_id, COALESCE(d.role_definition_code, '') AS code,
				d.role_name, d.role_description, NULL::text AS delegator, NULL::timestamp AS delegated_time
			FROM role_definitions d WHERE $4 AND d.id = `+mainAdministratorSQL+`
			UNION ALL
			SELECT ro.id, d.role_type, d.id, COALESCE(d.role_definition_code, ''), d.role_name, d.role_description, ro.delegator, ro.delegated_time
			FROM roles ro JOIN role_definitions d ON d.id = ro.role_definition_id
			WHERE ro.holder_party_id = $1 AND ro.reportee_id = $2
		) x JOIN role_definitions d ON d.id = x.role_definition_id
		WHERE `+fmt.Sprintf(relevantToOwnerSQL, 3)+` AND `+where+tail,
		append([]any{holderID, reporteeID, owner, self}, args...)...)
	return collect(rows, err, lq.Limit, func(r pgx.Rows) (HeldRole, error) {
		var h HeldRole
		err := r.Scan(&h.RoleID, &h.RoleType, &h.RoleDefinitionID, &h.RoleDefinitionCode, &h.RoleName, &h.RoleDescription,
			&h.Delegator, &h.DelegatedTime)
		return h, err
	})
}

// GrantedRight is a right on a service, as a role definition grants it.
type GrantedRight struct {
	RightID        int64
	ServiceCode    string
	ServiceEdition int
	Action         string
	IsDelegatable  bool
}

// actionOrder sorts rights by action in the order the interface lists them.
const actionOrder = `array_position(ARRAY['Read', 'Write', 'Delete', 'Sign', 'ArchiveRead', 'ArchiveDelete'], rr.action)`

// HeldRights lists the rights the holder has for the reportee through its roles (self: through the
// automatic base role), on the owner's services only: one entry per service edition and action (the lowest
// RightID of the definitions that grant it; delegatable when any of them lets it be delegated).
func (q *Queries) HeldRights(ctx context.Context, owner string, holderID, reporteeID int64, self bool) ([]GrantedRight, error) {
	rows, err := q.db.Query(ctx, `SELECT min(rr.id), rr.service_code, rr.service_edition, rr.action, bool_or(rr.is_delegatable)
		FROM role_definition_rights rr
		JOIN services s ON s.service_code = rr.service_code AND s.service_edition = rr.service_edition
		WHERE s.service_owner_code = $3 AND rr.role_definition_id IN (
			SELECT ro.role_definition_id FROM roles ro WHERE ro.holder_party_id = $1 AND ro.reportee_id = $2
			UNION SELECT `+mainAdministratorSQL+` WHERE $4)
		GROUP BY rr.service_code, rr.service_edition, rr.action
		ORDER BY rr.service_code, rr.service_edition, `+actionOrder, holderID, reporteeID, owner, self)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[GrantedRight])
}

// RoleDefinition is a role definition with the rights it grants on one service owner's services.
type RoleDefinition struct {
	ID              int
	RoleType        string
	Code            string
	Name            string
	Description     string
	RightsForOwner  []GrantedRight
	relevantToOwner bool
}

// RelevantToOwner tells whether the definition grants at least one right on the owner's services.
func (d RoleDefinition) RelevantToOwner() bool { return d.relevantToOwner }

// RoleDefinitionFields are the fields of a role definition that clients can filter and order on.
var RoleDefinitionFields = odatasql.Fields{
	"RoleType":           {Column: "d.role_type", Kind: odatasql.String},
	"RoleDefinitionId":   {Column: "d.id", Kind: odatasql.Int},
	"RoleDefinitionCode": {Column: "d.role_definition_code", Kind: odatasql.String},
	"RoleName":           {Column: "d.role_name", Kind: odatasql.String},
	"RoleDescription":    {Column: "d.role_description", Kind: odatasql.String},
}

const roleDefinitionColumns = `d.id, d.role_type, COALESCE(d.role_definition_code, ''), d.role_name, d.role_description`

// ListRoleDefinitions lists the platform's role definitions (not the local roles reportees made), by id.
func (q *Queries) ListRoleDefinitions(ctx context.Context, lq ListQuery, after int64) ([]RoleDefinition, bool, error) {
	where, tail, args, err := keysetClauses(lq, after, RoleDefinitionFields, "d.id", 1)
	if err != nil {
		return nil, false, err
	}
	rows, err := q.db.Query(ctx, `SELECT `+roleDefinitionColumns+` FROM role_definitions d
		WHERE d.owner_party_id IS NULL AND `+where+tail, args...)
	return collect(rows, err, lq.Limit, func(r pgx.Rows) (RoleDefinition, error) {
		var d RoleDefinition
		err := r.Scan(&d.ID, &d.RoleType, &d.Code, &d.Name, &d.Description)
		return d, err
	})
}

// GetRoleDefinition returns a role definition by id, or a platform one by code when code is not "", with
// the rights it grants on the owner's services. A local role (one a reportee made) exists for the owner
// only when it grants a right on the owner's services: the owner may see it held, so it may look it up.
func (q *Queries) GetRoleDefinition(ctx context.Context, owner string, id int, code string) (RoleDefinition, error) {
	var (
		d     RoleDefinition
		local bool
	)
	err := q.db.QueryRow(ctx, `SELECT `+roleDefinitionColumns+`, d.owner_party_id IS NOT NULL FROM role_definitions d
		WHERE CASE WHEN $2 = '' THEN d.id = $1 ELSE d.role_definition_code = $2 AND d.owner_party_id IS NULL END
		ORDER BY d.id LIMIT 1`, id, code).Scan(&d.ID, &d.RoleType, &d.Code, &d.Name, &d.Description, &local)
	if err != nil {
		return d, notFound(err)
	}
	rows, err := q.db.Query(ctx, `SELECT rr.id, rr.service_code, rr.service_edition, rr.action, rr.is_delegatable
		FROM role_definition_rights rr
		JOIN services s ON s.service_code = rr.service_code AND s.service_edition = rr.service_edition
		WHERE rr.role_definition_id = $1 AND s.service_owner_code = $2
		ORDER BY rr.service_code, rr.service_edition, `+actionOrder, d.ID, owner)
	if err != nil {
		return d, err
	}
	if d.RightsForOwner, err = pgx.CollectRows(rows, pgx.RowToStructByPos[GrantedRight]); err != nil {
		return d, err
	}
	d.relevantToOwner = len(d.RightsForOwner) > 0
	if local && !d.relevantToOwner {
		return RoleDefinition{}, ErrNotFound
	}
	return d, nil
}

// ServiceOwnerReporteeFields are the fields of a service-owner reportee that clients can filter and order on.
var ServiceOwnerReporteeFields = odatasql.Fields{
	"Name":                     {Column: "p.name", Kind: odatasql.String},
	"Type":                     {Column: reporteeTypeSQL, Kind: odatasql.String},
	"OrganizationNumber":       {Column: "p.organization_number", Kind: odatasql.String},
	"ParentOrganizationNumber": {Column: "p.parent_organization_number", Kind: odatasql.String},
	"OrganizationForm":         {Column: "p.organization_form", Kind: odatasql.String},
	"Status":                   {Column: "p.status", Kind: odatasql.String},
	"SocialSecurityNumber":     {Column: "p.ssn", Kind: odatasql.String},
}

// reporteeTypeSQL is the service-owner Type of a party: Person, Business (a BEDR unit) or Enterprise.
const reporteeTypeSQL = `CASE WHEN p.kind = 'Person' THEN 'Person' WHEN p.organization_form = 'BEDR' THEN 'Business' ELSE 'Enterprise' END`

// ReporteeQuery asks for the parties a subject can represent: every party it holds a role for, and itself
// when it is a person (SelfID). RoleDefinitionID narrows to the parties it holds that role for (a person
// holds no delegated role for themself, so the caller leaves SelfID 0 then); Service to the parties where
// one of its roles grants a right on the service (a person has every right for themself).
type ReporteeQuery struct {
	SubjectID        int64
	SelfID           int64
	RoleDefinitionID int
	Service          ServiceFilter
}

// ServiceOwnerReporteesSQL is the one statement behind ListServiceOwnerReportees; exported for the
// benchmark. In the default order the roles of the subject are walked along roles_party_holder from the
// key after, so a page costs the same wherever it starts.
func ServiceOwnerReporteesSQL(rq ReporteeQuery, lq ListQuery, after int64) (string, []any, error) {
	args := []any{rq.SubjectID, after, rq.SelfID}
	cond := ""
	if rq.RoleDefinitionID != 0 {
		args = append(args, rq.RoleDefinitionID)
		cond += fmt.Sprintf(" AND ro.role_definition_id = $%d", len(args))
	}
	if rq.Service.Code != "" {
		args = append(args, rq.Service.Code, rq.Service.Edition)
		cond += fmt.Sprintf(` AND EXISTS (SELECT 1 FROM roles r2 JOIN role_definition_rights rr ON rr.role_definition_id = r2.role_definition_id
			WHERE r2.holder_party_id = $1 AND r2.reportee_id = ro.reportee_id AND rr.service_code = $%d
			AND ($%d = 0 OR rr.service_edition = $%[2]d))`, len(args)-1, len(args))
	}
	where := "TRUE"
	if lq.Filter != nil {
		var fargs []any
		var err error
		if where, fargs, err = odatasql.Where(lq.Filter, ServiceOwnerReporteeFields, len(args)+1); err != nil {
			return "", nil, err
		}
		args = append(args, fargs...)
	}
	order := "r.rid"
	if len(lq.OrderBy) > 0 {
		var err error
		if order, err = odatasql.OrderBy(lq.OrderBy, ServiceOwnerReporteeFields, "p.id"); err != nil {
			return "", nil, err
		}
	}
	args = append(args, lq.Skip, lq.Limit+1)
	sql := partySelect + `
		JOIN (SELECT DISTINCT ro.reportee_id AS rid FROM roles ro
				WHERE ro.holder_party_id = $1 AND ro.reportee_id > $2 AND ro.reportee_id <> $3` + cond + `
			UNION ALL SELECT $3::bigint WHERE $3::bigint > $2) r ON r.rid = p.id
		WHERE p.id > $2 AND ` + where + fmt.Sprintf(" ORDER BY %s OFFSET $%d LIMIT $%d", order, len(args)-1, len(args))
	return sql, args, nil
}

// ListServiceOwnerReportees lists the parties a subject can represent, by party id.
func (q *Queries) ListServiceOwnerReportees(ctx context.Context, rq ReporteeQuery, lq ListQuery, after int64) ([]Party, bool, error) {
	sql, args, err := ServiceOwnerReporteesSQL(rq, lq, after)
	if err != nil {
		return nil, false, err
	}
	rows, err := q.db.Query(ctx, sql, args...)
	return collect(rows, err, lq.Limit, func(r pgx.Rows) (Party, error) { return scanParty(r) })
}
