package metadata

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
)

// The catalog's SQL. The service editions' rows (store.ServiceColumns, store.GetService) are read in
// store: the form task room reads a service with the revision it checks, in one round trip.

// CodeList identifies one language and version of a named code list.
type CodeList struct {
	Name     string
	Version  int
	Language int
}

// Code is one entry of a code list.
type Code struct {
	Code   string
	Value1 string
	Value2 string
	Value3 string
}

// ServiceFields are the fields of a service list entry that clients can filter and order on.
var ServiceFields = odatasql.Fields{
	"ServiceOwnerCode":   {Column: "s.service_owner_code", Kind: odatasql.String},
	"ServiceOwnerName":   {Column: "o.name", Kind: odatasql.String},
	"ServiceName":        {Column: "s.service_name", Kind: odatasql.String},
	"ServiceCode":        {Column: "s.service_code", Kind: odatasql.String},
	"ServiceEditionCode": {Column: "s.service_edition", Kind: odatasql.Int},
	"ValidFrom":          {Column: "s.valid_from", Kind: odatasql.DateTime},
	"ValidTo":            {Column: "s.valid_to", Kind: odatasql.DateTime},
	"ServiceType":        {Column: "s.service_type", Kind: odatasql.String},
}

// listServices lists service editions, by default ordered by code and edition; more is true when rows
// follow the page.
func listServices(ctx context.Context, q *store.Queries, lq store.ListQuery) (services []store.Service, more bool, err error) {
	const key = "s.service_code, s.service_edition"
	where, tail, args, err := store.ListClauses(lq, ServiceFields, store.ListOrder{ByDefault: key, TieBreaker: key}, 1)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q, `SELECT `+store.ServiceColumns+`
		FROM services s JOIN service_owners o ON o.code = s.service_owner_code
		WHERE `+where+tail, args, lq.Limit, func(row pgx.CollectableRow) (store.Service, error) {
		var s store.Service
		return s, store.ScanService(row, &s)
	})
}

// formSchema returns the XSD of a form's data model, when that form belongs to the service edition.
func formSchema(ctx context.Context, db store.DBTX, code string, edition int, dataFormatID string, dataFormatVersion int) (string, error) {
	var content string
	err := db.QueryRow(ctx, `SELECT x.content
		FROM form_metadata f JOIN xsd_schemas x USING (data_format_id, data_format_version)
		WHERE f.service_code = $1 AND f.service_edition = $2 AND f.data_format_id = $3 AND f.data_format_version = $4`,
		code, edition, dataFormatID, dataFormatVersion).Scan(&content)
	return content, store.NotFound(err)
}

// AttachmentRuleSchema returns the XSD attachments of a rule of the service edition must be valid
// against; store.ErrNotFound when there is no such rule or it requires no XSD validation.
func AttachmentRuleSchema(ctx context.Context, db store.DBTX, code string, edition, ruleID int) (string, error) {
	var content string
	err := db.QueryRow(ctx, `SELECT xsd FROM attachment_rules
		WHERE service_code = $1 AND service_edition = $2 AND attachment_rule_id = $3 AND is_xsd_validation_required AND xsd IS NOT NULL`,
		code, edition, ruleID).Scan(&content)
	return content, store.NotFound(err)
}

// CodeListFields are the fields of a code list entry that clients can filter and order on.
var CodeListFields = odatasql.Fields{
	"Name":     {Column: "name", Kind: odatasql.String},
	"Version":  {Column: "version", Kind: odatasql.Int},
	"Language": {Column: "language", Kind: odatasql.Int},
}

// listCodeLists lists code lists, in one language when language is not zero.
func listCodeLists(ctx context.Context, q *store.Queries, language int, lq store.ListQuery) ([]CodeList, bool, error) {
	const key = "name, version, language"
	where, tail, args, err := store.ListClauses(lq, CodeListFields, store.ListOrder{ByDefault: key, TieBreaker: key}, 2)
	if err != nil {
		return nil, false, err
	}
	return store.QueryPage(ctx, q, `SELECT name, version, language FROM code_lists
		WHERE ($1 = 0 OR language = $1) AND `+where+tail, append([]any{language}, args...), lq.Limit, pgx.RowToStructByPos[CodeList])
}

// codeList returns the codes of one version of a code list in a language. With language zero it picks
// bokmål when the list has it, else the lowest language id, and reports which one it chose.
func codeList(ctx context.Context, db store.DBTX, name string, version, language int) (CodeList, []Code, error) {
	var (
		list  CodeList
		codes []Code
	)
	err := db.QueryRow(ctx, `SELECT name, version, language, codes FROM code_lists
		WHERE name = $1 AND version = $2 AND ($3 = 0 OR language = $3)
		ORDER BY language <> 1044, language
		LIMIT 1`, name, version, language).Scan(&list.Name, &list.Version, &list.Language, &codes)
	return list, codes, store.NotFound(err)
}
