package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Areas of the interface an API key can be limited to.
const (
	areaMailbox         = "mailbox"
	areaReportees       = "reportees"
	areaAuthorization   = "authorization"
	areaRoleDefinitions = "roledefinitions"
	areaServiceOwner    = "serviceowner"
)

// routes registers every route of the service, in one place. Paths are written in lower case and without
// a trailing slash; the path normaliser lets clients send any case and an optional trailing slash.
func (s *Server) routes() http.Handler {
	r := gin.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true

	r.Use(s.traceRequests, s.requestID, s.logRequests, s.measure, s.recoverPanics, s.errorsToProblems,
		s.limitHeaders, s.checkURL, s.clientCertHeader, s.limitBody, s.language)
	r.NoRoute(func(c *gin.Context) { abort(c, notFound("no resource at %s", c.Request.URL.Path)) })
	r.NoMethod(func(c *gin.Context) {
		abort(c, problem(http.StatusMethodNotAllowed, "method-not-allowed", "%s is not allowed on %s", c.Request.Method, c.Request.URL.Path))
	})

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)

	api := r.Group("/api")

	open := api.Group("", s.openCORS)
	hal := open.Group("", s.negotiate)
	hal.GET("/metadata", s.listServices)
	hal.GET("/metadata/formtask/:serviceCode/:serviceEdition", s.getFormTaskService)
	hal.GET("/metadata/correspondence/:serviceCode/:serviceEdition", s.getCorrespondenceService)
	hal.GET("/metadata/codelists", s.listCodeLists)
	hal.GET("/metadata/codelists/:name/:version", s.getCodeList)
	open.GET("/metadata/formtask/:serviceCode/:serviceEdition/forms/:dataFormatId/:dataFormatVersion/xsd", s.getFormSchema)
	open.POST("/authentication/authenticatewithpassword", s.authenticateWithPassword)
	open.POST("/authentication/logout", s.logout)
	open.DELETE("/authentication/logout", s.logout)

	reportees := api.Group("/reportees", s.requireKey(areaReportees), s.negotiate, s.authenticate)
	reportees.GET("", s.listReportees)
	reportees.GET("/:reporteeId", s.getReportee)
	reportees.POST("/reporteeconversion", s.convertReportee)

	mailbox := api.Group("", s.requireKey(areaMailbox), s.authenticate)
	mailbox.GET("/my/messagebox", s.negotiate, s.getMessagebox)
	messages := mailbox.Group("/:who/messages", s.resolveWho)
	messages.GET("", s.negotiate, s.listMessages)
	messages.POST("", s.negotiate, s.postFormTask)
	messages.GET("/:messageId", s.negotiate, s.getMessage)
	messages.PUT("/:messageId", s.negotiate, s.putFormTask)
	messages.GET("/:messageId/validate", s.negotiate, s.validateFormTask)
	messages.GET("/:messageId/print", s.getPrint)
	messages.PUT("/:messageId/forms/:formId", s.putSubForm)
	messages.POST("/:messageId/attachments", s.postAttachment)
	messages.POST("/:messageId/attachments/streamedattachment", s.postStreamedAttachment)
	messages.GET("/:messageId/forms/:formId", s.negotiate, s.getForm)
	messages.GET("/:messageId/forms/:formId/formdata", s.getFormData)
	messages.GET("/:messageId/attachments/:attachmentId", s.getAttachment)
	messages.GET("/:messageId/portalview", s.getPortalView)

	// Authorization (user-facing): roles, rights, delegations, deletions and the audit log, and the local
	// role definitions of {who}. Role deletes resolve {who} themselves: it may also be a user name.
	authz := api.Group("/:who/authorization", s.requireKey(areaAuthorization), s.negotiate, s.authenticate)
	authz.GET("/roles", s.resolveWho, s.listUserRoles)
	authz.DELETE("/roles/:roleId", s.resolveWhoOrUser, s.deleteUserRole)
	authz.GET("/rights", s.resolveWho, s.listUserRights)
	authz.DELETE("/rights/:rightId", s.resolveWho, s.deleteUserRight)
	authz.GET("/delegations", s.resolveWho, s.listDelegations)
	authz.POST("/delegations", s.resolveWho, s.delegateRoles)
	authz.GET("/auditlog", s.resolveWho, s.listAuditLog)
	roleDefs := api.Group("/:who/authorization/roledefinitions", s.requireKey(areaRoleDefinitions), s.negotiate, s.authenticate, s.resolveWho)
	roleDefs.GET("", s.listUserRoleDefinitions)
	roleDefs.POST("", s.createLocalRole)
	roleDefs.GET("/:roleDefinitionId", s.getUserRoleDefinition)
	roleDefs.PUT("/:roleDefinitionId", s.updateLocalRole)
	roleDefs.DELETE("/:roleDefinitionId", s.deleteLocalRole)

	// Service owners: organization tokens with the service-owner scopes, or enterprise certificates
	// (?ForceEIAuthentication), of registered service owners calling with a key of their own; every
	// call is audited, refused ones included.
	so := api.Group("/serviceowner", s.auditServiceOwner, s.requireKey(areaServiceOwner), s.negotiate,
		s.authenticateServiceOwner, s.requireServiceOwner)
	so.GET("/organizations", s.soListOrganizations)
	so.GET("/organizations/:who", s.soGetOrganization)
	so.GET("/organizations/:who/officialcontacts", s.soOfficialContacts)
	so.GET("/organizations/:who/personalcontacts", s.soPersonalContacts)
	so.GET("/organizations/:who/personalcontacts/:person/roles", s.soPersonalContactRoles)
	so.GET("/authorization/roles", s.soAuthorizationRoles)
	so.GET("/authorization/rights", s.soAuthorizationRights)
	so.GET("/roledefinitions", s.soListRoleDefinitions)
	so.GET("/roledefinitions/:roleDefinitionId", s.soGetRoleDefinition)
	so.GET("/reportees", s.soListReportees)

	s.routeList = r.Routes()
	return newPathNormalizer(r, s.preflight)
}
