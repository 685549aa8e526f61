package store

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
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

// ServiceColumns are a Service's columns of services s joined with service_owners o, in ScanService's order.
const ServiceColumns = `s.service_owner_code, o.name, s.service_name, s.service_code, s.service_edition,
	s.valid_from, s.valid_to, s.service_type`

// ScanService reads a row of ServiceColumns into s, and extra after them.
func ScanService(row pgx.Row, s *Service, extra ...any) error {
	return row.Scan(append([]any{&s.ServiceOwnerCode, &s.ServiceOwnerName, &s.ServiceName, &s.ServiceCode,
		&s.ServiceEdition, &s.ValidFrom, &s.ValidTo, &s.ServiceType}, extra...)...)
}

// ServiceDetailSQL reads a service edition with its steps, forms and attachment rules in one round trip.
const ServiceDetailSQL = `SELECT ` + ServiceColumns + `, s.rest_enabled, s.eus_enabled, s.enterprise_user_enabled,
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
	err := ScanServiceDetail(q.db.QueryRow(ctx, ServiceDetailSQL, code, edition), &d)
	return d, err
}

// ScanServiceDetail scans a row of ServiceDetailSQL; ErrNotFound for none.
func ScanServiceDetail(row pgx.Row, d *ServiceDetail) error {
	return NotFound(ScanService(row, &d.Service,
		&d.RestEnabled, &d.EUSEnabled, &d.EnterpriseUserEnabled, &d.ProcessSteps, &d.Forms, &d.AttachmentRules, &d.SigningTexts,
		&d.SigningSteps, &d.SigningDeadlineDays))
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
