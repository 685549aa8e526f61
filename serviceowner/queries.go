package serviceowner

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// The area's lists. Every list pages either by $skip (OFFSET) or, in its default order, by keyset
// (store.Keyset): after is the key of the last row the client has seen.

// ContactSearch looks organizations up by contact point. An organization matches a term when its official
// contact or the own contact data of a person holding a role for it has that e-mail address (any case) or
// phone number (normalised by contact_phone_key); with both terms it must match both.
type ContactSearch struct {
	Email string
	Phone string
}

// listOrganizationsSQL is the statement behind Organizations.
func listOrganizationsSQL(search ContactSearch, lq store.ListQuery, after int64) (string, []any, error) {
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
	where, tail, more, err := store.ListClauses(lq, store.OrganizationFields, store.Keyset("p.id", after), len(args)+1)
	if err != nil {
		return "", nil, err
	}
	return `SELECT ` + store.OrganizationColumns + ` FROM parties p WHERE ` + cond + ` AND ` + where + tail, append(args, more...), nil
}

// Organizations lists organizations, all of them or those a contact search finds, by party id.
func (s *Service) Organizations(ctx context.Context, search ContactSearch, lq store.ListQuery, after int64) ([]store.Organization, bool, error) {
	return store.BuiltPage(ctx, s.q, lq.Limit, func(r pgx.CollectableRow) (store.Organization, error) { return store.ScanOrganization(r) })(
		listOrganizationsSQL(search, lq, after))
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
func (s *Service) OfficialContacts(ctx context.Context, orgID int64, lq store.ListQuery) ([]ContactPoint, bool, error) {
	where, tail, args, err := store.ListClauses(lq, OfficialContactFields, store.Keyset("p.id", 0), 2)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, s.q, `SELECT COALESCE(p.mobile_number, ''), p.mobile_number_changed, COALESCE(p.email_address, ''),
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
	Service            store.ServiceFilter
}

// PersonalContacts lists the persons holding at least one role for the organization, by party id.
// f must name a service of owner, and a role definition that grants a right on one.
func (s *Service) PersonalContacts(ctx context.Context, owner string, orgID int64, f ContactFilter, lq store.ListQuery, after int64) ([]PersonalContact, bool, error) {
	if err := s.CheckService(ctx, owner, f.Service); err != nil {
		return nil, false, err
	}
	if f.RoleDefinitionCode != "" {
		if err := s.CheckRole(ctx, owner, 0, f.RoleDefinitionCode); err != nil {
			return nil, false, err
		}
	}
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
	where, tail, more, err := store.ListClauses(lq, PersonalContactFields, store.Keyset("pc.id", after), len(args)+1)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, s.q, `SELECT pc.id, pc.name, pc.ssn, COALESCE(pc.mobile_number, ''), pc.mobile_number_changed,
		COALESCE(pc.email_address, ''), pc.email_address_changed
		FROM parties pc
		WHERE pc.kind = 'Person' AND pc.id IN (SELECT ro.holder_party_id FROM roles ro WHERE ro.reportee_id = $1`+cond+`)
		AND `+where+tail, append(args, more...), lq.Limit, pgx.RowToStructByPos[PersonalContact])
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
	Service          store.ServiceFilter
}

// ReporteesSQL is the one statement behind Reportees; exported for the
// benchmark. In the default order the roles of the subject are walked along roles_party_holder from the
// key after, so a page costs the same wherever it starts.
func ReporteesSQL(rq ReporteeQuery, lq store.ListQuery, after int64) (string, []any, error) {
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
	where, tail, more, err := store.ListClauses(lq, ServiceOwnerReporteeFields, store.ListOrder{ByDefault: "r.rid", TieBreaker: "p.id"}, len(args)+1)
	if err != nil {
		return "", nil, err
	}
	sql := identity.PartySelect + `
		JOIN (SELECT DISTINCT ro.reportee_id AS rid FROM roles ro
				WHERE ro.holder_party_id = $1 AND ro.reportee_id > $2 AND ro.reportee_id <> $3` + cond + `
			UNION ALL SELECT $3::bigint WHERE $3::bigint > $2) r ON r.rid = p.id
		WHERE p.id > $2 AND ` + where + tail
	return sql, append(args, more...), nil
}

// Reportees lists the parties subject can represent, narrowed by f to the owner's service or role, by
// party id.
func (s *Service) Reportees(ctx context.Context, owner string, subject identity.Party, f ReporteeFilter, lq store.ListQuery, after int64) ([]identity.Party, bool, error) {
	rq, err := s.reporteeQuery(ctx, owner, subject, f)
	if err != nil {
		return nil, false, err
	}
	return store.BuiltPage(ctx, s.q, lq.Limit, func(r pgx.CollectableRow) (identity.Party, error) { return identity.ScanParty(r) })(
		ReporteesSQL(rq, lq, after))
}
