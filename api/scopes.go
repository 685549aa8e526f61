package api

import (
	"slices"

	"github.com/postbox/postbox/identity"
)

// Scope names, from the interface's scope tables.
const (
	scopeEndUser          = "platform:enduser"
	scopeEndUserNoConsent = "platform:endusernoconsent"
	scopeReportees        = "platform:reportees"
	scopeInstancesMeta    = "platform:instances.meta"
	scopeInstancesRead    = "platform:instances.read"
	scopeInstancesWrite   = "platform:instances.write"
	scopeRightsRead       = "platform:rolesandrights.read"
	scopeRightsWrite      = "platform:rolesandrights.write"
	scopeDelegationsRead  = "platform:delegations.read"
	scopeDelegationsWrite = "platform:delegations.write"
	scopeRoleDefsRead     = "platform:roledefinitions.read"
	scopeRoleDefsWrite    = "platform:roledefinitions.write"
	scopeServiceOwner     = "platform:serviceowner"
	scopeSOOrganizations  = "platform:serviceowner/organizations"
	scopeSOReportees      = "platform:serviceowner/reportees"
	scopeSORolesAndRights = "platform:serviceowner/rolesandrights"
	scopeSOEvents         = "platform:serviceowner/events"
	// The agency's download queue: reading it and its parts, and confirming receipt.
	scopeSOSubmissionsRead  = "platform:serviceowner/submissions.read"
	scopeSOSubmissionsWrite = "platform:serviceowner/submissions.write"
	// The agency's sending: following its shipments, and sending or retracting correspondence.
	scopeSOCorrespondenceRead  = "platform:serviceowner/correspondence.read"
	scopeSOCorrespondenceWrite = "platform:serviceowner/correspondence.write"
	// Putting pre-filled form tasks of the caller's services into parties' mailboxes.
	scopeSOFormTasksWrite = "platform:serviceowner/formtasks.write"
	// Following notification orders, and ordering one for a message of the caller's services.
	scopeSONotificationsRead  = "platform:serviceowner/notifications.read"
	scopeSONotificationsWrite = "platform:serviceowner/notifications.write"
)

// generalScopes are the scopes that open every route of an area: platform:serviceowner the service-owner
// area, platform:enduser and platform:endusernoconsent every end-user area.
func generalScopes(area string) []string {
	if area == areaServiceOwner {
		return []string{scopeServiceOwner}
	}
	return []string{scopeEndUser, scopeEndUserNoConsent}
}

// scopeAllows tells whether the principal's scopes allow method on route: one of the route's scopes, as
// registered with it, or a general scope of its area. Password and certificate sessions carry no scopes
// and are held only to rights and the API key's areas. A route registered without scopes is refused to
// bearer tokens.
func (s *Server) scopeAllows(p identity.Principal, method, route string) bool {
	if !p.Scoped {
		return true
	}
	r, ok := s.routeIndex[method+" "+route]
	if !ok || r.Scopes == nil {
		return false
	}
	if len(r.Scopes) == 0 {
		return len(p.Scopes) > 0
	}
	general := generalScopes(r.Area)
	for _, sc := range p.Scopes {
		if slices.Contains(general, sc) || slices.Contains(r.Scopes, sc) {
			return true
		}
	}
	return false
}

// scopesFor lists the scopes any one of which lets a bearer token call method on route: the route's own,
// then the general scopes of its area.
func (s *Server) scopesFor(method, route string) []string {
	r, ok := s.routeIndex[method+" "+route]
	if !ok || r.Scopes == nil {
		return nil
	}
	return append(slices.Clone(r.Scopes), generalScopes(r.Area)...)
}
