package api

import (
	"maps"
	"net/http"

	"github.com/postbox/postbox/api/openapi"
	"github.com/postbox/postbox/events"

	"github.com/postbox/postbox/store"
)

// routeDocs documents every route of router.go, keyed by "METHOD path" as registered; the OpenAPI document
// (openapi.go) is made from it and the Go types named here. A route registered without an entry here, or an
// entry for no route, fails TestOpenAPIDocumentsEveryRoute, which prints the entry to add.
//
// Statuses every route can answer (401/403/429 of its area, 406, 400, 404, 413, 503, ...) are added by
// openapi.go from the route's area and kind; list here only what the handler itself answers.
var routeDocs = joinDocs(mailboxRouteDocs, agencyRouteDocs, signingRouteDocs)

// joinDocs is the one map of route docs made of the parts, which name different routes.
func joinDocs(parts ...map[string]routeDoc) map[string]routeDoc {
	out := map[string]routeDoc{}
	for _, p := range parts {
		maps.Copy(out, p)
	}
	return out
}

// mailboxRouteDocs document the routes of the parties' side, the metadata, the events and the owner's
// reads; agencyRouteDocs (openapi_routes_agency.go) the agency's receiving, sending and notifying.
var mailboxRouteDocs = map[string]routeDoc{
	"GET /healthz": {Summary: "Liveness: the process serves requests", Tag: "Health",
		OK: answerOf(http.StatusOK, "alive", rawJSON, healthStatus{})},
	"GET /readyz": {Summary: "Readiness: the database answers (Temporal's state is reported, not required)", Tag: "Health",
		OK:   answerOf(http.StatusOK, "ready: status ok, or degraded while Temporal cannot be reached (form-task changes answer 503 meanwhile)", rawJSON, readinessOK{}),
		More: []answer{answerOf(http.StatusServiceUnavailable, "not ready: the database cannot be reached; the state of each dependency", "application/problem+json", readiness{}, "Retry-After")}},

	// Metadata (open).
	"GET /api/metadata": {Summary: "List the services", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of services", negotiated, collectionOf("metadata", serviceEntry{}))},
	"GET /api/metadata/formtask/:serviceCode/:serviceEdition": {Summary: "Read a form-task service: forms, process steps, attachment rules", Query: params(languageParam),
		OK: answerOf(http.StatusOK, "the service", negotiated, serviceDetail{})},
	"GET /api/metadata/correspondence/:serviceCode/:serviceEdition": {Summary: "Read a correspondence service",
		OK: answerOf(http.StatusOK, "the service", negotiated, serviceEntry{})},
	"GET /api/metadata/codelists": {Summary: "List the code lists", Query: params(append(listOptions, languageParam)...),
		OK: answerOf(http.StatusOK, "a page of code lists", negotiated, collectionOf("codelists", codeListEntry{}))},
	"GET /api/metadata/codelists/:name/:version": {Summary: "Read a code list with its codes", Query: params(languageParam),
		OK: answerOf(http.StatusOK, "the code list", negotiated, codeListDetail{})},
	"GET /api/metadata/formtask/:serviceCode/:serviceEdition/forms/:dataFormatId/:dataFormatVersion/xsd": {
		Summary: "Read the XSD of a form's data model",
		OK:      answerOf(http.StatusOK, "the XML Schema", "application/xml", xmlDocument)},

	"GET /api/metadata/formtask/:serviceCode/:serviceEdition/attachmentrules/:ruleId/xsd": {
		Summary: "Read the XSD an attachment type's attachments are validated against (IsXsdValidationRequired)",
		OK:      answerOf(http.StatusOK, "the XML Schema", "application/xml", xmlDocument)},

	"GET /api/metadata/rolerequirements": {Summary: "List the platform roles that grant rights on a service edition, with those rights",
		Query:    params(append(listOptions, param{"serviceCode", "the service code", "string", true}, param{"serviceEditionCode", "the service edition", "integer", true})...),
		OK:       answerOf(http.StatusOK, "a page of role requirements", negotiated, collectionOf("rolerequirements", roleRequirement{})),
		Problems: statuses(http.StatusNotFound)},

	// Authentication (open).
	"POST /api/authentication/authenticatewithpassword": {Summary: "Log in with user name and password",
		Description: "Sets the session cookie .ASPXAUTH. With ?ForceEIAuthentication an enterprise user logs in, over TLS with the organization's certificate.",
		Query:       params(param{"ForceEIAuthentication", "log in an enterprise user with the enterprise certificate of the TLS connection", flag, false}),
		Body:        &requestDoc{Media: jsonOnly, Type: passwordLogin{}, Example: map[string]any{"UserName": "<user name>", "UserPassword": "<password>"}},
		OK:          answerOf(http.StatusOK, "logged in: the session cookie is set, and the answer says its security level and when it ends", "application/hal+json", loginResource{}, "Set-Cookie"),
		Problems:    statuses(http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests)},
	"POST /api/authentication/logout":   {Summary: "Log out (end the session of the cookie)", OK: answerOf(http.StatusNoContent, "logged out; the cookie is cleared", "", nil, "Set-Cookie")},
	"DELETE /api/authentication/logout": {OperationID: "deleteSession", Summary: "Log out (end the session of the cookie)", OK: answerOf(http.StatusNoContent, "logged out; the cookie is cleared", "", nil, "Set-Cookie")},

	"GET /api/openapi.json": {Summary: "This OpenAPI 3.1 document, as JSON", Tag: "Metadata",
		OK: answerOf(http.StatusOK, "the document", "application/json", openapiDocumentSchema, "ETag"), Conditional: true},
	"GET /api/openapi.yaml": {Summary: "This OpenAPI 3.1 document, as YAML", Tag: "Metadata",
		OK: answerOf(http.StatusOK, "the document", "application/yaml", openapiDocumentSchema, "ETag"), Conditional: true},
	"GET /api/docs": {OperationID: "getDocsPage", Summary: "This document as a reference page to read in a browser (Redoc)", Tag: "Metadata",
		OK: answerOf(http.StatusOK, "the page", "text/html", htmlText, "ETag"), Conditional: true},
	"GET /api/docs/redoc.standalone.js": {OperationID: "getDocsScript", Summary: "The reference page's script (Redoc, embedded in the binary)", Tag: "Metadata",
		OK: answerOf(http.StatusOK, "the script", "text/javascript", javascriptText, "ETag"), Conditional: true},

	// Reportees.
	"GET /api/reportees": {Summary: "List the parties the caller may represent", Query: params(append(listOptions, serviceFilter...)...),
		OK: answerOf(http.StatusOK, "a page of reportees", negotiated, collectionOf("reportees", reporteeResource{}))},
	"GET /api/reportees/:reporteeId": {Summary: "Read a reportee",
		OK: answerOf(http.StatusOK, "the reportee", negotiated, reporteeResource{})},
	"POST /api/reportees/reporteeconversion": {Summary: "Find the reportee of a national identity number and last name",
		Body:     &requestDoc{Media: jsonOnly, Type: reporteeConversionBody{}, Example: map[string]any{"SocialSecurityNumber": "<11 digits>", "LastName": "<last name>"}},
		OK:       answerOf(http.StatusOK, "the reportee", negotiated, reporteeResource{}),
		Problems: statuses(http.StatusBadRequest)},

	"GET /api/organizations": {Summary: "List the organizations the caller may represent", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of organizations", negotiated, collectionOf("organizations", soOrganizationResource{}))},
	"GET /api/organizations/:organizationNumber": {Summary: "Read an organization the caller may represent",
		OK: answerOf(http.StatusOK, "the organization", negotiated, soOrganizationResource{})},

	// Mailbox.
	"GET /api/my/messagebox": {OperationID: "getMyMessagebox", Summary: "Summarise the mailboxes of everyone the caller represents", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of mailbox summaries", negotiated, collectionOf("mailboxes", mailboxSummary{}))},
	"GET /api/all/messagebox": {OperationID: "getAllMessagebox", Summary: "Summarise the mailboxes of everyone the caller represents", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of mailbox summaries", negotiated, collectionOf("mailboxes", mailboxSummary{}))},
	"GET /api/all/messages": {Summary: "List the messages of every party the caller represents", Query: params(append(listOptions, searchParam)...),
		OK: answerOf(http.StatusOK, "a page of messages", negotiated, collectionOf("messages", messageResource{}))},
	"GET /api/:who/messages": {Summary: "List the messages of {who}", Query: params(append(listOptions, searchParam)...),
		OK: answerOf(http.StatusOK, "a page of messages", negotiated, collectionOf("messages", messageResource{}))},
	"POST /api/:who/messages": {Summary: "Create a form task, empty or with forms and attachments; complete and sign it in the same request",
		Query: params(param{"complete", "move the new task on as a PUT with complete=true would (default false: it stays in Utfylling)", "boolean", false},
			param{"sign", "sign it as well, as a PUT with sign=true would (default false)", "boolean", false}),
		Body: &requestDoc{Media: jsonOnly, Type: formTaskBody{}, Example: map[string]any{"Type": "FormTask", "ServiceCode": "<service code>", "ServiceEdition": 1,
			"_embedded": map[string]any{"forms": []any{map[string]any{"Type": "MainForm", "DataFormatId": "3106", "DataFormatVersion": 21845, "FormData": "<Skjema>...</Skjema>"}}}}},
		OK:       answerOf(http.StatusCreated, "the form task, in Utfylling or as complete and sign left it", negotiated, messageResource{}, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusUnsupportedMediaType)},
	"GET /api/:who/messages/:messageId": {Summary: "Read a message (marks a correspondence read)", Query: params(param{"markAsRead", "false leaves a correspondence unread", "boolean", false}),
		OK: answerOf(http.StatusOK, "the message", negotiated, messageResource{}, "ETag"), Conditional: true},
	"PUT /api/:who/messages/:messageId": {Summary: "Replace a form task's forms and attachments; complete and sign it",
		Query:    params(param{"complete", "move the task on (default true)", "boolean", false}, param{"sign", "sign it as well (default true)", "boolean", false}),
		Body:     &requestDoc{Media: jsonOnly, Type: formTaskBody{}, Optional: true},
		OK:       answerOf(http.StatusOK, "the form task as the change left it", negotiated, messageResource{}),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusPreconditionFailed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)},
	"GET /api/:who/messages/:messageId/validate": {Summary: "Validate a form task's current forms",
		OK: answerOf(http.StatusOK, "the validation result (Success false with errors is still 200). As the interface's rule says, "+
			"with errors both ValidationErrors and ValidationWarnings list every error and warning; without errors "+
			"ValidationErrors is empty and ValidationWarnings lists the warnings", negotiated, validationResource{}), Problems: statuses(http.StatusConflict)},
	"GET /api/:who/messages/:messageId/print": {Summary: "Read the PDF of a form task",
		OK: answerOf(http.StatusOK, "the PDF", "application/pdf", binary), Problems: statuses(http.StatusConflict), Download: true},
	"PUT /api/:who/messages/:messageId/forms/:formId": {Summary: "Change a sub-form, or add one when formId names none",
		Body:     &requestDoc{Media: jsonOnly, Type: formBody{}},
		OK:       answerOf(http.StatusOK, "changed", "", nil, "Location"),
		More:     []answer{answerOf(http.StatusCreated, "added", "", nil, "Location")},
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusPreconditionFailed, http.StatusUnsupportedMediaType)},
	"POST /api/:who/messages/:messageId/attachments": {Summary: "Add a base64 attachment to a form task",
		Body:     &requestDoc{Media: jsonOnly, Type: attachmentBody{}, Example: map[string]any{"FileName": "<file name>", "AttachmentType": "<type>", "Data": "<base64>"}},
		OK:       answerOf(http.StatusCreated, "added", "", nil, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)},
	"POST /api/:who/messages/:messageId/attachments/streamedattachment": {Summary: "Stream a larger attachment into a form task",
		Query:    params(param{"fileName", "the attachment's file name", "string", true}, param{"attachmentType", "its attachment type (AttachmentTypeName of a rule)", "string", true}),
		Body:     &requestDoc{Media: []string{"application/octet-stream"}, Type: binary},
		OK:       answerOf(http.StatusCreated, "added", "", nil, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)},
	"GET /api/:who/messages/:messageId/forms/:formId": {Summary: "Read a form of a message",
		OK: answerOf(http.StatusOK, "the form", negotiated, formResource{}, "ETag"), Conditional: true},
	"GET /api/:who/messages/:messageId/forms/:formId/formdata": {Summary: "Read a form's data as XML",
		OK: answerOf(http.StatusOK, "the form data", "application/xml", xmlDocument, "ETag"), Conditional: true},
	"GET /api/:who/messages/:messageId/attachments/:attachmentId": {Summary: "Download an attachment (Range requests allowed)",
		OK:          answerOf(http.StatusOK, "the attachment's bytes, in its own content type", "*/*", binary, "ETag"),
		More:        []answer{presignedRedirect},
		Conditional: true, Download: true},
	"GET /api/:who/messages/:messageId/portalview": {Summary: "Read the portal presentation of a message",
		OK: answerOf(http.StatusOK, "an HTML page", "text/html", htmlText)},
	"PUT /api/:who/messages/:messageId/archive": {Summary: "Archive a correspondence",
		OK: answerOf(http.StatusOK, "the message as the change left it", negotiated, messageResource{}), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},
	"PUT /api/:who/messages/:messageId/confirm": {Summary: "Confirm a correspondence that asks for it",
		OK: answerOf(http.StatusOK, "the message as the change left it", negotiated, messageResource{}), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},
	"DELETE /api/:who/messages/:messageId": {Summary: "Move a message to the trashbin",
		OK: answerOf(http.StatusNoContent, "in the trashbin", "", nil), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},
	"GET /api/:who/messages/trashbin": {Summary: "List the trashbin of {who}", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of deleted messages", negotiated, collectionOf("messages", messageResource{}))},
	"GET /api/:who/messages/trashbin/:messageId": {Summary: "Read a message of the trashbin",
		OK: answerOf(http.StatusOK, "the deleted message", negotiated, messageResource{})},
	"PUT /api/:who/messages/:messageId/restore": {Summary: "Restore a message from the trashbin",
		OK: answerOf(http.StatusOK, "the message as the change left it", negotiated, messageResource{}), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},
	"DELETE /api/:who/messages/trashbin/:messageId": {Summary: "Delete a message of the trashbin for good",
		OK: answerOf(http.StatusNoContent, "gone", "", nil), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},
	"GET /api/:who/messages/:messageId/signingtext": {Summary: "Read the text a signer of the form task confirms", Query: params(languageParam),
		OK: answerOf(http.StatusOK, "the signing text", negotiated, signingTextResource{}), Problems: statuses(http.StatusConflict)},
	"GET /api/:who/messages/:messageId/custommessagedata": {Summary: "Read the service owner's extra data of a message",
		OK: answerOf(http.StatusOK, "the key/value pairs", negotiated, collectionOf("custommessagedata", store.CustomData{}))},

	"GET /api/:who/messages/:messageId/forms": {Summary: "List the forms of a form task",
		OK: answerOf(http.StatusOK, "the forms", negotiated, collectionOf("forms", formResource{}), "ETag"), Conditional: true,
		Problems: statuses(http.StatusConflict)},
	"POST /api/:who/messages/:messageId/forms": {Summary: "Add a sub-form to a form task",
		Body:     &requestDoc{Media: jsonOnly, Type: formBody{}, Example: map[string]any{"Type": "SubForm", "DataFormatId": "<id>", "DataFormatVersion": 1, "FormData": "<melding>...</melding>"}},
		OK:       answerOf(http.StatusCreated, "added", "", nil, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusPreconditionFailed)},
	"DELETE /api/:who/messages/:messageId/forms/:formId": {Summary: "Delete a sub-form of a form task",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},
	"GET /api/:who/messages/:messageId/attachments": {Summary: "List the attachments of a message",
		OK: answerOf(http.StatusOK, "the attachments", negotiated, collectionOf("attachments", attachmentResource{}), "ETag"), Conditional: true},
	"POST /api/:who/messages/:messageId/attachments/:attachmentId": {Summary: "Replace an attachment's content",
		Description: "The body is the new file's bytes (application/octet-stream, ?fileName= to rename it, Content-Digest: sha-256=:…: for types with IsCheckSumAllowed) " +
			"or JSON as for POST …/attachments (FileName optional; AttachmentType, if given, the attachment's own).",
		Query: params(param{"fileName", "the new file name (streamed body; the old one by default)", "string", false}),
		Body: &requestDoc{Media: []string{"application/octet-stream", "application/json", "application/hal+json"}, Schema: &openapi.Schema{
			OneOf: []*openapi.Schema{binary, openapi.Ref("AttachmentBody")}}},
		OK:       answerOf(http.StatusNoContent, "replaced", "", nil, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusPreconditionFailed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)},
	"DELETE /api/:who/messages/:messageId/attachments/:attachmentId": {Summary: "Delete an attachment of a form task",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},

	"GET /api/:who/messages/:messageId/forms/:formId/print": {Summary: "Read the PDF of one form of a form task",
		OK: answerOf(http.StatusOK, "the PDF", "application/pdf", binary), Problems: statuses(http.StatusConflict), Download: true},

	// Events: the feeds, and webhook subscriptions.
	"GET /api/:who/events": {Tag: "Events", Summary: "Read the events of {who} the caller may see, oldest first, after a sequence number",
		Query: params(param{"after", "the sequence number of the last event read (0: from the start)", "integer", false},
			param{"size", "at most this many events (1 to 200, default 50)", "integer", false}),
		OK: eventFeed},
	"GET /api/serviceowner/events/feed": {Tag: "Events", Summary: "Read the events of the service owner's services, oldest first, after a sequence number",
		Query: params(param{"eventOffset", "the sequence number of the last event read (0: from the start)", "integer", false},
			param{"fetch", "at most this many events (1 to 200, default 50)", "integer", false}),
		OK: eventFeed},

	// Webhook subscriptions, of {who} (mailbox area) and of a service owner.
	"POST /api/:who/events/subscriptions":                                            subscriptionDocs.create,
	"GET /api/:who/events/subscriptions":                                             subscriptionDocs.list,
	"GET /api/:who/events/subscriptions/:subscriptionId":                             subscriptionDocs.get,
	"DELETE /api/:who/events/subscriptions/:subscriptionId":                          subscriptionDocs.delete,
	"GET /api/:who/events/subscriptions/:subscriptionId/deadletters":                 subscriptionDocs.deadLetters,
	"POST /api/:who/events/subscriptions/:subscriptionId/deadletters/replay":         subscriptionDocs.replay,
	"POST /api/:who/events/subscriptions/:subscriptionId/secret":                     subscriptionDocs.rotate,
	"POST /api/serviceowner/events/subscriptions":                                    subscriptionDocs.create.as("createServiceOwnerSubscription"),
	"GET /api/serviceowner/events/subscriptions":                                     subscriptionDocs.list.as("listServiceOwnerSubscriptions"),
	"GET /api/serviceowner/events/subscriptions/:subscriptionId":                     subscriptionDocs.get.as("getServiceOwnerSubscription"),
	"DELETE /api/serviceowner/events/subscriptions/:subscriptionId":                  subscriptionDocs.delete.as("deleteServiceOwnerSubscription"),
	"GET /api/serviceowner/events/subscriptions/:subscriptionId/deadletters":         subscriptionDocs.deadLetters.as("listServiceOwnerDeadLetters"),
	"POST /api/serviceowner/events/subscriptions/:subscriptionId/deadletters/replay": subscriptionDocs.replay.as("replayServiceOwnerDeadLetters"),
	"POST /api/serviceowner/events/subscriptions/:subscriptionId/secret":             subscriptionDocs.rotate.as("rotateServiceOwnerSubscriptionSecret"),

	// Authorization (user-facing).
	"GET /api/:who/authorization/roles": {Summary: "List the roles the logged-in user holds for {who}", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of roles", negotiated, collectionOf("roles", roleResource{}))},
	"DELETE /api/:who/authorization/roles/:roleId": {Summary: "Delete a delegated role",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusBadRequest)},
	"GET /api/:who/authorization/rights": {Summary: "List the rights the logged-in user holds for {who}", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of rights", negotiated, collectionOf("rights", rightResource{}))},
	"DELETE /api/:who/authorization/rights/:rightId": {Summary: "Delete a right",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusBadRequest)},
	"GET /api/:who/authorization/delegations": {Summary: "List the roles held for {who} (access managers)",
		Query: params(append(append(listOptions, serviceFilter...), param{"receiverId", "only the roles of this right holder", "string", false})...),
		OK:    answerOf(http.StatusOK, "a page of delegations", negotiated, collectionOf("delegations", delegationResource{}))},
	"POST /api/:who/authorization/delegations": {Summary: "Delegate roles to a person, organization or enterprise user",
		Description: "Roles, and single rights (one action on one service edition), under the same preconditions: the caller is access manager " +
			"for {who}, and holds the role (its rights as delegatable rights) or the right as a delegatable right, or is main administrator. " +
			"A single right is held as a role of type SingleRight that gives only it: it shows in every view of roles and rights, and " +
			"DELETE …/delegations/{receiverId}/rights/{ruleId} takes it. Rights on one message or a system resource are refused (400).",
		Body: &requestDoc{Media: []string{"application/xml", "application/hal+xml", "application/hal+json", "application/json"}, Schema: delegationBodySchema,
			Example: `<resource rel="RightHolder"><Type>person</Type><SocialSecurityNumber>…</SocialSecurityNumber><LastName>…</LastName><resource rel="Roles"><resource rel="Role"><RoleDefinitionId>88</RoleDefinitionId></resource></resource></resource>`},
		OK: answerOf(http.StatusCreated, "delegated: the receiver's id (RightHolderId, for the …/delegations/{receiverId} routes; an enterprise user's UserName instead) and the roles it now holds; Location is the receiver's delegations",
			negotiated, delegatedResource{}, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusUnsupportedMediaType)},
	"GET /api/:who/authorization/delegations/:receiverId": {Summary: "Read a receiver of {who}'s delegations: the roles it holds and the rights they give",
		OK: answerOf(http.StatusOK, "the receiver", negotiated, receiverResource{})},
	"GET /api/:who/authorization/delegations/:receiverId/roles": {Summary: "List the roles a receiver holds for {who}", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of roles", negotiated, collectionOf("roles", roleResource{}))},
	"GET /api/:who/authorization/delegations/:receiverId/rights": {Summary: "List the rights a receiver holds for {who}", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of rights", negotiated, collectionOf("rights", rightResource{}))},
	"DELETE /api/:who/authorization/delegations": {Summary: "Delete a role (roleId) or a right (authzRuleId) delegated to a receiver",
		Query: params(param{"receiverId", "the receiver", "string", true}, param{"roleId", "the role to take back", "integer", false},
			param{"authzRuleId", "the right to take back", "integer", false}),
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusConflict)},
	"DELETE /api/:who/authorization/delegations/:receiverId/roles/:roleId": {Summary: "Take a delegated role back from a receiver",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusConflict)},
	"DELETE /api/:who/authorization/delegations/:receiverId/rights/:ruleId": {Summary: "Take a delegated right back from a receiver",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusConflict)},
	"DELETE /api/:who/authorization/rights/:rightId/rights/:ruleId": {OperationID: "deleteRightOfReceiverByRule", Summary: "Take a delegated right back from a receiver (receiver as rightId)",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusConflict)},
	"GET /api/:who/authorization/reportee/:receiverId": {Summary: "Read what a receiver may do for {who}: its effective roles and rights",
		OK: answerOf(http.StatusOK, "the receiver", negotiated, receiverResource{})},
	"GET /api/:who/authorization/attachments/:receiverId": {Summary: "Tell whether a receiver may read an attachment of a message of {who}",
		Query: params(param{"messageId", "the message", "string", true}, param{"attachmentId", "the attachment", "integer", true}),
		OK:    answerOf(http.StatusOK, "the answer", negotiated, attachmentAccessResource{})},
	"GET /api/:who/authorization/auditlog": {Summary: "Read the audit log of authorization changes of {who}", Query: listOptions,
		OK: answerOf(http.StatusOK, "a page of audit entries", negotiated, collectionOf("auditlog", auditEntryResource{}))},

	// Role definitions (user-facing).
	"GET /api/:who/authorization/roledefinitions": {Summary: "List the role definitions {who} can delegate",
		OK: answerOf(http.StatusOK, "an array of role definitions", negotiated, []userRoleDefinition{})},
	"POST /api/:who/authorization/roledefinitions": {Summary: "Create a local role",
		Body:     &requestDoc{Media: jsonOnly, Type: localRoleBody{}, Example: map[string]any{"RoleName": "<name>", "RoleDescription": "<description>", "_embedded": map[string]any{"Rights": []any{map[string]any{"ServiceCode": "<code>", "ServiceEditionCode": "1", "Action": "Read"}}}}},
		OK:       answerOf(http.StatusCreated, "created", "", nil, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusUnsupportedMediaType)},
	"GET /api/:who/authorization/roledefinitions/:roleDefinitionId": {Summary: "Read a role definition with its rights",
		OK: answerOf(http.StatusOK, "the role definition", negotiated, userRoleDefinition{}, "ETag"), Conditional: true},
	"PUT /api/:who/authorization/roledefinitions/:roleDefinitionId": {Summary: "Change a local role",
		Body:     &requestDoc{Media: jsonOnly, Type: localRoleBody{}},
		OK:       answerOf(http.StatusNoContent, "changed", "", nil, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict, http.StatusPreconditionFailed, http.StatusUnsupportedMediaType)},
	"DELETE /api/:who/authorization/roledefinitions/:roleDefinitionId": {Summary: "Delete a local role",
		OK: answerOf(http.StatusNoContent, "deleted", "", nil), Problems: statuses(http.StatusConflict, http.StatusPreconditionFailed)},

	// Service owners.
	"GET /api/serviceowner/organizations": {Summary: "List organizations, or find them by contact e-mail or phone",
		Query: params(append(soListOptions, param{"email", "contact e-mail address", "string", false}, param{"phoneNumber", "contact phone number", "string", false})...),
		OK:    answerOf(http.StatusOK, "a page of organizations", negotiated, collectionOf("organizations", soOrganizationResource{}))},
	"GET /api/serviceowner/organizations/:who": {Summary: "Read an organization", Query: params(forceEI),
		OK: answerOf(http.StatusOK, "the organization", negotiated, soOrganizationResource{})},
	"GET /api/serviceowner/organizations/:who/officialcontacts": {Summary: "List an organization's official contacts", Query: soListOptions,
		OK: answerOf(http.StatusOK, "the official contacts", negotiated, collectionOf("officialcontacts", soOfficialContactResource{}))},
	"GET /api/serviceowner/organizations/:who/personalcontacts": {Summary: "List an organization's personal contacts",
		Query: params(append(append(soListOptions, serviceFilter...), param{"roleDefinitionCode", "only contacts holding this role", "string", false})...),
		OK:    answerOf(http.StatusOK, "a page of personal contacts", negotiated, collectionOf("personalcontacts", soPersonalContactResource{}))},
	"GET /api/serviceowner/organizations/:who/personalcontacts/:person/roles": {Summary: "List the roles a personal contact holds for the organization", Query: soListOptions,
		OK: answerOf(http.StatusOK, "a page of roles", negotiated, collectionOf("roles", roleResource{}))},
	"GET /api/serviceowner/authorization/roles": {Summary: "List the roles a subject holds for a reportee on the caller's services",
		Query:    params(append(soListOptions, subjectParam, reporteeParam, languageParam)...),
		OK:       answerOf(http.StatusOK, "a page of roles", negotiated, collectionOf("roles", roleResource{})),
		Problems: statuses(http.StatusNotFound)},
	"GET /api/serviceowner/authorization/rights": {Summary: "List the rights a subject holds for a reportee on the caller's services",
		Query:    params(forceEI, subjectParam, reporteeParam),
		OK:       answerOf(http.StatusOK, "the subject, the reportee and the rights", negotiated, soRightsResource{}),
		Problems: statuses(http.StatusNotFound)},
	"GET /api/serviceowner/roledefinitions": {Summary: "List the role definitions of the caller's services", Query: params(append(soListOptions, languageParam)...),
		OK: answerOf(http.StatusOK, "a page of role definitions", negotiated, collectionOf("roledefinitions", soRoleDefinitionResource{}))},
	"GET /api/serviceowner/roledefinitions/:roleDefinitionId": {Summary: "Read a role definition with its rights", Query: params(forceEI, languageParam),
		OK: answerOf(http.StatusOK, "the role definition", negotiated, soRoleDefinitionDetail{}, "ETag"), Conditional: true},
	"GET /api/serviceowner/reportees": {Summary: "List the parties a subject can represent",
		Query: params(append(append(soListOptions, serviceFilter...), subjectParam,
			param{"roleDefinitionId", "only through this role", "integer", false}, param{"showConsentReportees", "include consent reportees", "boolean", false})...),
		OK:       answerOf(http.StatusOK, "a page of reportees", negotiated, collectionOf("reportees", soReporteeResource{})),
		Problems: statuses(http.StatusNotFound)},
}

// Query parameters shared by several routes.
var (
	listOptions = []param{
		{"$skip", "skip this many elements (paging)", "integer", false},
		{"$top", "at most this many elements (at most 50)", "integer", false},
		{"$filter", "OData filter on the elements' fields, e.g. ServiceOwner eq 'name' and CreatedDate gt DateTime'2024-01-01T00:00:00'", "string", false},
		{"$orderby", "OData order, e.g. CreatedDate desc", "string", false},
	}
	forceEI       = param{"ForceEIAuthentication", "authenticate by the enterprise certificate of the TLS connection", flag, false}
	soListOptions = append(append([]param{}, listOptions...), param{"continuation", "the token of a next link: continues the list where the last page ended", "string", false}, forceEI)
	serviceFilter = []param{
		{"serviceCode", "only what concerns this service", "string", false},
		{"serviceEdition", "and this edition of it (needs serviceCode)", "integer", false},
	}
	languageParam = param{"language", "1044 (bokmål, the default), 2068 (nynorsk) or 1033 (English)", "integer", false}
	searchParam   = param{"search", "words the messages must contain", "string", false}
	subjectParam  = param{"subject", "the person or organization holding the roles or rights (national identity number or organization number)", "string", true}
	reporteeParam = param{"reportee", "the party they are held for", "string", true}
)

// healthStatus and readinessOK are the bodies of the health endpoints.
type healthStatus struct {
	Status string `json:"status"`
}

type readinessOK struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// javascriptText is the body of the reference page's script.
var javascriptText = &openapi.Schema{Type: "string", ContentMediaType: "text/javascript"}

// openapiDocumentSchema is the body of /api/openapi.json and .yaml.
var openapiDocumentSchema = &openapi.Schema{Type: "object", Description: "an OpenAPI 3.1 document"}

// subscriptionDocs document the webhook subscription routes, the same for {who} and for service owners.
var subscriptionDocs = struct{ create, list, get, delete, deadLetters, replay, rotate routeDoc }{
	create: routeDoc{Tag: "Events", Summary: "Subscribe a webhook endpoint to events (the answer shows the signing secret, once)",
		Body: &requestDoc{Media: jsonOnly, Type: subscriptionBody{}, Example: map[string]any{"EndPoint": "https://example.org/hooks/postbox", "Types": []string{"<event type>"}}},
		Description: "A caller may have POSTBOX_WEBHOOK_MAX_SUBSCRIPTIONS subscriptions that have not ended (100 by default) in each area: " +
			"a person or enterprise user for all its reportees together, a service owner its own. Beyond, 409 subscription-limit-reached; " +
			"a retry of a POST that made one, with its Idempotency-Key, is still answered 201.",
		OK:       answerOf(http.StatusCreated, "the subscription, with its secret", negotiated, subscriptionResource{}, "Location"),
		Problems: statuses(http.StatusBadRequest, http.StatusConflict)},
	list: routeDoc{Tag: "Events", Summary: "List the caller's webhook subscriptions",
		OK: answerOf(http.StatusOK, "the subscriptions", negotiated, collectionOf("subscriptions", subscriptionResource{}))},
	get: routeDoc{Tag: "Events", Summary: "Read a webhook subscription",
		OK: answerOf(http.StatusOK, "the subscription", negotiated, subscriptionResource{})},
	delete: routeDoc{Tag: "Events", Summary: "End a webhook subscription",
		OK: answerOf(http.StatusNoContent, "ended", "", nil)},
	deadLetters: routeDoc{Tag: "Events", Summary: "List the events a subscription could not deliver",
		OK: answerOf(http.StatusOK, "the dead letters", negotiated, collectionOf("deadletters", deadLetterResource{}))},
	replay: routeDoc{Tag: "Events", Summary: "Send the dead letters again (and resume a paused subscription)",
		OK: answerOf(http.StatusAccepted, "the replay is under way", negotiated, replayResource{}, "Location")},
	rotate: routeDoc{Tag: "Events", Summary: "Give a webhook subscription a new signing secret (the answer shows it, once)",
		Description: "The secret it replaces still signs every delivery beside the new one until PreviousSecretExpires " +
			"(POSTBOX_WEBHOOK_SECRET_OVERLAP, a day by default): webhook-signature then carries both signatures, so a " +
			"receiver switches to the new secret without missing a delivery. Secrets are stored sealed, never in plaintext.",
		OK: answerOf(http.StatusOK, "the subscription, with its new secret", negotiated, subscriptionResource{})},
}

// as is d under an operation id of its own (a route documented like another).
func (d routeDoc) as(operationID string) routeDoc {
	d.OperationID = operationID
	return d
}

// eventFeed is a page of an events feed: HAL, or a CloudEvents batch.
var eventFeed = answer{Status: http.StatusOK, Description: "a page of events; the next link (and the Link header) continues after the last",
	Media: negotiated, Body: collectionOf("events", eventResource{}), Headers: []string{"Link"},
	Also: map[string]any{cloudEventsBatch: []events.CloudEvent{}}}
