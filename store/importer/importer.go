// Package importer imports a dataset (the format of deploy/demo/README.md) into the store: `postbox seed`,
// and the template database of the tests.
package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/identity/password"
	"github.com/postbox/postbox/store"
)

// The dataset format of deploy/demo/README.md. Field names are the file's.
type dataset struct {
	ApiKeys         []dsAPIKey
	ServiceOwners   []dsServiceOwner
	Organizations   []dsOrganization
	Persons         []dsPerson
	EnterpriseUsers []dsEnterpriseUser
	RoleDefinitions []dsRoleDefinition
	Roles           []dsRole
	Services        []dsService
	CodeLists       []dsCodeList
	Messages        []dsMessage
}

type dsAPIKey struct {
	Key              string
	Name             string
	Areas            []string
	Origins          []string
	ServiceOwnerCode *string
	// RateLimits are the key's own requests per window by area, over POSTBOX_RATE_LIMIT.
	RateLimits map[string]int
}

type dsServiceOwner struct{ Code, Name, OrganizationNumber string }

type dsOrganization struct {
	OrganizationNumber       string
	Name                     string
	Type                     string
	ParentOrganizationNumber *string
	Status                   string
	OfficialContact          struct {
		MobileNumber, EMailAddress               string
		MobileNumberChanged, EMailAddressChanged *localTime
	}
	LastChanged, LastConfirmed *localTime
}

type dsPerson struct {
	SocialSecurityNumber, Name, LastName, UserName, Password, MobileNumber, EMailAddress string
}

type dsEnterpriseUser struct{ UserName, Password, OrganizationNumber string }

type dsRoleDefinition struct {
	RoleDefinitionID                                        int `json:"RoleDefinitionId"`
	RoleType, RoleDefinitionCode, RoleName, RoleDescription string
	Rights                                                  []struct {
		ServiceCode        string
		ServiceEditionCode int
		Action             string
		IsDelegatable      bool
	}
}

type dsRole struct {
	RoleID           int64 `json:"RoleId"`
	Subject          string
	Reportee         string
	RoleDefinitionID int `json:"RoleDefinitionId"`
	Delegator        string
	DelegatedTime    localTime
}

type dsService struct {
	ServiceOwnerCode                               string
	ServiceCode                                    string
	ServiceEditionCode                             int
	ServiceName, ServiceType                       string
	ValidFrom, ValidTo                             localTime
	RestEnabled, EUSEnabled, EnterpriseUserEnabled bool
	ProcessSteps                                   []store.ProcessStep
	FormsMetaData                                  []struct {
		store.FormMeta
		XsdFile string
	}
	AttachmentRules []struct {
		AttachmentRuleID int `json:"AttachmentRuleId"`
		store.AttachmentRule
		// XsdFile is the schema of a rule with IsXsdValidationRequired (and only of such a rule).
		XsdFile string
		xsd     string // its content, read by readSchemas
	}
	// SigningTexts are the texts a signer confirms, by language id ("1044"); optional.
	SigningTexts map[string]string
}

type dsCodeList struct {
	Name     string
	Version  int
	Language int
	Codes    []store.Code
}

type dsMessage struct {
	MessageID                        string `json:"MessageId"`
	Reportee                         string
	Type                             string
	ServiceCode                      string
	ServiceEdition                   int
	Subject, Status                  string
	ServiceOwnerCode                 string
	CreatedDate, LastChangedDateTime localTime
	LastChangedBy                    string
	ArchiveReference                 *string
	MessageSender, Summary, Body     *string
	Language                         int // optional: 1044 (the default), 2068 or 1033; chooses the search stemming
	ReplyOptions                     json.RawMessage
	IsConfirmationNeeded             bool
	CustomMessageData                []store.CustomData
	Forms                            []struct {
		Type              string
		DataFormatID      string `json:"DataFormatId"`
		DataFormatVersion int
		Name              string
		FormData          string
	}
	Attachments []struct {
		Name, FileName, AttachmentType            string
		Encrypted, SigningLocked, SignedByDefault bool
		Data                                      string
	}
}

// localTime is the dataset's and the interface's timestamp: an ISO 8601 local date-time without zone.
type localTime struct{ time.Time }

func (t *localTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp must be a string like 2025-03-14T09:30:00")
	}
	v, err := time.Parse(clock.LocalTimeLayout, s)
	if err != nil {
		return fmt.Errorf("timestamp %q is not like 2025-03-14T09:30:00", s)
	}
	t.Time = v
	return nil
}

func (t *localTime) ptr() *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

// Error names the record and field of a dataset that cannot be imported.
type Error struct {
	Record string // e.g. `Messages[3] (a3100129)`
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Record, e.Msg)
	}
	return fmt.Sprintf("%s.%s: %s", e.Record, e.Field, e.Msg)
}

// FromFile imports the dataset at path (XSD files are read relative to it) in one transaction.
// Reference data (keys, owners, parties, logins, role definitions, services, code lists) is brought up to
// date; roles and messages are inserted when missing and otherwise left alone, because after import
// they belong to the running service. A second import of the same file changes nothing.
func FromFile(ctx context.Context, pool *pgxpool.Pool, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	ds, err := parseDataset(raw)
	if err != nil {
		return fmt.Errorf("seed %s: %w", path, err)
	}
	xsds, err := ds.readSchemas(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("seed %s: %w", path, err)
	}
	if err := store.InTx(ctx, pool, func(tx pgx.Tx) error { return ds.write(ctx, tx, xsds) }); err != nil {
		return fmt.Errorf("seed %s: %w", path, err)
	}
	return nil
}

func parseDataset(raw []byte) (*dataset, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ds dataset
	if err := dec.Decode(&ds); err != nil {
		return nil, describeJSONError(raw, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the top-level object")
	}
	if err := ds.validate(); err != nil {
		return nil, err
	}
	return &ds, nil
}

// describeJSONError turns a decoder error into one that names the record, so a user can find it.
func describeJSONError(raw []byte, err error) error {
	var offset int64
	switch e := err.(type) {
	case *json.SyntaxError:
		offset = e.Offset
	case *json.UnmarshalTypeError:
		return fmt.Errorf("field %s: %s is not a valid %s (line %d)", e.Field, e.Value, e.Type, lineOf(raw, e.Offset))
	default:
		return fmt.Errorf("%w", err)
	}
	return fmt.Errorf("line %d: %w", lineOf(raw, offset), err)
}

func lineOf(raw []byte, offset int64) int {
	offset = min(offset, int64(len(raw)))
	return bytes.Count(raw[:offset], []byte("\n")) + 1
}

var (
	ssnRE       = regexp.MustCompile(`^[0-9]{11}$`)
	messageIDRE = regexp.MustCompile(`^a[0-9]{1,18}$`)
	knownAreas  = []string{"mailbox", "reportees", "authorization", "roledefinitions", "serviceowner", "metadata"}
	actions     = []string{"Read", "Write", "Delete", "Sign", "ArchiveRead", "ArchiveDelete"}
	languages   = []int{1044, 2068, 1033}
	statuses    = map[string][]string{
		"FormTask":       {taskstatus.Filling, taskstatus.Signing, taskstatus.Archived},
		"Correspondence": {"Ulest", "Lest", "Arkivert"},
	}
)

type serviceKey struct {
	code    string
	edition int
}

func (ds *dataset) validate() error {
	bad := func(record, field, format string, args ...any) error {
		return &Error{Record: record, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	owners := map[string]bool{}
	for i, o := range ds.ServiceOwners {
		rec := fmt.Sprintf("ServiceOwners[%d] (%s)", i, o.Code)
		switch {
		case o.Code == "" || owners[o.Code]:
			return bad(rec, "Code", "must be non-empty and unique")
		case o.Name == "":
			return bad(rec, "Name", "must not be empty")
		case !validOrgNumber(o.OrganizationNumber):
			return bad(rec, "OrganizationNumber", "%q is not a valid organization number", o.OrganizationNumber)
		}
		owners[o.Code] = true
	}
	keys := map[string]bool{}
	for i, k := range ds.ApiKeys {
		rec := fmt.Sprintf("ApiKeys[%d] (%s)", i, k.Name)
		if len(k.Key) < 16 || keys[k.Key] {
			return bad(rec, "Key", "must be unique and at least 16 characters")
		}
		keys[k.Key] = true
		for _, a := range k.Areas {
			if !slices.Contains(knownAreas, a) {
				return bad(rec, "Areas", "unknown area %q (known: %s)", a, strings.Join(knownAreas, ", "))
			}
		}
		if k.ServiceOwnerCode != nil && !owners[*k.ServiceOwnerCode] {
			return bad(rec, "ServiceOwnerCode", "%q is not in ServiceOwners", *k.ServiceOwnerCode)
		}
		for area, limit := range k.RateLimits {
			if !slices.Contains(k.Areas, area) || limit <= 0 {
				return bad(rec, "RateLimits", "%s: %d must be a positive limit of one of the key's areas", area, limit)
			}
		}
	}
	parties := map[string]bool{}
	for i, o := range ds.Organizations {
		rec := fmt.Sprintf("Organizations[%d] (%s)", i, o.OrganizationNumber)
		switch {
		case !validOrgNumber(o.OrganizationNumber) || parties[o.OrganizationNumber]:
			return bad(rec, "OrganizationNumber", "must be a unique, valid organization number")
		case o.Name == "":
			return bad(rec, "Name", "must not be empty")
		case o.Type == "":
			return bad(rec, "Type", "must not be empty")
		case o.Status != "Active" && o.Status != "Deleted":
			return bad(rec, "Status", "must be Active or Deleted, not %q", o.Status)
		}
		parties[o.OrganizationNumber] = true
	}
	for i, o := range ds.Organizations {
		if p := o.ParentOrganizationNumber; p != nil && !parties[*p] {
			return bad(fmt.Sprintf("Organizations[%d] (%s)", i, o.OrganizationNumber), "ParentOrganizationNumber", "%q is not in Organizations", *p)
		}
	}
	userNames := map[string]bool{}
	for i, p := range ds.Persons {
		rec := fmt.Sprintf("Persons[%d] (%s)", i, p.UserName)
		switch {
		case !validSSN(p.SocialSecurityNumber) || parties[p.SocialSecurityNumber]:
			return bad(rec, "SocialSecurityNumber", "must be a unique, valid national identity number")
		case p.Name == "" || p.LastName == "":
			return bad(rec, "Name", "Name and LastName must not be empty")
		case p.UserName == "" || userNames[strings.ToLower(p.UserName)]:
			return bad(rec, "UserName", "must be non-empty and unique")
		case p.Password == "":
			return bad(rec, "Password", "must not be empty")
		}
		parties[p.SocialSecurityNumber] = true
		userNames[strings.ToLower(p.UserName)] = true
	}
	for i, u := range ds.EnterpriseUsers {
		rec := fmt.Sprintf("EnterpriseUsers[%d] (%s)", i, u.UserName)
		switch {
		case u.UserName == "" || userNames[strings.ToLower(u.UserName)]:
			return bad(rec, "UserName", "must be non-empty and unique among all user names")
		case u.Password == "":
			return bad(rec, "Password", "must not be empty")
		case !parties[u.OrganizationNumber] || !validOrgNumber(u.OrganizationNumber):
			return bad(rec, "OrganizationNumber", "%q is not in Organizations", u.OrganizationNumber)
		}
		userNames[strings.ToLower(u.UserName)] = true
	}
	services := map[serviceKey]dsService{}
	for i, s := range ds.Services {
		rec := fmt.Sprintf("Services[%d] (%s/%d)", i, s.ServiceCode, s.ServiceEditionCode)
		key := serviceKey{s.ServiceCode, s.ServiceEditionCode}
		switch {
		case s.ServiceCode == "" || s.ServiceEditionCode <= 0:
			return bad(rec, "ServiceCode", "ServiceCode and a positive ServiceEditionCode are required")
		case services[key].ServiceCode != "":
			return bad(rec, "ServiceEditionCode", "this service edition is listed twice")
		case !owners[s.ServiceOwnerCode]:
			return bad(rec, "ServiceOwnerCode", "%q is not in ServiceOwners", s.ServiceOwnerCode)
		case s.ServiceType != "FormTask" && s.ServiceType != "Correspondence":
			return bad(rec, "ServiceType", "must be FormTask or Correspondence, not %q", s.ServiceType)
		case s.ValidTo.Before(s.ValidFrom.Time):
			return bad(rec, "ValidTo", "is before ValidFrom")
		}
		for lang, text := range s.SigningTexts {
			if n, err := strconv.Atoi(lang); err != nil || !slices.Contains(languages, n) || text == "" {
				return bad(rec, "SigningTexts", "keys are the language ids %v and texts are not empty", languages)
			}
		}
		for j, p := range s.ProcessSteps {
			if p.Name == "" || p.SecurityLevel < 0 || p.SecurityLevel > 4 {
				return bad(rec, fmt.Sprintf("ProcessSteps[%d]", j), "needs a Name and a SecurityLevel from 0 to 4")
			}
		}
		for j, f := range s.FormsMetaData {
			field := fmt.Sprintf("FormsMetaData[%d]", j)
			switch {
			case f.FormType != "MainForm" && f.FormType != "SubForm":
				return bad(rec, field+".FormType", "must be MainForm or SubForm, not %q", f.FormType)
			case f.DataFormatID == "" || f.DataFormatVersion <= 0:
				return bad(rec, field+".DataFormatID", "DataFormatID and a positive DataFormatVersion are required")
			case f.XsdFile == "" || filepath.IsAbs(f.XsdFile) || strings.Contains(f.XsdFile, ".."):
				return bad(rec, field+".XsdFile", "must be a path inside the dataset's folder")
			}
		}
		for j, r := range s.AttachmentRules {
			if r.AttachmentTypeName == "" || r.MinAttachmentCount < 0 || r.MaxAttachmentCount < r.MinAttachmentCount || r.MaxFileSize <= 0 {
				return bad(rec, fmt.Sprintf("AttachmentRules[%d]", j), "needs an AttachmentTypeName, 0 <= Min <= Max count and a positive MaxFileSize")
			}
			field := fmt.Sprintf("AttachmentRules[%d].XsdFile", j)
			switch {
			case r.IsXsdValidationRequired != (r.XsdFile != ""):
				return bad(rec, field, "is required exactly when IsXsdValidationRequired is true")
			case filepath.IsAbs(r.XsdFile) || strings.Contains(r.XsdFile, ".."):
				return bad(rec, field, "must be a path inside the dataset's folder")
			}
		}
		services[key] = s
	}
	roleDefs := map[int]bool{}
	for i, d := range ds.RoleDefinitions {
		rec := fmt.Sprintf("RoleDefinitions[%d] (%d)", i, d.RoleDefinitionID)
		switch {
		case d.RoleDefinitionID <= 0 || d.RoleDefinitionID > 100000 || roleDefs[d.RoleDefinitionID]:
			return bad(rec, "RoleDefinitionId", "must be unique and between 1 and 100000")
		case d.RoleType == "":
			return bad(rec, "RoleType", "must not be empty")
		case d.RoleName == "":
			return bad(rec, "RoleName", "must not be empty")
		}
		for j, r := range d.Rights {
			field := fmt.Sprintf("Rights[%d]", j)
			if services[serviceKey{r.ServiceCode, r.ServiceEditionCode}].ServiceCode == "" {
				return bad(rec, field+".ServiceCode", "service %s/%d is not in Services", r.ServiceCode, r.ServiceEditionCode)
			}
			if !slices.Contains(actions, r.Action) {
				return bad(rec, field+".Action", "unknown action %q (known: %s)", r.Action, strings.Join(actions, ", "))
			}
		}
		roleDefs[d.RoleDefinitionID] = true
	}
	roleIDs := map[int64]bool{}
	for i, r := range ds.Roles {
		rec := fmt.Sprintf("Roles[%d] (%d)", i, r.RoleID)
		switch {
		case r.RoleID <= 0 || r.RoleID > 900000 || roleIDs[r.RoleID]:
			return bad(rec, "RoleId", "must be unique and between 1 and 900000")
		case !parties[r.Subject] && !userNames[strings.ToLower(r.Subject)]:
			return bad(rec, "Subject", "%q is neither a person nor an enterprise user of the dataset", r.Subject)
		case !parties[r.Reportee]:
			return bad(rec, "Reportee", "%q is not an organization or person of the dataset", r.Reportee)
		case !roleDefs[r.RoleDefinitionID]:
			return bad(rec, "RoleDefinitionId", "%d is not in RoleDefinitions", r.RoleDefinitionID)
		}
		roleIDs[r.RoleID] = true
	}
	codeLists := map[string]bool{}
	for i, c := range ds.CodeLists {
		rec := fmt.Sprintf("CodeLists[%d] (%s)", i, c.Name)
		key := fmt.Sprintf("%s/%d/%d", c.Name, c.Version, c.Language)
		switch {
		case c.Name == "" || c.Version <= 0:
			return bad(rec, "Name", "Name and a positive Version are required")
		case !slices.Contains(languages, c.Language):
			return bad(rec, "Language", "%d is not one of 1044, 2068, 1033", c.Language)
		case codeLists[key]:
			return bad(rec, "Language", "this name, version and language is listed twice")
		}
		codeLists[key] = true
	}
	messageIDs := map[string]bool{}
	for i, m := range ds.Messages {
		rec := fmt.Sprintf("Messages[%d] (%s)", i, m.MessageID)
		svc := services[serviceKey{m.ServiceCode, m.ServiceEdition}]
		switch {
		case !messageIDRE.MatchString(m.MessageID) || messageIDs[m.MessageID]:
			return bad(rec, "MessageId", "must be unique and 'a' followed by digits")
		case !parties[m.Reportee]:
			return bad(rec, "Reportee", "%q is not an organization or person of the dataset", m.Reportee)
		case svc.ServiceCode == "":
			return bad(rec, "ServiceCode", "service %s/%d is not in Services", m.ServiceCode, m.ServiceEdition)
		case m.Type != svc.ServiceType:
			return bad(rec, "Type", "%q does not match the service's type %q", m.Type, svc.ServiceType)
		case !slices.Contains(statuses[m.Type], m.Status):
			return bad(rec, "Status", "%q is not a status of a %s", m.Status, m.Type)
		case m.ServiceOwnerCode != svc.ServiceOwnerCode:
			return bad(rec, "ServiceOwnerCode", "%q is not the service's owner %q", m.ServiceOwnerCode, svc.ServiceOwnerCode)
		case m.Language != 0 && !slices.Contains(languages, m.Language):
			return bad(rec, "Language", "%d is not one of 1044, 2068, 1033", m.Language)
		case m.Subject == "":
			return bad(rec, "Subject", "must not be empty")
		case m.IsConfirmationNeeded && m.Type != store.TypeCorrespondence:
			return bad(rec, "IsConfirmationNeeded", "only a correspondence asks for confirmation")
		}
		for j, d := range m.CustomMessageData {
			if d.Key == "" {
				return bad(rec, fmt.Sprintf("CustomMessageData[%d].Key", j), "must not be empty")
			}
		}
		if len(m.ReplyOptions) > 0 && !bytes.Equal(m.ReplyOptions, []byte("null")) {
			var opts []map[string]any
			if err := json.Unmarshal(m.ReplyOptions, &opts); err != nil {
				return bad(rec, "ReplyOptions", "must be an array of objects")
			}
		}
		for j, f := range m.Forms {
			if f.Type != "MainForm" && f.Type != "SubForm" {
				return bad(rec, fmt.Sprintf("Forms[%d].Type", j), "must be MainForm or SubForm, not %q", f.Type)
			}
		}
		for j, a := range m.Attachments {
			if _, err := base64.StdEncoding.DecodeString(a.Data); err != nil {
				return bad(rec, fmt.Sprintf("Attachments[%d].Data", j), "is not valid base64")
			}
			if a.FileName == "" {
				return bad(rec, fmt.Sprintf("Attachments[%d].FileName", j), "must not be empty")
			}
		}
		messageIDs[m.MessageID] = true
	}
	return nil
}

type xsdKey struct {
	id      string
	version int
}

func (ds *dataset) readSchemas(dir string) (map[xsdKey]string, error) {
	xsds := map[xsdKey]string{}
	for i, s := range ds.Services {
		for j, f := range s.FormsMetaData {
			b, err := os.ReadFile(filepath.Join(dir, f.XsdFile))
			if err != nil {
				return nil, &Error{Record: fmt.Sprintf("Services[%d] (%s/%d)", i, s.ServiceCode, s.ServiceEditionCode),
					Field: fmt.Sprintf("FormsMetaData[%d].XsdFile", j), Msg: fmt.Sprintf("cannot read %s", f.XsdFile)}
			}
			xsds[xsdKey{f.DataFormatID, f.DataFormatVersion}] = string(b)
		}
		for j, r := range s.AttachmentRules {
			if r.XsdFile == "" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, r.XsdFile))
			if err != nil {
				return nil, &Error{Record: fmt.Sprintf("Services[%d] (%s/%d)", i, s.ServiceCode, s.ServiceEditionCode),
					Field: fmt.Sprintf("AttachmentRules[%d].XsdFile", j), Msg: fmt.Sprintf("cannot read %s", r.XsdFile)}
			}
			ds.Services[i].AttachmentRules[j].xsd = string(b)
		}
	}
	return xsds, nil
}

func (ds *dataset) write(ctx context.Context, tx pgx.Tx, xsds map[xsdKey]string) error {
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
			codes = []store.Code{}
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
		if err := insertMessage(ctx, tx, m, partyIDs[m.Reportee]); err != nil {
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
			valid_from, valid_to, rest_enabled, eus_enabled, enterprise_user_enabled, signing_texts)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (service_code, service_edition) `+updateChanged("services", "service_owner_code, service_name, service_type, valid_from, valid_to, rest_enabled, eus_enabled, enterprise_user_enabled, signing_texts"),
		code, ed, s.ServiceOwnerCode, s.ServiceName, s.ServiceType, s.ValidFrom.Time, s.ValidTo.Time,
		s.RestEnabled, s.EUSEnabled, s.EnterpriseUserEnabled, jsonOrNull(len(s.SigningTexts), s.SigningTexts)); err != nil {
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

func insertMessage(ctx context.Context, tx pgx.Tx, m dsMessage, reporteeID int64) error {
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
		sum := sha256.Sum256(data)
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO attachments (message_id, ordinal, name, file_name, attachment_type, content_type,
				encrypted, signing_locked, signed_by_default, file_size, sha256)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
			m.MessageID, i, a.Name, a.FileName, a.AttachmentType, store.ContentTypeOf(a.FileName),
			a.Encrypted, a.SigningLocked, a.SignedByDefault, len(data), sum[:]).Scan(&id); err != nil {
			return fmt.Errorf("attachment %d: %w", i, err)
		}
		for seq := 0; seq*store.AttachmentChunkSize < len(data) || seq == 0; seq++ {
			chunk := data[seq*store.AttachmentChunkSize : min(len(data), (seq+1)*store.AttachmentChunkSize)]
			if _, err := tx.Exec(ctx, `INSERT INTO attachment_chunks (attachment_id, seq, data) VALUES ($1, $2, $3)`, id, seq, chunk); err != nil {
				return fmt.Errorf("attachment %d: %w", i, err)
			}
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
	if !store.OrganizationNumberPattern.MatchString(s) {
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
