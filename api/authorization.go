package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// authorizationHandlers answer the user-facing authorization area: roles and rights held for {who},
// delegations, deletions, the audit log and the local role definitions.
type authorizationHandlers struct {
	roles  access.Store    // reads role definitions, delegations, holdings and the audit log
	access *access.Service // finds receivers, decides what they may read, writes every change
}

// Delegations (the user-facing authorization area): a user gives roles of {who} to a person, an
// organization or an enterprise user, and lists what {who} has given. The roles and rights the user holds,
// their deletion and the audit log are in roles.go; the role definitions in roledefinitions.go.

// delegateRoles gives roles to a right holder for {who}. The caller must be access manager (ADMAI) or
// main administrator (HADM) for the reportee; anyone but a main administrator may only delegate roles they
// hold themselves and whose rights they hold as delegatable rights. Roles from the business register
// (RoleType External) are not delegated.
func (h *authorizationHandlers) delegateRoles(c *gin.Context) {
	if _, ok := managedReportee(c); !ok {
		return
	}
	root, err := readDocument(c, "RightHolder")
	if err != nil {
		abort(c, err)
		return
	}
	req, err := parseDelegation(root)
	if err != nil {
		abort(c, err)
		return
	}
	holder, ids, err := h.access.Delegate(c.Request.Context(), accessCaller(c), req.HolderName, req.RoleDefinitionIDs, req.Rights)
	if err != nil {
		abort(c, err)
		return
	}
	created := delegatedResource{Name: holder.Name, RoleIDs: ids}
	// A person or organization is a receiver of {who}'s delegations, under its reportee id; an enterprise
	// user is found in the delegations list.
	delegations := h.authorizationURL(c) + "/delegations"
	if holder.LoginID == 0 {
		created.RightHolderID = identity.ReporteeID(holder.PartyID)
		created.Links.Add("self", render.Link{Href: delegations + "/" + created.RightHolderID})
		c.Header("Location", delegations+"/"+created.RightHolderID)
	} else {
		created.UserName = holder.Name
		created.Links.Add("self", render.Link{Href: delegations})
		c.Header("Location", delegations)
	}
	respond(c, http.StatusCreated, created)
}

// delegatedResource is what a delegation made: the receiver (its reportee id, for the receiver routes
// …/delegations/{receiverId}; or an enterprise user's name) and the ids of the roles it now holds.
type delegatedResource struct {
	RightHolderID string `json:"RightHolderId,omitempty"`
	UserName      string `json:",omitempty"`
	Name          string
	RoleIDs       []int64      `json:"RoleIds" xmlitem:"RoleId"`
	Links         render.Links `json:"_links"`
}

// delegationResource is a role someone holds for the reportee, as the reportee's access managers see it.
type delegationResource struct {
	RoleID           int64 `json:"RoleId"`
	RoleType         string
	RoleDefinitionID int `json:"RoleDefinitionId"`
	RoleName         string
	RoleDescription  string
	Delegator        string
	DelegatedTime    render.Timestamp
	// RightHolderID is a person's or organization's receiver id, for the …/delegations/{receiverId} routes.
	RightHolderID                 string `json:"RightHolderId,omitempty"`
	RightHolderType               string
	RightHolderName               string
	RightHolderOrganizationNumber string       `json:",omitempty"`
	RightHolderUserName           string       `json:",omitempty"`
	Links                         render.Links `json:"_links"`
}

// listDelegations lists every role held for {who}, for its access managers. Persons are shown by name,
// never by national identity number. serviceCode and serviceEdition narrow the list to roles that grant
// a right on that service, receiverId to the roles of one right holder.
func (h *authorizationHandlers) listDelegations(c *gin.Context) {
	party, ok := managedReportee(c)
	if !ok {
		return
	}
	f, err := delegationFilter(c)
	if err != nil {
		abort(c, err)
		return
	}
	respondList(c, "delegations", func(lq store.ListQuery) ([]access.DelegatedRole, bool, error) {
		return h.access.ListDelegations(c.Request.Context(), party.ID, f, lq)
	}, func(r access.DelegatedRole) delegationResource {
		d := delegationResource{RoleID: r.RoleID, RoleType: r.RoleType, RoleDefinitionID: r.RoleDefinitionID, RoleName: r.RoleName,
			RoleDescription: r.RoleDescription, Delegator: r.Delegator, DelegatedTime: render.TimestampOf(*r.DelegatedTime),
			RightHolderType: r.HolderType, RightHolderName: r.HolderName, RightHolderOrganizationNumber: r.HolderOrganizationNumber,
			RightHolderUserName: r.HolderUserName}
		d.Links.Add("roledefinition", render.Link{Href: h.roleDefinitionURL(c, r.RoleDefinitionID)})
		if r.HolderPartyID != 0 {
			d.RightHolderID = identity.ReporteeID(r.HolderPartyID)
			d.Links.Add("receiver", render.Link{Href: h.authorizationURL(c) + "/delegations/" + d.RightHolderID})
		}
		return d
	}, nil)
}

// delegationFilter reads the filters of the delegations list.
func delegationFilter(c *gin.Context) (access.DelegationFilter, error) {
	var (
		f   access.DelegationFilter
		err error
	)
	f.Service, err = serviceFilterOf(c)
	if raw, ok := c.GetQuery("receiverId"); ok {
		f.Receiver = &raw
	}
	return f, err
}
