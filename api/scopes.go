package api

import (
	"slices"
	"strings"

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
)

// anyScope marks a route that a bearer token may call with any scope of its area (the service-owner
// role definitions need no particular scope).
var anyScope = []string{}

// routeScopes is the one table of which scopes let a bearer token call a route: any one of the listed
// scopes suffices. The general scopes platform:enduser and platform:endusernoconsent open every
// end-user route, platform:serviceowner every service-owner route. Password and certificate sessions
// carry no scopes and are held only to rights and the API key's areas. A route missing here is refused
// to bearer tokens; a test walks the router to keep the table complete.
var routeScopes = map[string][]string{
	"GET /api/reportees":             {scopeReportees},
	"GET /api/reportees/:reporteeId": {scopeReportees},

	"GET /api/my/messagebox":                                            {scopeInstancesMeta, scopeInstancesRead},
	"GET /api/:who/messages":                                            {scopeInstancesMeta, scopeInstancesRead},
	"GET /api/:who/messages/:messageId":                                 {scopeInstancesRead},
	"GET /api/:who/messages/:messageId/forms/:formId":                   {scopeInstancesRead},
	"GET /api/:who/messages/:messageId/forms/:formId/formdata":          {scopeInstancesRead},
	"GET /api/:who/messages/:messageId/attachments/:attachmentId":       {scopeInstancesRead},
	"GET /api/:who/messages/:messageId/portalview":                      {scopeInstancesRead},
	"POST /api/:who/messages":                                           {scopeInstancesWrite},
	"PUT /api/:who/messages/:messageId":                                 {scopeInstancesWrite},
	"GET /api/:who/messages/:messageId/validate":                        {scopeInstancesRead},
	"GET /api/:who/messages/:messageId/print":                           {scopeInstancesRead},
	"PUT /api/:who/messages/:messageId/forms/:formId":                   {scopeInstancesWrite},
	"POST /api/:who/messages/:messageId/attachments":                    {scopeInstancesWrite},
	"POST /api/:who/messages/:messageId/attachments/streamedattachment": {scopeInstancesWrite},

	"POST /api/reportees/reporteeconversion":                           {scopeReportees},
	"GET /api/:who/authorization/roles":                                {scopeRightsRead},
	"DELETE /api/:who/authorization/roles/:roleId":                     {scopeRightsWrite},
	"GET /api/:who/authorization/rights":                               {scopeRightsRead},
	"DELETE /api/:who/authorization/rights/:rightId":                   {scopeRightsWrite},
	"GET /api/:who/authorization/delegations":                          {scopeDelegationsRead},
	"POST /api/:who/authorization/delegations":                         {scopeDelegationsWrite},
	"GET /api/:who/authorization/auditlog":                             {scopeDelegationsRead, scopeRightsRead},
	"GET /api/:who/authorization/roledefinitions":                      {scopeRoleDefsRead},
	"POST /api/:who/authorization/roledefinitions":                     {scopeRoleDefsWrite},
	"GET /api/:who/authorization/roledefinitions/:roleDefinitionId":    {scopeRoleDefsRead},
	"PUT /api/:who/authorization/roledefinitions/:roleDefinitionId":    {scopeRoleDefsWrite},
	"DELETE /api/:who/authorization/roledefinitions/:roleDefinitionId": {scopeRoleDefsWrite},

	"GET /api/serviceowner/organizations":                                     {scopeSOOrganizations},
	"GET /api/serviceowner/organizations/:who":                                {scopeSOOrganizations},
	"GET /api/serviceowner/organizations/:who/officialcontacts":               {scopeSOOrganizations},
	"GET /api/serviceowner/organizations/:who/personalcontacts":               {scopeSOOrganizations},
	"GET /api/serviceowner/organizations/:who/personalcontacts/:person/roles": {scopeSOOrganizations},
	"GET /api/serviceowner/authorization/roles":                               {scopeSORolesAndRights},
	"GET /api/serviceowner/authorization/rights":                              {scopeSORolesAndRights},
	"GET /api/serviceowner/roledefinitions":                                   anyScope,
	"GET /api/serviceowner/roledefinitions/:roleDefinitionId":                 anyScope,
	"GET /api/serviceowner/reportees":                                         {scopeSOReportees},
}

// serviceOwnerRoutes are the routes of the service-owner area, opened by platform:serviceowner.
var serviceOwnerRoutes = map[string]bool{
	"GET /api/serviceowner/organizations":                                     true,
	"GET /api/serviceowner/organizations/:who":                                true,
	"GET /api/serviceowner/organizations/:who/officialcontacts":               true,
	"GET /api/serviceowner/organizations/:who/personalcontacts":               true,
	"GET /api/serviceowner/organizations/:who/personalcontacts/:person/roles": true,
	"GET /api/serviceowner/authorization/roles":                               true,
	"GET /api/serviceowner/authorization/rights":                              true,
	"GET /api/serviceowner/roledefinitions":                                   true,
	"GET /api/serviceowner/roledefinitions/:roleDefinitionId":                 true,
	"GET /api/serviceowner/reportees":                                         true,
}

// scopeAllows tells whether the principal's scopes allow method on route.
func (s *Server) scopeAllows(p identity.Principal, method, route string) bool {
	if !p.Scoped {
		return true
	}
	allowed, ok := routeScopes[method+" "+route]
	if !ok {
		return false
	}
	if len(allowed) == 0 {
		return len(p.Scopes) > 0
	}
	general := []string{scopeEndUser, scopeEndUserNoConsent}
	if serviceOwnerRoutes[method+" "+route] {
		general = []string{scopeServiceOwner}
	}
	for _, sc := range p.Scopes {
		if slices.Contains(general, sc) || slices.Contains(allowed, sc) {
			return true
		}
	}
	return false
}

// RoutesWithoutScope lists the routes bearer tokens could reach that the scope table does not cover.
func (s *Server) RoutesWithoutScope() []string {
	var missing []string
	for _, r := range s.routeList {
		key := r.Method + " " + r.Path
		if _, ok := routeScopes[key]; !ok && !openRoute(r.Path) {
			missing = append(missing, key)
		}
	}
	return missing
}

// openRoute tells whether a route needs no authentication at all, and so no scope.
func openRoute(path string) bool {
	return path == "/healthz" || path == "/readyz" || strings.HasPrefix(path, "/api/metadata") || strings.HasPrefix(path, "/api/authentication")
}
