package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store/odatasql"
)

// The service-owner area: what agencies may read about the parties of their services. Every list pages
// either by $skip (OFFSET) or, in its default order, by keyset (see keyset): after is the key of the last
// row the client has seen.

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
	where, tail, more, err := listClauses(lq, OrganizationFields, keyset("p.id", after), len(args)+1)
	if err != nil {
		return "", nil, err
	}
	return `SELECT ` + organizationColumns + ` FROM parties p WHERE ` + cond + ` AND ` + where + tail, append(args, more...), nil
}

// ListOrganizations lists organizations, all of them or those a contact search finds, by party id.
func (q *Queries) ListOrganizations(ctx context.Context, search ContactSearch, lq ListQuery, after int64) ([]Organization, bool, error) {
	return builtPage(ctx, q, lq.Limit, func(r pgx.CollectableRow) (Organization, error) { return scanOrganization(r) })(
		listOrganizationsSQL(search, lq, after))
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
	where, tail, args, err := listClauses(lq, OfficialContactFields, keyset("p.id", 0), 2)
	if err != nil {
		return nil, false, err
	}
	return queryPage(ctx, q, `SELECT COALESCE(p.mobile_number, ''), p.mobile_number_changed, COALESCE(p.email_address, ''),
		p.email_address_changed FROM parties p
		WHERE p.id = $1 AND (p.mobile_number IS NOT NULL OR p.email_address IS NOT NULL) AND `+where+tail,
		append([]any{orgID}, args...), lq.Limit, pgx.RowToStructByPos[ContactPoint])
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
	where, tail, more, err := listClauses(lq, PersonalContactFields, keyset("pc.id", after), len(args)+1)
	if err != nil {
		return nil, false, err
	}
	return queryPage(ctx, q, `SELECT pc.id, pc.name, pc.ssn, COALESCE(pc.mobile_number, ''), pc.mobile_number_changed,
		COALESCE(pc.email_address, ''), pc.email_address_changed
		FROM parties pc
		WHERE pc.kind = 'Person' AND pc.id IN (SELECT ro.holder_party_id FROM roles ro WHERE ro.reportee_id = $1`+cond+`)
		AND `+where+tail, append(args, more...), lq.Limit, pgx.RowToStructByPos[PersonalContact])
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
func (q *Queries) ListRoleDefinitions(ctx context.Context, lq ListQuery, after int64) ([]RoleDefinition, bool, error) {
	where, tail, args, err := listClauses(lq, RoleDefinitionFields, keyset("d.id", after), 1)
	if err != nil {
		return nil, false, err
	}
	return queryPage(ctx, q, `SELECT `+roleDefinitionColumns+` FROM role_definitions d
		WHERE d.owner_party_id IS NULL AND d.role_type <> '`+SingleRightRoleType+`' AND `+where+tail, args, lq.Limit, func(r pgx.CollectableRow) (RoleDefinition, error) { return scanRoleDefinition(r) })
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
	where, tail, more, err := listClauses(lq, ServiceOwnerReporteeFields, listOrder{byDefault: "r.rid", tieBreaker: "p.id"}, len(args)+1)
	if err != nil {
		return "", nil, err
	}
	sql := partySelect + `
		JOIN (SELECT DISTINCT ro.reportee_id AS rid FROM roles ro
				WHERE ro.holder_party_id = $1 AND ro.reportee_id > $2 AND ro.reportee_id <> $3` + cond + `
			UNION ALL SELECT $3::bigint WHERE $3::bigint > $2) r ON r.rid = p.id
		WHERE p.id > $2 AND ` + where + tail
	return sql, append(args, more...), nil
}

// ListServiceOwnerReportees lists the parties a subject can represent, by party id.
func (q *Queries) ListServiceOwnerReportees(ctx context.Context, rq ReporteeQuery, lq ListQuery, after int64) ([]Party, bool, error) {
	return builtPage(ctx, q, lq.Limit, func(r pgx.CollectableRow) (Party, error) { return scanParty(r) })(
		ServiceOwnerReporteesSQL(rq, lq, after))
}
