package problem

import "net/http"

// Type is a kind of problem a client can be told: its type URI is "urn:postbox:problem:" + Kind.
type Type struct {
	Kind   string
	Status int
	// Means says what happened and what the client can do about it.
	Means string
}

// URI is the problem's type URI.
func (t Type) URI() string { return "urn:postbox:problem:" + t.Kind }

// Types are all the problems the service answers with, for the OpenAPI document: a problem that is not
// listed here fails the test that validates the suite's responses against the document (add it here).
// A bare 500 and a request the client closed have the type about:blank.
var Types = []Type{
	{"bad-request", http.StatusBadRequest, "the request is malformed; the detail names what to fix"},
	{"invalid-query", http.StatusBadRequest, "an OData option ($filter, $orderby, $top, $skip) or search is malformed or names an unknown field"},
	{"query-too-broad", http.StatusBadRequest, "the list query walks too many rows; narrow it with search words or a $filter"},
	{"invalid-filter", http.StatusBadRequest, "a filter of the list is malformed; the detail names each such query parameter"},
	{"invalid-continuation", http.StatusBadRequest, "the continuation token was not issued by this list, or is combined with $skip or $orderby"},
	{"no-recipient", http.StatusBadRequest, "none of the recipients of a correspondence can receive it; the detail counts the reasons"},
	{"channel-not-configured", http.StatusBadRequest, "the notification's channel (Sms without an SMS gateway, Email without a mail server) is not configured here"},
	{"invalid-language", http.StatusBadRequest, "language is not 1044, 2068 or 1033"},
	{"endpoint-not-allowed", http.StatusBadRequest, "the webhook EndPoint is not an https URL of a public host"},
	{"invalid-xml", http.StatusBadRequest, "the XML body is not well-formed or not of the expected shape"},
	{"no-such-reportee", http.StatusBadRequest, "no person the caller may represent has this national identity number and last name"},
	{"right-holder-mismatch", http.StatusBadRequest, "the right holder's name does not match its number"},
	{"bad-checksum", http.StatusBadRequest, "CheckSum or Content-Digest is not a SHA-256 (hex in CheckSum, sha-256=:<base64>: in Content-Digest)"},
	{"checksum-not-allowed", http.StatusBadRequest, "the attachment type does not take a checksum (IsCheckSumAllowed is false)"},
	{"checksum-mismatch", http.StatusBadRequest, "the attachment's bytes do not have the SHA-256 the client sent"},
	{"validation-failed", http.StatusBadRequest, "the forms did not validate; errors lists the validation errors"},
	{"file-name-not-allowed", http.StatusBadRequest, "the attachment's file name is not allowed"},
	{"file-content-not-allowed", http.StatusBadRequest, "the attachment's content does not match its file type or fails its checks"},
	{"unauthenticated", http.StatusUnauthorized, "log in first: a session cookie, a bearer token or an enterprise certificate; or the credentials are wrong"},
	{"missing-api-key", http.StatusUnauthorized, "the ApiKey header is required"},
	{"invalid-api-key", http.StatusUnauthorized, "the API key is not registered"},
	{"api-key-area", http.StatusForbidden, "the API key is not registered for the area of the route"},
	{"api-key-owner", http.StatusForbidden, "the API key does not belong to the calling service owner"},
	{"insufficient-scope", http.StatusForbidden, "the token's scopes do not allow the route"},
	{"certificate-required", http.StatusForbidden, "the call needs a verified enterprise certificate (or a bearer token)"},
	{"serviceowner-authentication", http.StatusForbidden, "service-owner calls need an organization token or an enterprise certificate"},
	{"not-a-service-owner", http.StatusForbidden, "the calling organization is not a registered service owner"},
	{"service-not-owned", http.StatusForbidden, "the service is not one of the caller's"},
	{"not-a-reportee", http.StatusForbidden, "the caller may not act for {who}"},
	{"forbidden", http.StatusForbidden, "the caller's rights do not allow the change"},
	{"sign-refused", http.StatusForbidden, "the caller may not sign this form task"},
	{"not-a-signee", http.StatusForbidden, "the current signing step of the form task does not admit the caller (the detail says who signs it): wait for your step, or sign as the signee you were named as"},
	{"missing-right", http.StatusForbidden, "the caller lacks the right the operation needs"},
	{"not-access-manager", http.StatusForbidden, "only access managers of the reportee may do this"},
	{"platform-role", http.StatusForbidden, "platform roles cannot be changed"},
	{"rights-not-held", http.StatusForbidden, "the caller does not hold the rights the role would give"},
	{"role-from-register", http.StatusForbidden, "the role comes from a public register and cannot be deleted here"},
	{"role-not-delegatable", http.StatusForbidden, "the role cannot be delegated"},
	{"role-not-held", http.StatusForbidden, "the caller does not hold the role it delegates"},
	{"role-not-relevant", http.StatusForbidden, "the role is not relevant for the right holder"},
	{"not-found", http.StatusNotFound, "the resource does not exist, or the caller may not see it"},
	{"method-not-allowed", http.StatusMethodNotAllowed, "the path exists, but not with this method"},
	{"not-acceptable", http.StatusNotAcceptable, "Accept names none of application/hal+json, application/json, application/hal+xml, application/xml"},
	{"body-too-slow", http.StatusRequestTimeout, "the request body arrived too slowly"},
	{"already-read", http.StatusConflict, "the sent message has been opened by its recipient and can no longer be retracted"},
	{"conflict", http.StatusConflict, "the form task is in a state that does not allow the change; taskStatus and archiveReference tell where it is"},
	{"confirmation-not-needed", http.StatusConflict, "the correspondence needs no confirmation, or is confirmed already"},
	{"idempotency-key-in-use", http.StatusConflict, "a request with this Idempotency-Key is still running; retry later"},
	{"not-a-form-task", http.StatusConflict, "the message is not a form task"},
	{"not-correspondence", http.StatusConflict, "the message is not a correspondence"},
	{"in-trashbin", http.StatusConflict, "the form task is in the trashbin: restore it before changing its content"},
	{"main-form", http.StatusConflict, "the main form cannot be deleted or replaced as a sub-form"},
	{"not-in-trashbin", http.StatusConflict, "the message is not in the trashbin"},
	{"right-comes-with-role", http.StatusConflict, "the right is given by a role that gives more: take the role back instead"},
	{"role-already-held", http.StatusConflict, "the right holder holds the role already"},
	{"role-name-taken", http.StatusConflict, "a local role of that name exists"},
	{"subscription-limit-reached", http.StatusConflict, "the caller has as many webhook subscriptions as it may (POSTBOX_WEBHOOK_MAX_SUBSCRIPTIONS); end one first"},
	{"service-closed", http.StatusConflict, "the service is not open for submissions"},
	{"precondition-failed", http.StatusPreconditionFailed, "If-Match does not name the current ETag, which is sent along"},
	{"modified-since", http.StatusPreconditionFailed, "the content was modified after If-Unmodified-Since; Last-Modified says when"},
	{"body-too-large", http.StatusRequestEntityTooLarge, "the request body is larger than the limit"},
	{"attachment-too-large", http.StatusRequestEntityTooLarge, "the attachment is larger than its attachment rule allows"},
	{"unsupported-media-type", http.StatusUnsupportedMediaType, "the body's Content-Type is not one the route reads"},
	{"file-type-not-allowed", http.StatusUnsupportedMediaType, "the attachment's file type is not allowed by its attachment rule"},
	{"range-not-satisfiable", http.StatusRequestedRangeNotSatisfiable, "the Range asks for no byte of the content, or is not a byte range; Content-Range gives the size"},
	{"idempotency-key-reused", http.StatusUnprocessableEntity, "the Idempotency-Key was used for a different request"},
	{"rate-limited", http.StatusTooManyRequests, "the API key's rate limit for the area is used up; retry after Retry-After"},
	{"login-locked", http.StatusTooManyRequests, "too many failed logins; retry after Retry-After"},
	{"headers-too-large", http.StatusRequestHeaderFieldsTooLarge, "the request's headers are too large"},
	{"database-unavailable", http.StatusServiceUnavailable, "the database cannot serve right now; retry after Retry-After"},
	{"temporal-unavailable", http.StatusServiceUnavailable, "the workflow service cannot be reached; retry after Retry-After"},
	{"dependency-unavailable", http.StatusServiceUnavailable, "neither the database nor the workflow service can be reached"},
}
