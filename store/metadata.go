package store

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store/odatasql"
)

// Service is a service edition as listed in the open metadata.
type Service struct {
	ServiceOwnerCode string
	ServiceOwnerName string
	ServiceName      string
	ServiceCode      string
	ServiceEdition   int
	ValidFrom        time.Time
	ValidTo          time.Time
	ServiceType      string
}

// ServiceDetail is a service edition with everything a client needs to fill it in.
type ServiceDetail struct {
	Service
	RestEnabled           bool
	EUSEnabled            bool
	EnterpriseUserEnabled bool
	ProcessSteps          []ProcessStep
	Forms                 []FormMeta
	AttachmentRules       []AttachmentRule
	// SigningTexts are the service's own texts a signer confirms, by language id ("1044"); see SigningText.
	SigningTexts map[string]string
	// SigningSteps are the service's signing, in order; none: one signature by anyone with Sign, unless the
	// task names signees (then one step of TaskSignees, every one of them).
	SigningSteps []SigningStep
	// SigningDeadlineDays, when set, is how long a completed task may wait for its signatures before
	// formtask.signing.overdue.
	SigningDeadlineDays int
}

// Rules of a signing step: who may sign in it.
const (
	SigneesOfTask  = "TaskSignees" // the persons and organizations named on the task
	SigneesByRole  = "Role"        // the holders of RoleDefinitionCode for the task's party
	SigneesByRight = "Right"       // the holders of the Sign right on the service for the task's party
	// SigneesOrganization: the organization OrganizationNumber names, signing for itself through its main
	// administrator or someone with the Sign right on the service for it (the auditor of annual accounts).
	// A person is never named here: the metadata is open, and an identity number is not; a person is named
	// on the task (TaskSignees).
	SigneesOrganization = "Organization"
)

// SigningStep is one step of a form task's signing: signatures from signees its rule (Signees) admits,
// MinCount of them; 0 means every named signee for TaskSignees, and one for Role and Right.
type SigningStep struct {
	Signees            string
	RoleDefinitionCode string `json:",omitempty"`
	OrganizationNumber string `json:",omitempty"`
	MinCount           int    `json:",omitempty"`
}

// ProcessStep is one step of a form task with the security level it needs.
type ProcessStep struct {
	Name          string
	SecurityLevel int
}

// FormMeta describes one form of a service and its data model.
type FormMeta struct {
	FormID                 int
	FormName               string
	DataFormatProviderType string
	DataFormatID           string
	DataFormatVersion      int
	IsOnlyXsdValidation    bool
	FormType               string
}

// AttachmentRule limits the attachments of one attachment type.
type AttachmentRule struct {
	AttachmentRuleID           int `json:"AttachmentRuleId"`
	AllowedFileTypes           string
	AttachmentTypeName         string
	AttachmentTypeNameLanguage string
	IsCheckSumAllowed          bool
	IsXsdValidationRequired    bool
	MaxAttachmentCount         int
	MinAttachmentCount         int
	MaxFileSize                int64
}

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

const serviceColumns = `s.service_owner_code, o.name, s.service_name, s.service_code, s.service_edition,
	s.valid_from, s.valid_to, s.service_type`

func scanService(row pgx.Row, s *Service, extra ...any) error {
	return row.Scan(append([]any{&s.ServiceOwnerCode, &s.ServiceOwnerName, &s.ServiceName, &s.ServiceCode,
		&s.ServiceEdition, &s.ValidFrom, &s.ValidTo, &s.ServiceType}, extra...)...)
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

// ListServices lists service editions, by default ordered by code and edition; more is true when rows
// follow the page.
func (q *Queries) ListServices(ctx context.Context, lq ListQuery) (services []Service, more bool, err error) {
	const key = "s.service_code, s.service_edition"
	where, tail, args, err := ListClauses(lq, ServiceFields, ListOrder{ByDefault: key, TieBreaker: key}, 1)
	if err != nil {
		return nil, false, err
	}
	return QueryPage(ctx, q, `SELECT `+serviceColumns+`
		FROM services s JOIN service_owners o ON o.code = s.service_owner_code
		WHERE `+where+tail, args, lq.Limit, func(row pgx.CollectableRow) (Service, error) {
		var s Service
		return s, scanService(row, &s)
	})
}

// serviceDetailSQL reads a service edition with its steps, forms and attachment rules in one round trip.
const serviceDetailSQL = `SELECT ` + serviceColumns + `, s.rest_enabled, s.eus_enabled, s.enterprise_user_enabled,
	COALESCE((SELECT json_agg(json_build_object('Name', p.name, 'SecurityLevel', p.security_level) ORDER BY p.ordinal)
		FROM process_steps p WHERE p.service_code = s.service_code AND p.service_edition = s.service_edition), '[]'),
	COALESCE((SELECT json_agg(json_build_object('FormID', f.form_id, 'FormName', f.form_name,
			'DataFormatProviderType', f.data_format_provider_type, 'DataFormatID', f.data_format_id,
			'DataFormatVersion', f.data_format_version, 'IsOnlyXsdValidation', f.is_only_xsd_validation,
			'FormType', f.form_type) ORDER BY f.form_id)
		FROM form_metadata f WHERE f.service_code = s.service_code AND f.service_edition = s.service_edition), '[]'),
	COALESCE((SELECT json_agg(json_build_object('AttachmentRuleID', r.attachment_rule_id,
			'AllowedFileTypes', r.allowed_file_types, 'AttachmentTypeName', r.attachment_type_name,
			'AttachmentTypeNameLanguage', r.attachment_type_name_language, 'IsCheckSumAllowed', r.is_check_sum_allowed,
			'IsXsdValidationRequired', r.is_xsd_validation_required, 'MaxAttachmentCount', r.max_attachment_count,
			'MinAttachmentCount', r.min_attachment_count, 'MaxFileSize', r.max_file_size) ORDER BY r.attachment_rule_id)
		FROM attachment_rules r WHERE r.service_code = s.service_code AND r.service_edition = s.service_edition), '[]'),
	COALESCE(s.signing_texts, '{}'), COALESCE(s.signing_steps, '[]'), COALESCE(s.signing_deadline_days, 0)
	FROM services s JOIN service_owners o ON o.code = s.service_owner_code
	WHERE s.service_code = $1 AND s.service_edition = $2`

// GetService returns one service edition with its details, or ErrNotFound.
func (q *Queries) GetService(ctx context.Context, code string, edition int) (ServiceDetail, error) {
	var d ServiceDetail
	err := scanServiceDetail(q.db.QueryRow(ctx, serviceDetailSQL, code, edition), &d)
	return d, err
}

// scanServiceDetail scans a row of serviceDetailSQL; ErrNotFound for none.
func scanServiceDetail(row pgx.Row, d *ServiceDetail) error {
	return NotFound(scanService(row, &d.Service,
		&d.RestEnabled, &d.EUSEnabled, &d.EnterpriseUserEnabled, &d.ProcessSteps, &d.Forms, &d.AttachmentRules, &d.SigningTexts,
		&d.SigningSteps, &d.SigningDeadlineDays))
}

// GetFormSchema returns the XSD of a form's data model, when that form belongs to the service edition.
func (q *Queries) GetFormSchema(ctx context.Context, code string, edition int, dataFormatID string, dataFormatVersion int) (string, error) {
	var content string
	err := q.db.QueryRow(ctx, `SELECT x.content
		FROM form_metadata f JOIN xsd_schemas x USING (data_format_id, data_format_version)
		WHERE f.service_code = $1 AND f.service_edition = $2 AND f.data_format_id = $3 AND f.data_format_version = $4`,
		code, edition, dataFormatID, dataFormatVersion).Scan(&content)
	return content, NotFound(err)
}

// GetAttachmentRuleSchema returns the XSD attachments of a rule of the service edition must be valid
// against; ErrNotFound when there is no such rule or it requires no XSD validation.
func (q *Queries) GetAttachmentRuleSchema(ctx context.Context, code string, edition, ruleID int) (string, error) {
	var content string
	err := q.db.QueryRow(ctx, `SELECT xsd FROM attachment_rules
		WHERE service_code = $1 AND service_edition = $2 AND attachment_rule_id = $3 AND is_xsd_validation_required AND xsd IS NOT NULL`,
		code, edition, ruleID).Scan(&content)
	return content, NotFound(err)
}

// CodeListFields are the fields of a code list entry that clients can filter and order on.
var CodeListFields = odatasql.Fields{
	"Name":     {Column: "name", Kind: odatasql.String},
	"Version":  {Column: "version", Kind: odatasql.Int},
	"Language": {Column: "language", Kind: odatasql.Int},
}

// ListCodeLists lists code lists, in one language when language is not zero.
func (q *Queries) ListCodeLists(ctx context.Context, language int, lq ListQuery) ([]CodeList, bool, error) {
	const key = "name, version, language"
	where, tail, args, err := ListClauses(lq, CodeListFields, ListOrder{ByDefault: key, TieBreaker: key}, 2)
	if err != nil {
		return nil, false, err
	}
	return QueryPage(ctx, q, `SELECT name, version, language FROM code_lists
		WHERE ($1 = 0 OR language = $1) AND `+where+tail, append([]any{language}, args...), lq.Limit, pgx.RowToStructByPos[CodeList])
}

// GetCodeList returns the codes of one version of a code list in a language. With language zero it picks
// bokmål when the list has it, else the lowest language id, and reports which one it chose.
func (q *Queries) GetCodeList(ctx context.Context, name string, version, language int) (CodeList, []Code, error) {
	var (
		list  CodeList
		codes []Code
	)
	err := q.db.QueryRow(ctx, `SELECT name, version, language, codes FROM code_lists
		WHERE name = $1 AND version = $2 AND ($3 = 0 OR language = $3)
		ORDER BY language <> 1044, language
		LIMIT 1`, name, version, language).Scan(&list.Name, &list.Version, &list.Language, &codes)
	return list, codes, NotFound(err)
}

// RuleFor returns the rule of an attachment type.
func RuleFor(rules []AttachmentRule, attachmentType string) (AttachmentRule, bool) {
	for _, r := range rules {
		if r.AttachmentTypeName == attachmentType {
			return r, true
		}
	}
	return AttachmentRule{}, false
}

// AllowsFile matches a file name against AllowedFileTypes: extensions ("pdf", ".pdf") or glob patterns
// ("*.png"), separated by "," or ";", case-insensitively.
func (r AttachmentRule) AllowsFile(fileName string) bool {
	name := strings.ToLower(fileName)
	for _, p := range strings.FieldsFunc(strings.ToLower(r.AllowedFileTypes), func(c rune) bool { return c == ',' || c == ';' }) {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
		case strings.ContainsAny(p, "*?["):
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		case strings.HasSuffix(name, "."+strings.TrimPrefix(p, ".")):
			return true
		}
	}
	return false
}

// RoleRequirements lists, by id, the platform role definitions that grant a right on the service edition,
// each with the rights it grants on it. Local roles are their reportees' own and are not shown.
func (q *Queries) RoleRequirements(ctx context.Context, service ServiceKey, lq ListQuery) ([]RoleDefinition, bool, error) {
	where, tail, args, err := ListClauses(lq, RoleDefinitionFields, ListOrder{ByDefault: "d.id", TieBreaker: "d.id"}, 3)
	if err != nil {
		return nil, false, err
	}
	defs, more, err := QueryPage(ctx, q, `SELECT `+roleDefinitionColumns+` FROM role_definitions d
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
	rows, err := q.db.Query(ctx, `SELECT x.role_definition_id, `+rightColumns+` FROM role_definition_rights x
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
