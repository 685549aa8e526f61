// Package importer imports a dataset (the format of deploy/demo/README.md) into the store: `postbox seed`,
// and the template database of the tests.
package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/files"
	"github.com/postbox/postbox/metadata"
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
	// SigningSteps and SigningDeadlineDays are the service's signing (store.ServiceDetail); optional.
	SigningSteps        []store.SigningStep
	SigningDeadlineDays int
}

type dsCodeList struct {
	Name     string
	Version  int
	Language int
	Codes    []metadata.Code
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
// they belong to the running service. A second import of the same file changes nothing. Attachment bytes
// go to the object store (fs).
func FromFile(ctx context.Context, pool *pgxpool.Pool, fs *files.Service, path string) error {
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
	if err := store.InTx(ctx, pool, func(tx pgx.Tx) error { return ds.write(ctx, tx, xsds, fs) }); err != nil {
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
