package identity

import (
	"context"
	"regexp"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// Store is the identity room's SQL — parties, the rights their roles grant, whom a subject may represent —
// over the connection of q, a pool or a transaction.
type Store struct {
	*store.Queries
}

// NewStore returns the identity statements over q.
func NewStore(q *store.Queries) Store { return Store{q} }

// OrganizationNumberPattern matches an organization number: nine digits.
var OrganizationNumberPattern = regexp.MustCompile(`^[0-9]{9}$`)

// Party is a person or an organization.
type Party struct {
	ID                       int64
	Kind                     string // Person or Organization
	SSN                      string
	OrganizationNumber       string
	Name                     string
	LastName                 string
	OrganizationForm         string
	ParentOrganizationNumber string
	Status                   string
}

// PartySelect selects a Party's columns (ScanParty's order) from parties p.
const PartySelect = `SELECT id, kind, COALESCE(ssn, ''), COALESCE(organization_number, ''), name, COALESCE(last_name, ''),
	COALESCE(organization_form, ''), COALESCE(parent_organization_number, ''), COALESCE(status, '') FROM parties p`

// ScanParty reads a row of PartySelect.
func ScanParty(row pgx.Row) (Party, error) {
	var p Party
	err := row.Scan(&p.ID, &p.Kind, &p.SSN, &p.OrganizationNumber, &p.Name, &p.LastName, &p.OrganizationForm,
		&p.ParentOrganizationNumber, &p.Status)
	return p, err
}

// GetParty returns a party by id.
func (q Store) GetParty(ctx context.Context, id int64) (Party, error) {
	p, err := ScanParty(q.DB().QueryRow(ctx, PartySelect+` WHERE id = $1`, id))
	return p, store.NotFound(err)
}

// FindParty returns the party with the national identity number or organization number key.
func (q Store) FindParty(ctx context.Context, key string) (Party, error) {
	p, err := ScanParty(q.DB().QueryRow(ctx, PartySelect+` WHERE ssn = $1 OR organization_number = $1`, key))
	return p, store.NotFound(err)
}

// RoleRight is one right granted by one of a subject's roles for a reportee. A role with no rights
// (such as access manager) yields one row with an empty ServiceCode.
type RoleRight struct {
	RoleDefinitionID   int
	RoleDefinitionCode string
	ServiceCode        string
	ServiceEdition     int
	Action             string
}

// roleRightsSQL is the one indexed query behind effective rights.
const roleRightsSQL = `SELECT d.id, COALESCE(d.role_definition_code, ''), COALESCE(r.service_code, ''), COALESCE(r.service_edition, 0), COALESCE(r.action, '')
	FROM roles ro
	JOIN role_definitions d ON d.id = ro.role_definition_id
	LEFT JOIN role_definition_rights r ON r.role_definition_id = d.id
	WHERE ` + store.HeldBySubjectSQL

// RoleRights lists what the subject's roles for a reportee grant.
func (q Store) RoleRights(ctx context.Context, s store.Subject, reporteeID int64) ([]RoleRight, error) {
	rows, err := q.DB().Query(ctx, roleRightsSQL, reporteeID, s.PartyID, s.LoginID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[RoleRight])
}

// ReporteeFields are the fields of a reportee that clients can filter and order on.
var ReporteeFields = odatasql.Fields{
	"Name":                 {Column: "p.name", Kind: odatasql.String},
	"Type":                 {Column: "CASE p.kind WHEN 'Person' THEN 'Person' ELSE 'Foretak' END", Kind: odatasql.String},
	"OrganizationNumber":   {Column: "p.organization_number", Kind: odatasql.String},
	"SocialSecurityNumber": {Column: "p.ssn", Kind: odatasql.String},
	"Status":               {Column: "p.status", Kind: odatasql.String},
}

// ListReportees lists the parties a subject may represent: selfID (when not zero) and every party it
// holds a role for, the subject itself first and then by name. A service narrows the list to the parties
// where one of the subject's roles grants a right on it, and the subject itself when the service exists
// (a person has every right for themself).
func (q Store) ListReportees(ctx context.Context, s store.Subject, selfID int64, service store.ServiceFilter, lq store.ListQuery) ([]Party, bool, error) {
	args := []any{s.PartyID, s.LoginID, selfID}
	self, role := "", ""
	if service.Code != "" {
		args = append(args, service.Code, service.Edition)
		self = ` AND EXISTS (SELECT 1 FROM services WHERE service_code = $4 AND ($5 = 0 OR service_edition = $5))`
		role = " AND " + store.GrantsServiceSQL("ro.role_definition_id", 4)
	}
	where, tail, more, err := store.ListClauses(lq, ReporteeFields, store.ListOrder{ByDefault: "p.id = $3 DESC, p.name, p.id", TieBreaker: "p.id"}, len(args)+1)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q.Queries, PartySelect+`
		WHERE ((p.id = $3`+self+`) OR EXISTS (SELECT 1 FROM roles ro WHERE ro.reportee_id = p.id AND (ro.holder_party_id = $1 OR ro.holder_login_id = $2)`+role+`))
		AND `+where+tail, append(args, more...), lq.Limit,
		func(row pgx.CollectableRow) (Party, error) { return ScanParty(row) })
}

// HoldsRoleFor tells whether the subject holds at least one role for the reportee.
func (q Store) HoldsRoleFor(ctx context.Context, s store.Subject, reporteeID int64) (bool, error) {
	var ok bool
	err := q.DB().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM roles WHERE reportee_id = $1 AND (holder_party_id = $2 OR holder_login_id = $3))`,
		reporteeID, s.PartyID, s.LoginID).Scan(&ok)
	return ok, err
}

// ListRepresentedOrganizations lists the organizations a subject may represent, as ListReportees finds
// them (selfID, when an organization, and every organization it holds a role for), by name.
func (q Store) ListRepresentedOrganizations(ctx context.Context, s store.Subject, selfID int64, lq store.ListQuery) ([]store.Organization, bool, error) {
	where, tail, more, err := store.ListClauses(lq, store.OrganizationFields, store.ListOrder{ByDefault: "p.name, p.id", TieBreaker: "p.id"}, 4)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q.Queries, `SELECT `+store.OrganizationColumns+` FROM parties p
		WHERE p.kind = 'Organization' AND (p.id = $3 OR EXISTS (SELECT 1 FROM roles ro WHERE ro.reportee_id = p.id
			AND (ro.holder_party_id = $1 OR ro.holder_login_id = $2)))
		AND `+where+tail, append([]any{s.PartyID, s.LoginID, selfID}, more...), lq.Limit,
		func(r pgx.CollectableRow) (store.Organization, error) { return store.ScanOrganization(r) })
}
