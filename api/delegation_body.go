package api

import (
	"strconv"
	"strings"
)

// The body of a delegation: one right holder and the role definitions to give it, in the interface's HAL
// XML form or its JSON HAL form, both read into one tree (readDocument).

// delegationRequest is the body of POST delegations: one right holder and the role definitions to give it.
type delegationRequest struct {
	SocialSecurityNumber string
	LastName             string
	OrganizationNumber   string
	Name                 string
	UserName             string
	RoleDefinitionIDs    []int
}

// maxRolesPerDelegation bounds one delegation request.
const maxRolesPerDelegation = 50

// parseDelegation reads the spec's HAL-XML delegation body, or its JSON HAL form (readDocument):
//
//	<resource rel="RightHolder">
//	  <Type>…</Type> <SocialSecurityNumber>…</SocialSecurityNumber> <LastName>…</LastName>
//	  <resource rel="Roles"> <resource rel="Role"> <RoleDefinitionId>88</RoleDefinitionId> </resource> … </resource>
//	</resource>
//
// An organization is named by OrganizationNumber and Name, an enterprise user by UserName and
// OrganizationNumber. Type is a placeholder and ignored, as are HAL <link> elements and an empty list of
// single rights. In JSON: {"SocialSecurityNumber": …, "LastName": …, "_embedded": {"Roles":
// [{"RoleDefinitionId": 88}], "Rights": []}}.
func parseDelegation(root *xmlNode) (delegationRequest, error) {
	var d delegationRequest
	if root.Name != "resource" || !strings.EqualFold(root.attr("rel"), "RightHolder") {
		return d, xmlNodeError(root, `the root element must be <resource rel="RightHolder">`)
	}
	seen := map[string]bool{}
	rolesSeen := false
	for _, n := range root.Children {
		name := strings.ToLower(n.Name)
		if name == "resource" {
			if strings.EqualFold(n.attr("rel"), "Rights") {
				if err := noRights(n); err != nil {
					return d, err
				}
				continue
			}
			if !strings.EqualFold(n.attr("rel"), "Roles") {
				return d, xmlNodeError(n, `only <resource rel="Roles"> may be nested in the right holder`)
			}
			if rolesSeen {
				return d, xmlNodeError(n, `<resource rel="Roles"> appears more than once`)
			}
			rolesSeen = true
			ids, err := parseRoles(n)
			if err != nil {
				return d, err
			}
			d.RoleDefinitionIDs = ids
			continue
		}
		if name == "link" {
			continue
		}
		var target *string
		switch name {
		case "type":
		case "socialsecuritynumber":
			target = &d.SocialSecurityNumber
		case "lastname":
			target = &d.LastName
		case "organizationnumber", "orgnumber":
			target = &d.OrganizationNumber
		case "name", "organizationname":
			target = &d.Name
		case "username":
			target = &d.UserName
		default:
			return d, xmlNodeError(n, "<%s> is not part of a delegation (expected SocialSecurityNumber and LastName, OrganizationNumber and Name, or UserName and OrganizationNumber, and the Roles)", n.Name)
		}
		if seen[name] {
			return d, xmlNodeError(n, "<%s> appears more than once", n.Name)
		}
		seen[name] = true
		text, err := xmlText(n)
		if err != nil {
			return d, err
		}
		if target != nil {
			*target = text
		}
	}
	if !rolesSeen || len(d.RoleDefinitionIDs) == 0 {
		return d, xmlNodeError(root, `name at least one role: <resource rel="Roles"><resource rel="Role"><RoleDefinitionId>…</RoleDefinitionId></resource></resource>`)
	}
	return d, nil
}

// noRights accepts the empty list of single rights a client may send beside the roles (the JSON HAL form
// has _embedded.Rights): rights are delegated here only through roles.
func noRights(rights *xmlNode) error {
	for _, r := range rights.Children {
		if !strings.EqualFold(r.Name, "link") {
			return xmlNodeError(r, "single rights cannot be delegated: delegate a role that grants them (a local role can be made for that)")
		}
	}
	return nil
}

func parseRoles(roles *xmlNode) ([]int, error) {
	var ids []int
	for _, r := range roles.Children {
		if strings.EqualFold(r.Name, "link") {
			continue
		}
		if r.Name != "resource" || !strings.EqualFold(r.attr("rel"), "Role") {
			return nil, xmlNodeError(r, `the roles must be <resource rel="Role"> elements`)
		}
		var idNode *xmlNode
		for _, f := range r.Children {
			switch {
			case strings.EqualFold(f.Name, "RoleDefinitionId"):
				if idNode != nil {
					return nil, xmlNodeError(f, "<RoleDefinitionId> appears more than once")
				}
				idNode = f
			case strings.EqualFold(f.Name, "link"), strings.EqualFold(f.Name, "RoleName"), strings.EqualFold(f.Name, "RoleType"):
			default:
				return nil, xmlNodeError(f, "<%s> is not part of a role (expected RoleDefinitionId)", f.Name)
			}
		}
		if idNode == nil {
			return nil, xmlNodeError(r, "<RoleDefinitionId> is missing")
		}
		text, err := xmlText(idNode)
		if err != nil {
			return nil, err
		}
		id, err := strconv.Atoi(text)
		if err != nil || id <= 0 {
			return nil, xmlNodeError(idNode, "%q is not a role definition id (a positive integer)", text)
		}
		for _, seen := range ids {
			if seen == id {
				return nil, xmlNodeError(idNode, "role definition %d is named more than once", id)
			}
		}
		ids = append(ids, id)
		if len(ids) > maxRolesPerDelegation {
			return nil, xmlNodeError(roles, "at most %d roles can be delegated at once", maxRolesPerDelegation)
		}
	}
	return ids, nil
}
