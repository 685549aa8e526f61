package api

import (
	"net/http"
	"reflect"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/metadata"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/serviceowner"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/submission"
)

// Areas of the interface an API key can be limited to.
const (
	areaMailbox         = "mailbox"
	areaReportees       = "reportees"
	areaAuthorization   = "authorization"
	areaRoleDefinitions = "roledefinitions"
	areaServiceOwner    = "serviceowner"
)

// routes registers every route of the service, in one place, each with its API-key area and the scopes a
// bearer token needs for it; the table is kept for the scope check and for Routes. Paths are written in
// lower case and without a trailing slash; the path normaliser lets clients send any case and an optional
// trailing slash.
func (s *Server) routes() http.Handler {
	r := gin.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true

	r.Use(s.traceRequests, s.requestID, s.logRequests, s.measure, s.recoverPanics, s.errorsToProblems,
		s.limitHeaders, s.checkURL, s.clientCertHeader, s.limitBody, s.language, s.trustProxy)
	r.NoRoute(func(c *gin.Context) { abort(c, problem.NotFound("no resource at %s", c.Request.URL.Path)) })
	r.NoMethod(func(c *gin.Context) {
		abort(c, problem.New(http.StatusMethodNotAllowed, "method-not-allowed", "%s is not allowed on %s", c.Request.Method, c.Request.URL.Path))
	})
	t := &routeTable{idempotent: s.idempotent, negotiators: []gin.HandlerFunc{s.negotiate, negotiateEvents, negotiateSubmission}}
	// The handlers of each area, with what they depend on.
	md := &metadataHandlers{catalog: metadata.New(s.q)}
	id := &identityHandlers{who: identity.NewStore(s.q), auth: s.auth, rights: s.rights, parties: s.parties}
	visible := mailbox.New(s.messages, s.q, s.events)
	downloads := fileDownloads{files: s.opts.Files, presignFrom: s.opts.PresignFrom, presignExpiry: s.opts.PresignExpiry}
	mb := &mailboxHandlers{tasks: formtask.NewStore(s.q), lists: mailbox.NewLists(s.q), messages: visible, rights: s.rights, downloads: downloads}
	ft := &formTaskHandlers{formTasks: s.formTasks, log: s.log, mailbox: mb}
	lc := &lifecycleHandlers{lifecycle: mailbox.NewLifecycle(s.opts.Pool, s.events, s.formTasks), mailbox: mb, tasks: ft}
	az := &authorizationHandlers{roles: access.NewStore(s.q), access: access.New(s.opts.Pool, s.rights, s.parties, s.events, visible)}
	so := &serviceOwnerHandlers{roles: access.NewStore(s.q), owner: serviceowner.New(s.q, s.parties)}
	subs := &subscriptionHandlers{subs: webhook.NewSubscriptions(webhook.NewStore(store.New(s.opts.Pool)), s.opts.Webhooks, s.opts.MaxSubscriptions,
		s.opts.WebhookSealer, s.opts.WebhookSecretOverlap)}
	ev := &eventHandlers{feed: events.NewFeed(s.q)}
	received := &submissionHandlers{subs: submission.New(s.opts.Pool, s.opts.Files, s.events), downloads: downloads}
	notices := &notificationHandlers{notices: s.opts.Notifications}
	if notices.notices == nil {
		notices.notices = notification.New(s.opts.Pool, nil, notification.Configured{}) // orders can be followed; new ones answer 503
	}
	sent := &correspondenceHandlers{sends: s.opts.Correspondence}
	if sent.sends == nil {
		sent.sends = correspondence.New(s.opts.Pool, s.opts.Files, nil, s.events, nil, notices.notices) // shipments can be followed; sends answer 503
	}
	docs := newDocsHandlers()

	root := t.open(&r.RouterGroup)
	root.get("/healthz", nil, s.healthz)
	root.get("/readyz", nil, s.readyz)

	api := r.Group("/api")

	openGroup := api.Group("", s.openCORS)
	open := t.open(openGroup)
	hal := t.open(openGroup.Group("", s.negotiate))
	hal.get("/metadata", nil, md.listServices)
	hal.get("/metadata/formtask/:serviceCode/:serviceEdition", nil, md.getFormTaskService)
	hal.get("/metadata/correspondence/:serviceCode/:serviceEdition", nil, md.getCorrespondenceService)
	hal.get("/metadata/codelists", nil, md.listCodeLists)
	hal.get("/metadata/codelists/:name/:version", nil, md.getCodeList)
	hal.get("/metadata/rolerequirements", nil, md.listRoleRequirements)
	open.get("/metadata/formtask/:serviceCode/:serviceEdition/forms/:dataFormatId/:dataFormatVersion/xsd", nil, md.getFormSchema)
	open.get("/metadata/formtask/:serviceCode/:serviceEdition/attachmentrules/:ruleId/xsd", nil, md.getAttachmentRuleSchema)
	open.post("/authentication/authenticatewithpassword", nil, id.authenticateWithPassword)
	open.post("/authentication/logout", nil, id.logout)
	open.delete("/authentication/logout", nil, id.logout)
	open.get("/openapi.json", nil, s.serveOpenAPIJSON)
	open.get("/openapi.yaml", nil, s.serveOpenAPIYAML)
	// The reference page, a browser's reading of the OpenAPI document.
	open.get("/docs", nil, docs.getPage)
	open.get("/docs/redoc.standalone.js", nil, docs.getScript)

	reportees := t.area(areaReportees, api.Group("/reportees", s.requireKey(areaReportees), s.negotiate, s.authenticate))
	reportees.get("", anyOf(scopeReportees), id.listReportees)
	reportees.get("/:reporteeId", anyOf(scopeReportees), id.getReportee)
	reportees.post("/reporteeconversion", anyOf(scopeReportees), id.convertReportee)
	// The organizations the caller may represent, in the reportees area: they are the organizations of its reportees.
	organizations := t.area(areaReportees, api.Group("/organizations", s.requireKey(areaReportees), s.negotiate, s.authenticate))
	organizations.get("", anyOf(scopeReportees), id.listOrganizations)
	organizations.get("/:organizationNumber", anyOf(scopeReportees), id.getOrganization)

	read, meta, write := anyOf(scopeInstancesRead), anyOf(scopeInstancesMeta, scopeInstancesRead), anyOf(scopeInstancesWrite)
	mailboxGroup := api.Group("", s.requireKey(areaMailbox), s.authenticate)
	mailbox := t.area(areaMailbox, mailboxGroup)
	mailbox.get("/my/messagebox", meta, s.negotiate, mb.getMessagebox)
	mailbox.get("/all/messagebox", meta, s.negotiate, mb.getMessagebox)
	mailbox.get("/all/messages", meta, s.negotiate, mb.listAllMessages)
	messages := t.area(areaMailbox, mailboxGroup.Group("/:who/messages", s.resolveWho))
	messages.get("", meta, s.negotiate, mb.listMessages)
	messages.create("", write, s.negotiate, ft.postFormTask)
	messages.get("/:messageId", read, s.negotiate, mb.getMessage)
	messages.put("/:messageId", write, s.negotiate, ft.putFormTask)
	messages.get("/:messageId/validate", read, s.negotiate, ft.validateFormTask)
	messages.get("/:messageId/print", read, ft.getPrint)
	messages.put("/:messageId/forms/:formId", write, ft.putSubForm)
	messages.create("/:messageId/attachments", write, ft.postAttachment)
	messages.create("/:messageId/attachments/streamedattachment", write, ft.postStreamedAttachment)
	messages.get("/:messageId/forms/:formId", read, s.negotiate, mb.getForm)
	messages.get("/:messageId/forms/:formId/formdata", read, mb.getFormData)
	messages.get("/:messageId/attachments/:attachmentId", read, mb.getAttachment)
	// The forms and attachments of a message, and the changes of one of them.
	messages.get("/:messageId/forms", read, s.negotiate, mb.listForms)
	messages.create("/:messageId/forms", write, ft.postForm)
	messages.delete("/:messageId/forms/:formId", write, ft.deleteForm)
	messages.get("/:messageId/forms/:formId/print", read, ft.getFormPrint)
	messages.get("/:messageId/attachments", read, s.negotiate, mb.listAttachments)
	messages.post("/:messageId/attachments/:attachmentId", write, ft.replaceAttachment)
	messages.delete("/:messageId/attachments/:attachmentId", write, ft.deleteAttachment)
	messages.get("/:messageId/portalview", read, mb.getPortalView)
	// The life of a message: archive, confirm, the trashbin ("trashbin" is a literal, never a message id).
	messages.put("/:messageId/archive", write, s.negotiate, lc.archiveMessage)
	messages.put("/:messageId/confirm", write, s.negotiate, lc.confirmMessage)
	messages.delete("/:messageId", write, s.negotiate, lc.deleteMessage)
	messages.get("/trashbin", meta, s.negotiate, lc.listTrashbin)
	messages.get("/trashbin/:messageId", read, s.negotiate, lc.getTrashedMessage)
	messages.put("/:messageId/restore", write, s.negotiate, lc.restoreMessage)
	messages.delete("/trashbin/:messageId", write, s.negotiate, lc.purgeMessage)
	messages.get("/:messageId/signingtext", read, s.negotiate, mb.getSigningText)
	// Signing by several (signing.go): the task's signees, its signatures, and back to Utfylling.
	messages.get("/:messageId/signees", read, s.negotiate, ft.getSignees)
	messages.put("/:messageId/signees", write, s.negotiate, ft.putSignees)
	messages.get("/:messageId/signatures", read, s.negotiate, ft.getSignatures)
	messages.delete("/:messageId/signatures", write, s.negotiate, ft.deleteSignatures)
	// The tasks {who} is asked to sign as a named signee, readable and signed without rights for their party.
	signing := t.area(areaMailbox, mailboxGroup.Group("/:who/signing", s.resolveWho, s.negotiate))
	signing.get("", read, ft.listSigning)
	signing.get("/:messageId", read, ft.getSigningTask)
	signing.post("/:messageId", write, ft.signTask)
	messages.get("/:messageId/custommessagedata", read, s.negotiate, mb.getCustomMessageData)
	// The events feed of {who}: what the caller may see of it (see events.go).
	feed := t.area(areaMailbox, mailboxGroup.Group("/:who/events", s.resolveWho))
	feed.get("", meta, negotiateEvents, ev.listReporteeEvents)

	// Webhook subscriptions of {who}: they get the events the caller may read in the mailbox.
	subscriptions := t.area(areaMailbox, mailboxGroup.Group("/:who/events/subscriptions", s.resolveWho, s.negotiate))
	subscriptionRoutes(subscriptions, subs, meta, read)

	// Authorization (user-facing): roles, rights, delegations, deletions and the audit log, and the local
	// role definitions of {who}. Role deletes resolve {who} themselves: it may also be a user name.
	authz := t.area(areaAuthorization, api.Group("/:who/authorization", s.requireKey(areaAuthorization), s.negotiate, s.authenticate))
	authz.get("/roles", anyOf(scopeRightsRead), s.resolveWho, az.listUserRoles)
	authz.delete("/roles/:roleId", anyOf(scopeRightsWrite), s.resolveWhoOrUser, az.deleteUserRole)
	authz.get("/rights", anyOf(scopeRightsRead), s.resolveWho, az.listUserRights)
	authz.delete("/rights/:rightId", anyOf(scopeRightsWrite), s.resolveWho, az.deleteUserRight)
	authz.get("/delegations", anyOf(scopeDelegationsRead), s.resolveWho, az.listDelegations)
	authz.create("/delegations", anyOf(scopeDelegationsWrite), s.resolveWho, az.delegateRoles)
	authz.get("/auditlog", anyOf(scopeDelegationsRead, scopeRightsRead), s.resolveWho, az.listAuditLog)
	// One receiver of {who}'s delegations, as Altinn 2 offers it (delegations.go).
	authz.get("/delegations/:receiverId", anyOf(scopeDelegationsRead), s.resolveWho, az.getReceiverDelegations)
	authz.get("/delegations/:receiverId/roles", anyOf(scopeDelegationsRead), s.resolveWho, az.listReceiverRoles)
	authz.get("/delegations/:receiverId/rights", anyOf(scopeDelegationsRead), s.resolveWho, az.listReceiverRights)
	authz.delete("/delegations", anyOf(scopeDelegationsWrite), s.resolveWho, az.deleteDelegation)
	authz.delete("/delegations/:receiverId/roles/:roleId", anyOf(scopeDelegationsWrite), s.resolveWho, az.deleteReceiverRole)
	authz.delete("/delegations/:receiverId/rights/:ruleId", anyOf(scopeDelegationsWrite), s.resolveWho, az.deleteReceiverRight)
	authz.delete("/rights/:rightId/rights/:ruleId", anyOf(scopeRightsWrite, scopeDelegationsWrite), s.resolveWho, az.deleteRightOfReceiver)
	authz.get("/reportee/:receiverId", anyOf(scopeDelegationsRead, scopeRightsRead), s.resolveWho, az.getReceiverReportee)
	authz.get("/attachments/:receiverId", anyOf(scopeDelegationsRead, scopeRightsRead), s.resolveWho, az.getAttachmentAccess)
	roleDefs := t.area(areaRoleDefinitions, api.Group("/:who/authorization/roledefinitions", s.requireKey(areaRoleDefinitions), s.negotiate, s.authenticate, s.resolveWho))
	roleDefs.get("", anyOf(scopeRoleDefsRead), az.listUserRoleDefinitions)
	roleDefs.create("", anyOf(scopeRoleDefsWrite), az.createLocalRole)
	roleDefs.get("/:roleDefinitionId", anyOf(scopeRoleDefsRead), az.getUserRoleDefinition)
	roleDefs.put("/:roleDefinitionId", anyOf(scopeRoleDefsWrite), az.updateLocalRole)
	roleDefs.delete("/:roleDefinitionId", anyOf(scopeRoleDefsWrite), az.deleteLocalRole)

	// Service owners: organization tokens with the service-owner scopes, or enterprise certificates
	// (?ForceEIAuthentication), of registered service owners calling with a key of their own; every
	// call is audited, refused ones included.
	ownerChain := func(negotiate gin.HandlerFunc) []gin.HandlerFunc {
		return []gin.HandlerFunc{s.auditServiceOwner, s.requireKey(areaServiceOwner), negotiate, s.authenticateServiceOwner, s.requireServiceOwner}
	}
	owners := t.area(areaServiceOwner, api.Group("/serviceowner", ownerChain(s.negotiate)...))
	orgs, rolesAndRights := anyOf(scopeSOOrganizations), anyOf(scopeSORolesAndRights)
	owners.get("/organizations", orgs, so.soListOrganizations)
	owners.get("/organizations/:who", orgs, so.soGetOrganization)
	owners.get("/organizations/:who/officialcontacts", orgs, so.soOfficialContacts)
	owners.get("/organizations/:who/personalcontacts", orgs, so.soPersonalContacts)
	owners.get("/organizations/:who/personalcontacts/:person/roles", orgs, so.soPersonalContactRoles)
	owners.get("/authorization/roles", rolesAndRights, so.soAuthorizationRoles)
	owners.get("/authorization/rights", rolesAndRights, so.soAuthorizationRights)
	owners.get("/roledefinitions", anyScope, so.soListRoleDefinitions)
	owners.get("/roledefinitions/:roleDefinitionId", anyScope, so.soGetRoleDefinition)
	owners.get("/reportees", anyOf(scopeSOReportees), so.soListReportees)
	soEvents := anyOf(scopeSOEvents)
	subscriptionRoutes(t.area(areaServiceOwner, owners.group.Group("/events/subscriptions")), subs, soEvents, soEvents)
	// The feed also offers the CloudEvents batch form, so it negotiates among more media types.
	ownerEvents := t.area(areaServiceOwner, api.Group("/serviceowner/events", ownerChain(negotiateEvents)...))
	ownerEvents.get("/feed", anyOf(scopeSOEvents), ev.listServiceOwnerEvents)

	// The agency's download queue: the parts are not HAL, so each route negotiates (or not) on its own.
	queue := t.area(areaServiceOwner, api.Group("/serviceowner/submissions",
		s.auditServiceOwner, s.requireKey(areaServiceOwner), s.authenticateServiceOwner, s.requireServiceOwner))
	readQueue, confirm := anyOf(scopeSOSubmissionsRead), anyOf(scopeSOSubmissionsWrite)
	queue.get("", readQueue, s.negotiate, received.listSubmissions)
	queue.get("/:archiveReference", readQueue, negotiateSubmission, received.getSubmission)
	queue.get("/:archiveReference/forms/:formId/formdata", readQueue, received.getSubmissionFormData)
	queue.get("/:archiveReference/attachments/:attachmentId", readQueue, received.getSubmissionAttachment)
	queue.get("/:archiveReference/print", readQueue, received.getSubmissionPrint)
	queue.get("/:archiveReference/log", readQueue, s.negotiate, received.listSubmissionLog)
	queue.put("/:archiveReference/confirm", confirm, s.negotiate, received.confirmSubmission)
	// Where every message of the caller's services stands: who has not submitted yet.
	owners.get("/messages", readQueue, received.listOwnerMessages)

	// The agency's sending: a shipment of correspondence to many recipients, followed per recipient.
	readSent, send := anyOf(scopeSOCorrespondenceRead), anyOf(scopeSOCorrespondenceWrite)
	owners.create("/correspondence", send, sent.sendCorrespondence)
	owners.create("/correspondence/attachments", send, sent.uploadAttachment)
	owners.get("/correspondence/shipments/:shipmentId", readSent, sent.getShipment)
	owners.delete("/correspondence/:messageId", send, sent.retractCorrespondence)
	owners.create("/formtasks", anyOf(scopeSOFormTasksWrite), sent.prefillFormTask)
	// Notifications by e-mail and SMS of messages of the caller's services, with their reminders.
	readNotices, notify := anyOf(scopeSONotificationsRead), anyOf(scopeSONotificationsWrite)
	owners.create("/messages/:messageId/notifications", notify, notices.orderNotification)
	owners.get("/messages/:messageId/notifications", readNotices, notices.listMessageNotifications)
	owners.get("/notifications/:orderId", readNotices, notices.getNotification)

	s.routeList, s.routeIndex = t.routes, t.index()
	return newPathNormalizer(r, s.preflight)
}

// subscriptionRoutes registers the webhook subscription routes on g (…/events/subscriptions): reading
// with the scopes list, changing with change.
func subscriptionRoutes(g routeGroup, h *subscriptionHandlers, list, change []string) {
	g.create("", change, h.createSubscription)
	g.get("", list, h.listSubscriptions)
	g.get("/:subscriptionId", list, h.getSubscription)
	g.delete("/:subscriptionId", change, h.deleteSubscription)
	g.get("/:subscriptionId/deadletters", list, h.listDeadLetters)
	g.post("/:subscriptionId/deadletters/replay", change, h.replayDeadLetters)
	g.post("/:subscriptionId/secret", change, h.rotateSecret)
}

// Route is one registered route, as the router serves it: the list of them is what an OpenAPI
// description can be made from.
type Route struct {
	Method string
	// Path is the gin pattern, e.g. /api/:who/messages/:messageId.
	Path string
	// Area is the API-key area the route belongs to; "" for the open routes (health, metadata,
	// authentication), which need neither a key nor a login, and so no scope.
	Area string
	// Scopes are the token scopes of which any one lets a bearer token call the route, beside the general
	// scopes of its area (generalScopes); an empty list admits a token with any scope. Nil on open routes.
	Scopes []string
	// Idempotent marks a POST that creates: an Idempotency-Key makes retrying it safe (idempotency.go).
	Idempotent bool
	// Negotiated marks a route behind content negotiation: it answers 406 to an Accept of no media type it has.
	Negotiated bool
	// Handler is the route's own handler, the last of its chain.
	Handler gin.HandlerFunc
}

// Routes lists every route of the service with its area and scopes, in the order they were registered.
func (s *Server) Routes() []Route { return s.routeList }

// routeTable records the routes as they are registered on the router.
type routeTable struct {
	routes []Route
	// idempotent is the middleware of the creating routes.
	idempotent gin.HandlerFunc
	// negotiators are the content negotiations, found in a route's chain to mark it Negotiated.
	negotiators []gin.HandlerFunc
}

// routeGroup registers routes on one gin group, all of one area (or open).
type routeGroup struct {
	table *routeTable
	group *gin.RouterGroup
	area  string
}

func (t *routeTable) open(g *gin.RouterGroup) routeGroup { return routeGroup{table: t, group: g} }

func (t *routeTable) area(name string, g *gin.RouterGroup) routeGroup {
	return routeGroup{table: t, group: g, area: name}
}

// anyOf is a route's scope set: any one of the scopes lets a bearer token call it.
func anyOf(scopes ...string) []string { return scopes }

// anyScope marks a route that a bearer token may call with any scope (the service-owner role definitions
// need no particular scope).
var anyScope = []string{}

func (g routeGroup) get(path string, scopes []string, h ...gin.HandlerFunc) {
	g.handle(http.MethodGet, path, scopes, h)
}

func (g routeGroup) post(path string, scopes []string, h ...gin.HandlerFunc) {
	g.handle(http.MethodPost, path, scopes, h)
}

// create registers a POST that creates something; an Idempotency-Key makes retrying it safe. The key is
// checked first on the route, behind the group's key and authentication.
func (g routeGroup) create(path string, scopes []string, h ...gin.HandlerFunc) {
	g.register(Route{Method: http.MethodPost, Scopes: scopes, Idempotent: true}, path, append([]gin.HandlerFunc{g.table.idempotent}, h...))
}

func (g routeGroup) put(path string, scopes []string, h ...gin.HandlerFunc) {
	g.handle(http.MethodPut, path, scopes, h)
}

func (g routeGroup) delete(path string, scopes []string, h ...gin.HandlerFunc) {
	g.handle(http.MethodDelete, path, scopes, h)
}

func (g routeGroup) handle(method, path string, scopes []string, h []gin.HandlerFunc) {
	g.register(Route{Method: method, Scopes: scopes}, path, h)
}

// register serves r on the group's path and records it, with the group's area and its own handler.
func (g routeGroup) register(r Route, path string, h []gin.HandlerFunc) {
	g.group.Handle(r.Method, path, h...)
	r.Path = g.group.BasePath() + path
	if g.group.BasePath() == "/" {
		r.Path = path
	}
	r.Area, r.Handler = g.area, h[len(h)-1]
	r.Negotiated = slices.ContainsFunc(append(slices.Clone(g.group.Handlers), h...), func(f gin.HandlerFunc) bool {
		return slices.ContainsFunc(g.table.negotiators, func(n gin.HandlerFunc) bool {
			return reflect.ValueOf(f).Pointer() == reflect.ValueOf(n).Pointer() // the same code for every method value
		})
	})
	g.table.routes = append(g.table.routes, r)
}

// index finds a route by "METHOD path", for the scope check of every request.
func (t *routeTable) index() map[string]Route {
	m := make(map[string]Route, len(t.routes))
	for _, r := range t.routes {
		m[r.Method+" "+r.Path] = r
	}
	return m
}
