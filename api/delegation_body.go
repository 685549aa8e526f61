package api

import (
	"slices"
	"strconv"
	"strings"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/identity"
)

// The body of a delegation: one right holder and the role definitions and single rights to give it, in
// the interface's HAL XML form or its JSON HAL form, both read into one tree (readDocument).

// delegationRequest is the body of POST delegations: one right holder and the role definitions and single
// rights to give it.
type delegationRequest struct {
	access.HolderName
	RoleDefinitionIDs []int
	Rights            []access.RightSpec
}

// maxRolesPerDelegation bounds the roles and single rights of one delegation request together.
const maxRolesPerDelegation = 50

// parseDelegation reads the spec's HAL-XML delegation body, or its JSON HAL form (readDocument):
//
//	<resource rel="RightHolder">
//	  <Type>…</Type> <SocialSecurityNumber>…</SocialSecurityNumber> <LastName>…</LastName>
//	  <resource rel="Roles"> <resource rel="Role"> <RoleDefinitionId>88</RoleDefinitionId> </resource> … </resource>
//	  <resource rel="Rights"> <resource rel="Right"> <ServiceCode>4711</ServiceCode>
//	    <ServiceEditionCode>2</ServiceEditionCode> <Action>Sign</Action> </resource> … </resource>
//	</resource>
//
// An organization is named by OrganizationNumber and Name, an enterprise user by UserName and
// OrganizationNumber. Type is a placeholder and ignored, as are HAL <link> elements. At least one role or
// right. In JSON: {"SocialSecurityNumber": …, "LastName": …, "_embedded": {"Roles":
// [{"RoleDefinitionId": 88}], "Rights": [{"ServiceCode": "4711", "ServiceEditionCode": 2, "Action": "Sign"}]}}.
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
				if seen["rights"] {
					return d, xmlNodeError(n, `<resource rel="Rights"> appears more than once`)
				}
				seen["rights"] = true
				rights, err := parseRights(n)
				if err != nil {
					return d, err
				}
				d.Rights = rights
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
	switch n := len(d.RoleDefinitionIDs) + len(d.Rights); {
	case n == 0:
		return d, xmlNodeError(root, `name at least one role (<resource rel="Roles"><resource rel="Role"><RoleDefinitionId>…`+
			`</RoleDefinitionId></resource></resource>) or right (<resource rel="Rights"><resource rel="Right"><ServiceCode>…`+
			`</ServiceCode><ServiceEditionCode>…</ServiceEditionCode><Action>…</Action></resource></resource>)`)
	case n > maxRolesPerDelegation:
		return d, xmlNodeError(root, "at most %d roles and rights can be delegated at once", maxRolesPerDelegation)
	}
	return d, nil
}

// delegatableActions are the actions a single right may give.
var delegatableActions = []identity.Action{identity.Read, identity.Write, identity.Delete, identity.Sign, identity.ArchiveRead, identity.ArchiveDelete}

// parseRights reads the single rights of a delegation: each a ServiceCode, a ServiceEditionCode and an
// Action. Rights on one message (MessageID) or on a system resource (SystemResourceID) are not delegated
// here.
func parseRights(rights *xmlNode) ([]access.RightSpec, error) {
	var out []access.RightSpec
	for _, r := range rights.Children {
		if strings.EqualFold(r.Name, "link") {
			continue
		}
		if r.Name != "resource" || !strings.EqualFold(r.attr("rel"), "Right") {
			return nil, xmlNodeError(r, `the rights must be <resource rel="Right"> elements`)
		}
		fields := map[string]*xmlNode{}
		for _, f := range r.Children {
			name := strings.ToLower(f.Name)
			switch name {
			case "link", "rightid", "righttype", "rightsourcetype", "isdelegatable", "servicename", "serviceeditionname":
				continue // what a client read from the rights views and sends back
			case "servicecode", "serviceeditioncode", "serviceedition", "action":
			case "messageid", "systemresourceid":
				return nil, xmlNodeError(f, "rights on one message or on a system resource cannot be delegated here: "+
					"name a ServiceCode, a ServiceEditionCode and an Action")
			default:
				return nil, xmlNodeError(f, "<%s> is not part of a right (expected ServiceCode, ServiceEditionCode and Action)", f.Name)
			}
			if name == "serviceedition" {
				name = "serviceeditioncode"
			}
			if fields[name] != nil {
				return nil, xmlNodeError(f, "<%s> appears more than once", f.Name)
			}
			fields[name] = f
		}
		var spec access.RightSpec
		for _, want := range []string{"servicecode", "serviceeditioncode", "action"} {
			if fields[want] == nil {
				return nil, xmlNodeError(r, "a right needs ServiceCode, ServiceEditionCode and Action")
			}
		}
		code, err := xmlText(fields["servicecode"])
		if err != nil {
			return nil, err
		}
		edition, err := xmlText(fields["serviceeditioncode"])
		if err != nil {
			return nil, err
		}
		action, err := xmlText(fields["action"])
		if err != nil {
			return nil, err
		}
		spec.ServiceCode = code
		if spec.ServiceEdition, err = strconv.Atoi(edition); err != nil || spec.ServiceEdition <= 0 {
			return nil, xmlNodeError(fields["serviceeditioncode"], "%q is not a service edition (a positive integer)", edition)
		}
		i := slices.IndexFunc(delegatableActions, func(a identity.Action) bool { return strings.EqualFold(string(a), action) })
		if i < 0 {
			return nil, xmlNodeError(fields["action"], "%q is not an action that can be delegated (one of %s)", action, actionList())
		}
		spec.Action = string(delegatableActions[i])
		if slices.Contains(out, spec) {
			return nil, xmlNodeError(r, "the right %s on %s/%d is named more than once", spec.Action, spec.ServiceCode, spec.ServiceEdition)
		}
		out = append(out, spec)
		if len(out) > maxRolesPerDelegation {
			return nil, xmlNodeError(rights, "at most %d rights can be delegated at once", maxRolesPerDelegation)
		}
	}
	return out, nil
}

func actionList() string {
	names := make([]string, len(delegatableActions))
	for i, a := range delegatableActions {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
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
