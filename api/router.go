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

	r.Use(s.requestID, s.logRequests, s.recoverPanics, s.errorsToProblems, s.limitBody, s.language)
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

	reportees := api.Group("/reportees", s.requireKey(areaReportees), s.negotiate, s.authenticate)
	reportees.GET("", s.listReportees)
	reportees.GET("/:reporteeId", s.getReportee)

	mailbox := api.Group("", s.requireKey(areaMailbox), s.authenticate)
	mailbox.GET("/my/messagebox", s.negotiate, s.getMessagebox)
	messages := mailbox.Group("/:who/messages", s.resolveWho)
	messages.GET("", s.negotiate, s.listMessages)
	messages.GET("/:messageId", s.negotiate, s.getMessage)
	messages.GET("/:messageId/forms/:formId", s.negotiate, s.getForm)
	messages.GET("/:messageId/forms/:formId/formdata", s.getFormData)
	messages.GET("/:messageId/attachments/:attachmentId", s.getAttachment)
	messages.GET("/:messageId/portalview", s.getPortalView)

	s.routeList = r.Routes()
	return newPathNormalizer(r, s.preflight)
}
