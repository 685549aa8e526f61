// Writing a checked dataset: upserts in one transaction, so an import is idempotent.

package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/identity/password"
	"github.com/postbox/postbox/metadata"
	"github.com/postbox/postbox/store"
)

func (ds *dataset) write(ctx context.Context, tx pgx.Tx, xsds map[xsdKey]string, fs *files.Service) error {
	for _, o := range ds.ServiceOwners {
		if _, err := tx.Exec(ctx, `INSERT INTO service_owners (code, name, organization_number) VALUES ($1, $2, $3)
			ON CONFLICT (code) `+updateChanged("service_owners", "name, organization_number"),
			o.Code, o.Name, o.OrganizationNumber); err != nil {
			return fmt.Errorf("service owner %s: %w", o.Code, err)
		}
	}
	for _, k := range ds.ApiKeys {
		hash := sha256.Sum256([]byte(k.Key))
		origins := k.Origins
		if origins == nil {
			origins = []string{}
		}
		limits := k.RateLimits
		if limits == nil {
			limits = map[string]int{}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO api_keys (key_hash, name, areas, origins, service_owner_code, rate_limits)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (key_hash) `+updateChanged("api_keys", "name, areas, origins, service_owner_code, rate_limits"),
			hash[:], k.Name, k.Areas, origins, k.ServiceOwnerCode, limits); err != nil {
			return fmt.Errorf("api key %s: %w", k.Name, err)
		}
	}
	partyIDs := map[string]int64{}
	for _, o := range ds.Organizations {
		c := o.OfficialContact
		id, err := upsertParty(ctx, tx, "organization_number", o.OrganizationNumber, []any{
			"Organization", nil, o.OrganizationNumber, o.Name, nil, o.Type, o.ParentOrganizationNumber, o.Status,
			c.MobileNumber, c.EMailAddress, c.MobileNumberChanged.ptr(), c.EMailAddressChanged.ptr(),
			o.LastChanged.ptr(), o.LastConfirmed.ptr(),
		})
		if err != nil {
			return fmt.Errorf("organization %s: %w", o.OrganizationNumber, err)
		}
		partyIDs[o.OrganizationNumber] = id
	}
	loginIDs := map[string]int64{}
	for _, p := range ds.Persons {
		id, err := upsertParty(ctx, tx, "ssn", p.SocialSecurityNumber, []any{
			"Person", p.SocialSecurityNumber, nil, p.Name, p.LastName, nil, nil, nil,
			p.MobileNumber, p.EMailAddress, nil, nil, nil, nil,
		})
		if err != nil {
			return fmt.Errorf("person %s: %w", p.UserName, err)
		}
		partyIDs[p.SocialSecurityNumber] = id
		if _, err := upsertLogin(ctx, tx, "Person", p.UserName, p.Password, &id, nil); err != nil {
			return fmt.Errorf("login %s: %w", p.UserName, err)
		}
	}
	for _, u := range ds.EnterpriseUsers {
		org := partyIDs[u.OrganizationNumber]
		id, err := upsertLogin(ctx, tx, "EnterpriseUser", u.UserName, u.Password, nil, &org)
		if err != nil {
			return fmt.Errorf("enterprise user %s: %w", u.UserName, err)
		}
		loginIDs[strings.ToLower(u.UserName)] = id
	}
	for key, content := range xsds {
		if _, err := tx.Exec(ctx, `INSERT INTO xsd_schemas (data_format_id, data_format_version, content) VALUES ($1, $2, $3)
			ON CONFLICT (data_format_id, data_format_version) `+updateChanged("xsd_schemas", "content"), key.id, key.version, content); err != nil {
			return fmt.Errorf("schema %s/%d: %w", key.id, key.version, err)
		}
	}
	for _, s := range ds.Services {
		if err := writeService(ctx, tx, s); err != nil {
			return fmt.Errorf("service %s/%d: %w", s.ServiceCode, s.ServiceEditionCode, err)
		}
	}
	for _, c := range ds.CodeLists {
		codes := c.Codes
		if codes == nil {
			codes = []metadata.Code{}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO code_lists (name, version, language, codes) VALUES ($1, $2, $3, $4)
			ON CONFLICT (name, version, language) `+updateChanged("code_lists", "codes"), c.Name, c.Version, c.Language, codes); err != nil {
			return fmt.Errorf("code list %s/%d/%d: %w", c.Name, c.Version, c.Language, err)
		}
	}
	for _, d := range ds.RoleDefinitions {
		if err := writeRoleDefinition(ctx, tx, d); err != nil {
			return fmt.Errorf("role definition %d: %w", d.RoleDefinitionID, err)
		}
	}
	for _, r := range ds.Roles {
		var holderParty, holderLogin *int64
		if id, ok := partyIDs[r.Subject]; ok {
			holderParty = &id
		} else {
			id := loginIDs[strings.ToLower(r.Subject)]
			holderLogin = &id
		}
		if _, err := tx.Exec(ctx, `INSERT INTO roles (id, holder_party_id, holder_login_id, reportee_id, role_definition_id, delegator, delegated_time)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
			r.RoleID, holderParty, holderLogin, partyIDs[r.Reportee], r.RoleDefinitionID, r.Delegator, r.DelegatedTime.Time); err != nil {
			return fmt.Errorf("role %d: %w", r.RoleID, err)
		}
	}
	for _, m := range ds.Messages {
		if err := insertMessage(ctx, tx, fs.In(tx), m, partyIDs[m.Reportee]); err != nil {
			return fmt.Errorf("message %s: %w", m.MessageID, err)
		}
	}
	return nil
}

const partyColumns = `kind, ssn, organization_number, name, last_name, organization_form, parent_organization_number, status,
	mobile_number, email_address, mobile_number_changed, email_address_changed, last_changed, last_confirmed`

func upsertParty(ctx context.Context, tx pgx.Tx, keyColumn, key string, values []any) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO parties (`+partyColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (`+keyColumn+`) `+updateChanged("parties", partyColumns)+`
		RETURNING id`, values...).Scan(&id)
	if err == pgx.ErrNoRows { // the row exists and is already up to date
		err = tx.QueryRow(ctx, `SELECT id FROM parties WHERE `+keyColumn+` = $1`, key).Scan(&id)
	}
	return id, err
}

// upsertLogin keeps a stored hash that still matches the password, so a re-import changes nothing.
func upsertLogin(ctx context.Context, tx pgx.Tx, kind, userName, pw string, personID, orgID *int64) (int64, error) {
	var (
		id   int64
		hash string
	)
	err := tx.QueryRow(ctx, `SELECT id, password_hash FROM logins WHERE lower(user_name) = lower($1)`, userName).Scan(&id, &hash)
	if err != nil && err != pgx.ErrNoRows {
		return 0, err
	}
	if err == nil {
		if ok, _ := password.Verify(hash, pw); ok {
			_, err := tx.Exec(ctx, `UPDATE logins SET kind = $2, user_name = $3, person_id = $4, organization_id = $5 WHERE id = $1
				AND (kind, user_name, person_id, organization_id) IS DISTINCT FROM ($2, $3, $4, $5)`, id, kind, userName, personID, orgID)
			return id, err
		}
	}
	if hash, err = password.Hash(pw); err != nil {
		return 0, err
	}
	err = tx.QueryRow(ctx, `INSERT INTO logins (kind, user_name, password_hash, person_id, organization_id) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (lower(user_name)) DO UPDATE SET kind = EXCLUDED.kind, user_name = EXCLUDED.user_name,
			password_hash = EXCLUDED.password_hash, person_id = EXCLUDED.person_id, organization_id = EXCLUDED.organization_id
		RETURNING id`, kind, userName, hash, personID, orgID).Scan(&id)
	return id, err
}

func writeService(ctx context.Context, tx pgx.Tx, s dsService) error {
	code, ed := s.ServiceCode, s.ServiceEditionCode
	if _, err := tx.Exec(ctx, `INSERT INTO services (service_code, service_edition, service_owner_code, service_name, service_type,
			valid_from, valid_to, rest_enabled, eus_enabled, enterprise_user_enabled, signing_texts, signing_steps, signing_deadline_days)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULLIF($13, 0))
		ON CONFLICT (service_code, service_edition) `+updateChanged("services", "service_owner_code, service_name, service_type, valid_from, valid_to, rest_enabled, eus_enabled, enterprise_user_enabled, signing_texts, signing_steps, signing_deadline_days"),
		code, ed, s.ServiceOwnerCode, s.ServiceName, s.ServiceType, s.ValidFrom.Time, s.ValidTo.Time,
		s.RestEnabled, s.EUSEnabled, s.EnterpriseUserEnabled, jsonOrNull(len(s.SigningTexts), s.SigningTexts),
		jsonOrNull(len(s.SigningSteps), s.SigningSteps), s.SigningDeadlineDays); err != nil {
		return err
	}
	for i, p := range s.ProcessSteps {
		if _, err := tx.Exec(ctx, `INSERT INTO process_steps (service_code, service_edition, ordinal, name, security_level)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (service_code, service_edition, ordinal) `+updateChanged("process_steps", "name, security_level"),
			code, ed, i, p.Name, p.SecurityLevel); err != nil {
			return err
		}
	}
	for _, f := range s.FormsMetaData {
		if _, err := tx.Exec(ctx, `INSERT INTO form_metadata (service_code, service_edition, form_id, form_name,
				data_format_provider_type, data_format_id, data_format_version, is_only_xsd_validation, form_type)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (service_code, service_edition, form_id) `+updateChanged("form_metadata", "form_name, data_format_provider_type, data_format_id, data_format_version, is_only_xsd_validation, form_type"),
			code, ed, f.FormID, f.FormName, f.DataFormatProviderType, f.DataFormatID, f.DataFormatVersion,
			f.IsOnlyXsdValidation, f.FormType); err != nil {
			return err
		}
	}
	for _, r := range s.AttachmentRules {
		if _, err := tx.Exec(ctx, `INSERT INTO attachment_rules (attachment_rule_id, service_code, service_edition,
				allowed_file_types, attachment_type_name, attachment_type_name_language, is_check_sum_allowed,
				is_xsd_validation_required, max_attachment_count, min_attachment_count, max_file_size, xsd)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULLIF($12, ''))
			ON CONFLICT (attachment_rule_id) `+updateChanged("attachment_rules", `service_code, service_edition, allowed_file_types,
				attachment_type_name, attachment_type_name_language, is_check_sum_allowed, is_xsd_validation_required,
				max_attachment_count, min_attachment_count, max_file_size, xsd`),
			r.AttachmentRuleID, code, ed, r.AllowedFileTypes, r.AttachmentTypeName, r.AttachmentTypeNameLanguage,
			r.IsCheckSumAllowed, r.IsXsdValidationRequired, r.MaxAttachmentCount, r.MinAttachmentCount, r.MaxFileSize, r.xsd); err != nil {
			return err
		}
	}
	return nil
}

func writeRoleDefinition(ctx context.Context, tx pgx.Tx, d dsRoleDefinition) error {
	if _, err := tx.Exec(ctx, `INSERT INTO role_definitions (id, role_type, role_definition_code, role_name, role_description)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) `+updateChanged("role_definitions", "role_type, role_definition_code, role_name, role_description"),
		d.RoleDefinitionID, d.RoleType, d.RoleDefinitionCode, d.RoleName, d.RoleDescription); err != nil {
		return err
	}
	for _, r := range d.Rights {
		if _, err := tx.Exec(ctx, `INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (role_definition_id, service_code, service_edition, action) `+updateChanged("role_definition_rights", "is_delegatable"),
			d.RoleDefinitionID, r.ServiceCode, r.ServiceEditionCode, r.Action, r.IsDelegatable); err != nil {
			return err
		}
	}
	return nil
}

func insertMessage(ctx context.Context, tx pgx.Tx, fs *files.Service, m dsMessage, reporteeID int64) error {
	replyOptions := m.ReplyOptions
	if len(replyOptions) == 0 || bytes.Equal(replyOptions, []byte("null")) {
		replyOptions = json.RawMessage("[]")
	}
	// A message deleted for good (purged_messages) is not imported again.
	tag, err := tx.Exec(ctx, `INSERT INTO messages (id, reportee_id, type, service_code, service_edition, subject, status,
			created_date, last_changed, last_changed_by, archive_reference, message_sender, summary, body, reply_options, language,
			is_confirmation_needed, custom_message_data)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, COALESCE(NULLIF($16, 0), 1044), $17, $18
		WHERE NOT EXISTS (SELECT FROM purged_messages WHERE id = $1)
		ON CONFLICT (id) DO NOTHING`,
		m.MessageID, reporteeID, m.Type, m.ServiceCode, m.ServiceEdition, m.Subject, m.Status,
		m.CreatedDate.Time, m.LastChangedDateTime.Time, m.LastChangedBy, m.ArchiveReference,
		m.MessageSender, m.Summary, m.Body, string(replyOptions), m.Language, m.IsConfirmationNeeded,
		jsonOrNull(len(m.CustomMessageData), m.CustomMessageData))
	if err != nil || tag.RowsAffected() == 0 {
		return err // already imported (the service owns it now) or deleted for good
	}
	for i, f := range m.Forms {
		if _, err := tx.Exec(ctx, `INSERT INTO forms (message_id, ordinal, type, data_format_id, data_format_version, name, form_data)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			m.MessageID, i, f.Type, f.DataFormatID, f.DataFormatVersion, f.Name, f.FormData); err != nil {
			return fmt.Errorf("form %d: %w", i, err)
		}
	}
	for i, a := range m.Attachments {
		data, _ := base64.StdEncoding.DecodeString(a.Data) // checked in validate
		f, err := fs.SaveBytes(ctx, data, "")
		if err != nil {
			return fmt.Errorf("attachment %d: %w", i, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO attachments (message_id, ordinal, name, file_name, attachment_type, content_type,
				encrypted, signing_locked, signed_by_default, file_size, sha256)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			m.MessageID, i, a.Name, a.FileName, a.AttachmentType, store.ContentTypeOf(a.FileName),
			a.Encrypted, a.SigningLocked, a.SignedByDefault, f.Size, f.SHA256); err != nil {
			return fmt.Errorf("attachment %d: %w", i, err)
		}
	}
	return nil
}

// updateChanged is an ON CONFLICT action that sets columns from the new row only where a value differs,
// so that re-importing unchanged data writes no row versions.
// jsonOrNull is the value of a JSON column for a collection v of n elements: NULL when it is empty.
func jsonOrNull(n int, v any) any {
	if n == 0 {
		return nil
	}
	return v
}

func updateChanged(table, columns string) string {
	var set, old, neu []string
	for _, c := range strings.Split(columns, ",") {
		c = strings.TrimSpace(c)
		set = append(set, c+" = EXCLUDED."+c)
		old = append(old, table+"."+c)
		neu = append(neu, "EXCLUDED."+c)
	}
	return "DO UPDATE SET " + strings.Join(set, ", ") +
		" WHERE (" + strings.Join(old, ", ") + ") IS DISTINCT FROM (" + strings.Join(neu, ", ") + ")"
}

// validOrgNumber checks the nine digits and the mod-11 control digit of an organization number.
func validOrgNumber(s string) bool {
	if !identity.OrganizationNumberPattern.MatchString(s) {
		return false
	}
	return mod11(s[:8], []int{3, 2, 7, 6, 5, 4, 3, 2}) == int(s[8]-'0')
}

// validSSN checks the eleven digits and both control digits of a national identity number. Synthetic
// numbers (month + 80) pass, since only the control digits are checked.
func validSSN(s string) bool {
	if !ssnRE.MatchString(s) {
		return false
	}
	return mod11(s[:9], []int{3, 7, 6, 1, 8, 9, 4, 5, 2}) == int(s[9]-'0') &&
		mod11(s[:10], []int{5, 4, 3, 2, 7, 6, 5, 4, 3, 2}) == int(s[10]-'0')
}

// mod11 returns the control digit of digits under weights, or -1 when none exists.
func mod11(digits string, weights []int) int {
	sum := 0
	for i, w := range weights {
		sum += int(digits[i]-'0') * w
	}
	c := 11 - sum%11
	switch c {
	case 11:
		return 0
	case 10:
		return -1
	}
	return c
}
