package api

import (
	"net/http"
	"reflect"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/openapi"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
)

// The OpenAPI 3.1 document of the service, made from the registered routes (Routes), their entries in
// routeDocs (openapi_routes.go) and the Go types the handlers write, so it cannot drift from the code.

// routeDoc documents one route.
type routeDoc struct {
	Summary     string
	Description string
	// Tag groups the operation; by default the route's area.
	Tag string
	// OperationID names the operation (and the generated client's method); by default the handler's name.
	OperationID string
	Query       []param
	Body        *requestDoc
	// OK is the answer of success; More are other answers of the handler's own (they replace the general
	// answer of their status).
	OK   answer
	More []answer
	// Problems are the statuses of the problems the handler itself answers with, beside those every route
	// of its kind can answer (openapi.go adds those).
	Problems []int
	// Conditional marks a GET with an ETag: If-None-Match gives 304.
	Conditional bool
	// Download marks content served with Range and its conditions (serveContent): 206 and the 412 and
	// 416 problems.
	Download bool
}

// param is a query parameter.
type param struct {
	Name, Description string
	// Type is a JSON Schema type, or flag for a parameter that counts by being present.
	Type     string
	Required bool
}

// flag is the Type of a query parameter that has no value (?ForceEIAuthentication).
const flag = "flag"

func params(ps ...param) []param { return ps }

// requestDoc is a request body: a Go type (Type) or a schema of its own (Schema), in the media types it is
// read from.
type requestDoc struct {
	Media    []string
	Type     any
	Schema   *openapi.Schema
	Example  any
	Optional bool
}

var jsonOnly = []string{"application/json", "application/hal+json"}

// answer is a response: its status, and a body of type Body in Media (negotiated: the four media types of
// resources; "": no body).
type answer struct {
	Status      int
	Description string
	Media       string
	Body        any
	Headers     []string
	// Also are further media types of a negotiated answer, with their bodies.
	Also map[string]any
}

const (
	negotiated = "negotiated"
	rawJSON    = "application/json"
)

func answerOf(status int, description, media string, body any, headers ...string) answer {
	return answer{Status: status, Description: description, Media: media, Body: body, Headers: headers}
}

func statuses(s ...int) []int { return s }

// presignedRedirect is the answer of a download of a large file when the deployment redirects those to
// the object store (POSTBOX_FILES_PRESIGN_FROM).
var presignedRedirect = answerOf(http.StatusTemporaryRedirect,
	"a large file: a redirect to a pre-signed URL of the object store that works for a few minutes, without credentials", "", nil, "Location")

// halCollection is a HAL collection of items of one type under _embedded.<name>.
type halCollection struct {
	name string
	item any
}

func collectionOf(name string, item any) halCollection { return halCollection{name, item} }

// Bodies that are no JSON resource.
var (
	binary      = &openapi.Schema{Type: "string", Format: "binary"}
	xmlDocument = &openapi.Schema{Type: "string", ContentMediaType: "application/xml"}
	htmlText    = &openapi.Schema{Type: "string", ContentMediaType: "text/html"}
)

// delegationBodySchema is the JSON HAL form of the delegation body; its XML form is the interface's
// <resource rel="RightHolder"> document.
var delegationBodySchema = &openapi.Schema{Type: "object", Description: "a right holder (SocialSecurityNumber and LastName of a person, " +
	"OrganizationNumber and Name of an organization, UserName and OrganizationNumber of an enterprise user) and the role definitions " +
	"(_embedded.Roles[].RoleDefinitionId) and single rights (_embedded.Rights[]: ServiceCode, ServiceEditionCode, Action) to give it; " +
	"at least one, at most 50 together",
	Properties: map[string]*openapi.Schema{
		"Type": {Type: "string"}, "SocialSecurityNumber": {Type: "string"}, "LastName": {Type: "string"},
		"OrganizationNumber": {Type: "string"}, "Name": {Type: "string"}, "UserName": {Type: "string"},
		"_embedded": {Type: "object", Properties: map[string]*openapi.Schema{
			"Roles": {Type: "array", Items: &openapi.Schema{Type: "object", Properties: map[string]*openapi.Schema{
				"RoleDefinitionId": {Type: "integer"}}}},
			"Rights": {Type: "array", Items: &openapi.Schema{Type: "object", Properties: map[string]*openapi.Schema{
				"ServiceCode": {Type: "string"}, "ServiceEditionCode": {Type: "integer"},
				"Action": {Type: "string", Enum: []any{"Read", "Write", "Delete", "Sign", "ArchiveRead", "ArchiveDelete"}}}}},
		}},
	}}

// pathParams describes the path parameters by name.
var pathParams = map[string]string{
	"who":                "my (the logged-in user), an organization number, or a reportee id (r and digits)",
	"messageId":          "the message's id (a and digits)",
	"formId":             "the form's id",
	"attachmentId":       "the attachment's id",
	"reporteeId":         "the reportee's id (r and digits)",
	"serviceCode":        "the service code",
	"serviceEdition":     "the service edition",
	"dataFormatId":       "the data format id of the form",
	"dataFormatVersion":  "the data format version of the form",
	"name":               "the code list's name",
	"version":            "the code list's version",
	"roleId":             "the RoleId of a held role",
	"rightId":            "the RightID of a right",
	"roleDefinitionId":   "the role definition's id",
	"person":             "the PersonalContactId of a personal contact",
	"ruleId":             "the AttachmentRuleId of an attachment rule, or the id of a delegated right (authorization)",
	"subscriptionId":     "the subscription's Id",
	"receiverId":         "the receiver of delegations: r and digits, a national identity number or an organization number",
	"organizationNumber": "the organization's number (9 digits)",
	"archiveReference":   "the submission's ArchiveReference (AR and digits)",
}

// tagOrder and tagDescriptions present the groups of operations.
var (
	tagOrder        = []string{"Metadata", "Authentication", "Reportees", "Messages", "Events", "Authorization", "Role definitions", "Service owner", "Health"}
	tagDescriptions = map[string]string{
		"Metadata":         "Open: services, their forms and schemas, code lists, and this document. No API key, no login.",
		"Authentication":   "Open: password login and logout (the session cookie .ASPXAUTH).",
		"Reportees":        "The parties the logged-in user may represent.",
		"Messages":         "The mailbox of {who}: messages, form tasks and their forms and attachments, the trashbin.",
		"Events":           "Webhook subscriptions to the events of {who} or of a service owner's services, and their dead letters.",
		"Authorization":    "Roles, rights, delegations and the audit log of {who}.",
		"Role definitions": "The role definitions of {who}, and its local roles.",
		"Service owner":    "Service owners' calls: organizations, contacts, roles, rights and reportees on their services.",
		"Health":           "Liveness and readiness of the process.",
	}
)

// areaTags name the areas for readers of the document.
var areaTags = map[string]string{
	areaMailbox: "Messages", areaReportees: "Reportees", areaAuthorization: "Authorization",
	areaRoleDefinitions: "Role definitions", areaServiceOwner: "Service owner",
}

// openAPIDocument is the served document, made once per server.
type openAPIDocument struct {
	once       sync.Once
	json, yaml []byte
	err        error
}

func (s *Server) openAPIBytes(yaml bool) ([]byte, error) {
	d := &s.openAPI
	d.once.Do(func() {
		doc, _ := buildOpenAPI(s.routeList)
		if d.json, d.err = doc.JSON(); d.err == nil {
			d.yaml, d.err = doc.YAML()
		}
	})
	if yaml {
		return d.yaml, d.err
	}
	return d.json, d.err
}

func (s *Server) serveOpenAPIJSON(c *gin.Context) { s.serveOpenAPI(c, false, "application/json") }
func (s *Server) serveOpenAPIYAML(c *gin.Context) { s.serveOpenAPI(c, true, "application/yaml") }

func (s *Server) serveOpenAPI(c *gin.Context, yaml bool, mediaType string) {
	b, err := s.openAPIBytes(yaml)
	if err != nil {
		abort(c, err)
		return
	}
	if notModified(c, etagOf(mediaType, b)) {
		return
	}
	c.Data(http.StatusOK, mediaType+"; charset=utf-8", b)
}

// buildOpenAPI makes the document of routes; faults are what keeps it from describing them all (a route
// without an entry in routeDocs is in the document with a placeholder summary).
func buildOpenAPI(routes []Route) (doc *openapi.Document, faults []string) {
	b := newDocBuilder()
	for _, r := range routes {
		key := r.Method + " " + r.Path
		d, ok := routeDocs[key]
		if !ok {
			b.faults = append(b.faults, key+" has no entry in routeDocs")
			d = routeDoc{Summary: "undocumented"}
		}
		b.add(r, d)
	}
	for _, name := range tagOrder {
		b.doc.Tags = append(b.doc.Tags, openapi.Tag{Name: name, Description: tagDescriptions[name]})
	}
	return b.doc, b.faults
}

type docBuilder struct {
	doc    *openapi.Document
	ref    *openapi.Reflector
	ids    map[string]int
	faults []string
}

func newDocBuilder() *docBuilder {
	ref := openapi.NewReflector()
	ref.Override(reflect.TypeFor[render.Timestamp](), func() *openapi.Schema {
		return &openapi.Schema{Type: "string", Pattern: `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$`,
			Description: "ISO 8601 local date-time without zone"}
	})
	ref.Override(reflect.TypeFor[render.Links](), func() *openapi.Schema { return linksSchema })
	ref.Override(reflect.TypeFor[jsonText](), func() *openapi.Schema {
		return &openapi.Schema{Type: []string{"string", "integer"}, Description: "a string; digits may come as a JSON number"}
	})
	ref.Override(reflect.TypeFor[flexInt](), func() *openapi.Schema {
		return &openapi.Schema{Type: []string{"integer", "string"}, Pattern: `^\d+$`, Description: "a whole number, or a string of its digits"}
	})
	ref.Override(reflect.TypeFor[dateTimeField](), func() *openapi.Schema {
		return &openapi.Schema{Type: "string",
			Description: "a local date-time in the service's zone (2026-12-01T09:00:00) or one with its offset (RFC 3339)"}
	})
	for t, name := range componentNames {
		ref.Name(t, name)
	}
	ref.Component("Link", linkSchema(ref))
	b := &docBuilder{ref: ref, ids: map[string]int{}, doc: &openapi.Document{
		OpenAPI: "3.1.0",
		Info: openapi.Info{Title: "Postbox", Version: "1",
			Description: "Mailbox, authorization and metadata REST interface. Resources are offered as application/hal+json, application/json, " +
				"application/hal+xml and application/xml (Accept); errors are RFC 9457 problem documents (application/problem+json, " +
				"or application/problem+xml when the client prefers XML) whose type is `urn:postbox:problem:<kind>`."},
		Paths: map[string]*openapi.PathItem{},
		Components: openapi.Components{
			Schemas: ref.Schemas, Responses: map[string]*openapi.Response{}, Headers: responseHeaders,
			Parameters: requestHeaders, SecuritySchemes: securitySchemes,
		},
	}}
	b.problems()
	return b
}

// componentNames are the names of the resources in the document, where the Go name is not the
// interface's.
var componentNames = map[reflect.Type]string{
	reflect.TypeFor[messageResource]():               "Message",
	reflect.TypeFor[messageLinks]():                  "MessageLinks",
	reflect.TypeFor[formResource]():                  "Form",
	reflect.TypeFor[serviceEntry]():                  "ServiceEntry",
	reflect.TypeFor[serviceDetail]():                 "Service",
	reflect.TypeFor[codeListEntry]():                 "CodeListEntry",
	reflect.TypeFor[codeListDetail]():                "CodeList",
	reflect.TypeFor[reporteeResource]():              "Reportee",
	reflect.TypeFor[mailboxSummary]():                "MailboxSummary",
	reflect.TypeFor[validationResource]():            "ValidationResult",
	reflect.TypeFor[signingTextResource]():           "SigningText",
	reflect.TypeFor[roleResource]():                  "Role",
	reflect.TypeFor[rightResource]():                 "Right",
	reflect.TypeFor[delegationResource]():            "Delegation",
	reflect.TypeFor[auditEntryResource]():            "AuditEntry",
	reflect.TypeFor[userRoleDefinition]():            "RoleDefinition",
	reflect.TypeFor[soOrganizationResource]():        "Organization",
	reflect.TypeFor[soOfficialContactResource]():     "OfficialContact",
	reflect.TypeFor[soPersonalContactResource]():     "PersonalContact",
	reflect.TypeFor[soRightsResource]():              "SubjectRights",
	reflect.TypeFor[soPartyView]():                   "Party",
	reflect.TypeFor[soRoleDefinitionResource]():      "ServiceOwnerRoleDefinition",
	reflect.TypeFor[soRoleDefinitionDetail]():        "ServiceOwnerRoleDefinitionDetail",
	reflect.TypeFor[soReporteeResource]():            "ServiceOwnerReportee",
	reflect.TypeFor[formTaskBody]():                  "FormTaskBody",
	reflect.TypeFor[formBody]():                      "FormBody",
	reflect.TypeFor[attachmentBody]():                "AttachmentBody",
	reflect.TypeFor[localRoleBody]():                 "LocalRoleBody",
	reflect.TypeFor[localRightBody]():                "LocalRightBody",
	reflect.TypeFor[passwordLogin]():                 "PasswordLogin",
	reflect.TypeFor[loginResource]():                 "LoginSession",
	reflect.TypeFor[reporteeConversionBody]():        "ReporteeConversion",
	reflect.TypeFor[problem.Problem]():               "Problem",
	reflect.TypeFor[attachmentResource]():            "Attachment",
	reflect.TypeFor[receiverResource]():              "Receiver",
	reflect.TypeFor[delegatedResource]():             "DelegationCreated",
	reflect.TypeFor[attachmentAccessResource]():      "AttachmentAccess",
	reflect.TypeFor[roleRequirement]():               "RoleRequirement",
	reflect.TypeFor[eventResource]():                 "Event",
	reflect.TypeFor[subscriptionResource]():          "Subscription",
	reflect.TypeFor[subscriptionBody]():              "SubscriptionBody",
	reflect.TypeFor[deadLetterResource]():            "DeadLetter",
	reflect.TypeFor[submissionResource]():            "Submission",
	reflect.TypeFor[submissionReporteeResource]():    "SubmissionReportee",
	reflect.TypeFor[submissionFormResource]():        "SubmissionForm",
	reflect.TypeFor[submissionAttachmentResource]():  "SubmissionAttachment",
	reflect.TypeFor[submissionPrintResource]():       "SubmissionPrint",
	reflect.TypeFor[submissionSignatureResource]():   "SubmissionSignature",
	reflect.TypeFor[ownerMessageResource]():          "ServiceOwnerMessage",
	reflect.TypeFor[submissionLogResource]():         "SubmissionLogEntry",
	reflect.TypeFor[replayResource]():                "Replay",
	reflect.TypeFor[correspondenceBody]():            "CorrespondenceBody",
	reflect.TypeFor[replyOptionBody]():               "ReplyOptionBody",
	reflect.TypeFor[customDataBody]():                "CustomMessageDataBody",
	reflect.TypeFor[correspondenceAttachmentBody]():  "CorrespondenceAttachmentBody",
	reflect.TypeFor[shipmentAcceptedResource]():      "ShipmentAccepted",
	reflect.TypeFor[recipientOutcomeResource]():      "ShipmentRecipientOutcome",
	reflect.TypeFor[shipmentResource]():              "Shipment",
	reflect.TypeFor[recipientStatusResource]():       "ShipmentRecipient",
	reflect.TypeFor[prefillBody]():                   "PrefilledFormTaskBody",
	reflect.TypeFor[prefilledResource]():             "PrefilledFormTask",
	reflect.TypeFor[signeesResource]():               "Signees",
	reflect.TypeFor[signeeEntry]():                   "Signee",
	reflect.TypeFor[signeesBody]():                   "SigneesBody",
	reflect.TypeFor[signaturesResource]():            "Signing",
	reflect.TypeFor[signatureEntry]():                "Signature",
	reflect.TypeFor[signingStepEntry]():              "SigningStepState",
	reflect.TypeFor[signingEntry]():                  "SigningListEntry",
	reflect.TypeFor[signingTaskResource]():           "SigningTask",
	reflect.TypeFor[signingForm]():                   "SigningTaskForm",
	reflect.TypeFor[signBody]():                      "SignBody",
	reflect.TypeFor[signedResource]():                "Signed",
	reflect.TypeFor[notificationBody]():              "NotificationOrderBody",
	reflect.TypeFor[notificationReminders]():         "NotificationReminders",
	reflect.TypeFor[notificationRecipient]():         "NotificationRecipientAddresses",
	reflect.TypeFor[notificationOrderResource]():     "NotificationOrder",
	reflect.TypeFor[notificationRemindersResource](): "NotificationOrderReminders",
	reflect.TypeFor[notificationRecipientResource](): "NotificationRecipient",
	reflect.TypeFor[uploadResource]():                "CorrespondenceUpload",
	reflect.TypeFor[messageNotificationResource]():   "MessageNotification",
	reflect.TypeFor[notificationSendResource]():      "NotificationSend",
}

// linksSchema is a resource's _links: each relation a Link or an array of them.
var linksSchema = &openapi.Schema{Type: "object", Description: "HAL links by relation",
	AdditionalProperties: &openapi.Schema{OneOf: []*openapi.Schema{openapi.Ref("Link"), {Type: "array", Items: openapi.Ref("Link")}}}}

func linkSchema(ref *openapi.Reflector) *openapi.Schema {
	ref.Of(render.Link{}) // made as a component named Link
	return ref.Schemas["Link"]
}
