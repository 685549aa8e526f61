package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store/odatasql"
)

// The service-owner area: what agencies may read about the parties of their services. Every list pages
// either by $skip (OFFSET) or, in its default order, by keyset (see Keyset): after is the key of the last
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
	return o, NotFound(err)
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
	return key, NotFound(err)
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

// OrganizationColumns are an Organization's columns of parties p, in ScanOrganization's order.
const OrganizationColumns = `p.id, p.name, p.organization_number, COALESCE(p.organization_form, ''), p.last_changed, p.last_confirmed`

// ScanOrganization reads a row of OrganizationColumns.
func ScanOrganization(row pgx.Row) (Organization, error) {
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

// GetOrganization returns an organization by party id.
func (q *Queries) GetOrganization(ctx context.Context, id int64) (Organization, error) {
	o, err := ScanOrganization(q.db.QueryRow(ctx, `SELECT `+OrganizationColumns+` FROM parties p
		WHERE p.id = $1 AND p.kind = 'Organization'`, id))
	return o, NotFound(err)
}
