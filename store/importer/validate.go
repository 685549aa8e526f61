// The dataset's checks: every reference resolves, every value has its form, before anything is written.

package importer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/store"
)

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

func bad(record, field, format string, args ...any) error {
	return &Error{Record: record, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (ds *dataset) validate() error {
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
		if err := validSigning(rec, s, parties); err != nil {
			return err
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

// validSigning checks a service's signing: steps only on a FormTask service, each with a known rule, a
// role code exactly for Role, an organization of the dataset (parties) exactly for Organization, and a
// count that is not negative; a deadline only with signing.
func validSigning(rec string, s dsService, parties map[string]bool) error {
	if len(s.SigningSteps) > 0 && s.ServiceType != "FormTask" {
		return bad(rec, "SigningSteps", "only a FormTask service is signed")
	}
	if s.SigningDeadlineDays < 0 {
		return bad(rec, "SigningDeadlineDays", "must be a positive number of days")
	}
	for j, st := range s.SigningSteps {
		field := fmt.Sprintf("SigningSteps[%d]", j)
		switch {
		case st.Signees == "Person":
			return bad(rec, field, "a person is named on the task (Signees %s), never in the open metadata, which would publish "+
				"their identity number", store.SigneesOfTask)
		case !slices.Contains([]string{store.SigneesOfTask, store.SigneesByRole, store.SigneesByRight, store.SigneesOrganization}, st.Signees):
			return bad(rec, field, "Signees must be %s, %s, %s or %s, not %q", store.SigneesOfTask, store.SigneesByRole, store.SigneesByRight,
				store.SigneesOrganization, st.Signees)
		case (st.Signees == store.SigneesByRole) != (st.RoleDefinitionCode != ""):
			return bad(rec, field, "a RoleDefinitionCode goes with Signees %s, and only with it", store.SigneesByRole)
		case (st.Signees == store.SigneesOrganization) != (st.OrganizationNumber != ""):
			return bad(rec, field, "an OrganizationNumber goes with Signees %s, and only with it", store.SigneesOrganization)
		case st.OrganizationNumber != "" && (!validOrgNumber(st.OrganizationNumber) || !parties[st.OrganizationNumber]):
			return bad(rec, field, "OrganizationNumber %q is not in Organizations", st.OrganizationNumber)
		case st.MinCount < 0:
			return bad(rec, field, "MinCount must not be negative")
		}
	}
	return nil
}
