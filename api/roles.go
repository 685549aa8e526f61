package api

import (
	"strconv"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/store"
)

// The Role and Right resources, as the user-facing and the service-owner areas both render them.

// roleResource is a Role held for a reportee. The automatic base role of a party acting for itself has
// no RoleId and no Delegator, and a null DelegatedTime. RoleDefinitionCode is shown by the service-owner
// area only (set, even when empty, by roleResourceOf with code), in the place its interface lists it.
type roleResource struct {
	RoleID             int64 `json:"RoleId,omitempty"`
	RoleType           string
	RoleDefinitionID   int `json:"RoleDefinitionId"`
	RoleName           string
	RoleDescription    string
	Delegator          string `json:",omitempty"`
	DelegatedTime      *render.Timestamp
	RoleDefinitionCode *string      `json:",omitempty"`
	Links              render.Links `json:"_links"`
}

// roleResourceOf renders a held role whose definition is at definitions + its id; code shows its
// RoleDefinitionCode.
func roleResourceOf(r store.HeldRole, definitions string, code bool) roleResource {
	res := roleResource{RoleID: r.RoleID, RoleType: r.RoleType, RoleDefinitionID: r.RoleDefinitionID, RoleName: r.RoleName,
		RoleDescription: r.RoleDescription, Delegator: r.Delegator, DelegatedTime: render.TimestampOrNull(r.DelegatedTime)}
	if code {
		res.RoleDefinitionCode = &r.RoleDefinitionCode
	}
	res.Links.Add("roledefinition", render.Link{Href: definitions + strconv.Itoa(r.RoleDefinitionID)})
	return res
}

// rightResource is a Right. Every right comes from a role definition (RightSourceType RoleTypeRights).
type rightResource struct {
	RightID            int64
	RightType          string
	ServiceCode        string
	ServiceEditionCode int
	Action             string
	RightSourceType    string
	IsDelegatable      bool
}

func rightResourceOf(r store.Right) rightResource {
	return rightResource{RightID: r.RightID, RightType: "Service", ServiceCode: r.ServiceCode, ServiceEditionCode: r.ServiceEdition,
		Action: r.Action, RightSourceType: "RoleTypeRights", IsDelegatable: r.IsDelegatable}
}

func rightResources(rights []store.Right) []rightResource {
	out := make([]rightResource, len(rights))
	for i, r := range rights {
		out[i] = rightResourceOf(r)
	}
	return out
}
