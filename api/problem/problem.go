// Package problem holds the one shape of every error response (RFC 9457) and the one mapper from the
// typed errors of the other packages (store, odata, formtask) to the problem a client is told.
package problem

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/metadata"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/serviceowner"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/odatasql"
	"github.com/postbox/postbox/submission"
)

// Problem is an RFC 9457 problem detail, the one shape of every error response.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Errors   any    `json:"errors,omitempty" xmlitem:"error"`
	// TaskStatus and ArchiveReference are the state of the form task a change was refused on (409): a
	// client that repeats a submission learns from them that, and how, it went through.
	TaskStatus       string `json:"taskStatus,omitempty"`
	ArchiveReference string `json:"archiveReference,omitempty"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// Retryable is a problem the client may retry after a while; it is answered with Retry-After.
type Retryable struct {
	*Problem
	After time.Duration
}

func (p *Retryable) Unwrap() error { return p.Problem }

// Namespace is the XML namespace of problem bodies.
const Namespace = "urn:ietf:rfc:7807"

// ClientClosed is the status of a request the client gave up on: nobody is listening for the answer.
const ClientClosed = 499

// TypeURI is the type URI of a kind of problem.
func TypeURI(kind string) string { return "urn:postbox:problem:" + kind }

// New builds a Problem of a kind; the kind becomes the type URI and names the problem for clients.
func New(status int, kind, format string, args ...any) *Problem {
	typ := "about:blank"
	if kind != "" {
		typ = TypeURI(kind)
	}
	return &Problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: fmt.Sprintf(format, args...)}
}

// UnavailableRetryAfter is how long a client is asked to wait when the database cannot serve: about the time
// PostgreSQL takes to restart or a pool to reconnect.
const UnavailableRetryAfter = 5 * time.Second

// DatabaseUnavailable is the answer while the database is down, starting up, out of connections or
// aborted a conflicting transaction: neither the client's fault nor a bug, so the client may retry.
func DatabaseUnavailable() *Problem {
	return New(http.StatusServiceUnavailable, "database-unavailable", "the database cannot serve requests right now; try again shortly")
}

// RetryAfter is how long the client should wait before it repeats a request that failed with err, when
// repeating it may succeed.
func RetryAfter(err error) (time.Duration, bool) {
	var (
		retry   *Retryable
		refused *formtask.Error
	)
	switch {
	case errors.As(err, &retry):
		return retry.After, true
	case errors.As(err, &refused) && refused.Kind == formtask.Unavailable:
		return formtask.RetryAfter, true
	case refusal.Is(err, correspondence.Unavailable):
		return correspondence.RetryAfter, true
	case refusal.Is(err, notification.Unavailable):
		return notification.RetryAfter, true
	case store.IsUnavailable(err):
		return UnavailableRetryAfter, true
	}
	return 0, false
}

// SetRetryAfter tells the client to wait d (whole seconds, at least one) before it repeats the request.
func SetRetryAfter(h http.Header, d time.Duration) {
	h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}

// BadRequest is a 400 problem.
func BadRequest(format string, args ...any) *Problem {
	return New(http.StatusBadRequest, "bad-request", format, args...)
}

// NotFound is a 404 problem.
func NotFound(format string, args ...any) *Problem {
	return New(http.StatusNotFound, "not-found", format, args...)
}

// Unauthorized is a 401 problem: no credentials, or wrong ones.
func Unauthorized(format string, args ...any) *Problem {
	return New(http.StatusUnauthorized, "unauthenticated", format, args...)
}

// Internal is the answer to a bug: the cause is logged, never told.
func Internal() *Problem {
	return New(http.StatusInternalServerError, "", "the server could not complete the request; it has been logged")
}

// TooBroad is the answer to a list the database cut off at the list timeout (POSTBOX_LIST_TIMEOUT): a
// client error, since the query matched or walked too many rows, naming the options given (such as
// `search "skatt"`) so the client knows what to narrow.
func TooBroad(err *store.TooBroadError, given []string) *Problem {
	what := "the query"
	if len(given) > 0 {
		what = strings.Join(given, " with ")
	}
	return New(http.StatusBadRequest, "query-too-broad",
		"%s: %s finds or walks too many messages; narrow it with more search words or a $filter (CreatedDate, ServiceCode, ReporteeId)",
		err.Error(), what)
}

// From maps an error to what the client is told. A database that cannot serve is a 503 on every
// endpoint; other errors that are not the client's doing become a bare 500. Causes are logged, never returned.
func From(err error) (p *Problem, internal bool) {
	var (
		prob          *Problem
		syntax        *odata.SyntaxError
		param         *odata.ParamError
		unknown       *odatasql.UnknownFieldError
		mismatch      *odatasql.TypeError
		maxBytes      *http.MaxBytesError
		refused       *formtask.Error
		changeRefused *mailbox.Error
		search        *mailbox.SearchError
		broad         *store.TooBroadError
		subs          *webhook.SubscriptionLimitError
		filter        *submission.FilterError
		accessRefused *access.Error
		sendRefused   *correspondence.Error
		orderRefused  *notification.Error
		subRefused    *webhook.Error
		notReportee   *identity.NotReportee
		noOrg         *identity.NoSuchOrganization
		ownerRefused  *serviceowner.Error
		catalog       *metadata.Error
	)
	switch {
	case errors.As(err, &prob):
		return prob, false
	case errors.As(err, &refused):
		return formTaskProblem(refused), false
	case errors.As(err, &changeRefused):
		return messageProblem(changeRefused), false
	case errors.As(err, &sendRefused):
		return ofKind(correspondenceKinds, sendRefused.Kind, sendRefused.Detail), false
	case errors.As(err, &orderRefused):
		return ofKind(notificationKinds, orderRefused.Kind, orderRefused.Detail), false
	case errors.As(err, &catalog):
		return ofKind(metadataKinds, catalog.Kind, catalog.Detail), false
	case errors.As(err, &ownerRefused):
		return ofKind(serviceOwnerKinds, ownerRefused.Kind, ownerRefused.Detail), false
	case errors.Is(err, identity.ErrNoSuchPerson):
		return New(http.StatusBadRequest, "no-such-reportee", "%s", err.Error()), false
	case errors.As(err, &noOrg):
		return NotFound("%s", noOrg.Error()), false
	case errors.As(err, &notReportee):
		return New(http.StatusForbidden, "not-a-reportee", "%s", notReportee.Error()), false
	case errors.As(err, &subRefused):
		return ofKind(subscriptionKinds, subRefused.Kind, subRefused.Detail), false
	case errors.As(err, &accessRefused):
		p := ofKind(accessKinds, accessRefused.Kind, accessRefused.Detail)
		if len(accessRefused.Items) > 0 {
			p.Errors = accessRefused.Items
		}
		return p, false
	case errors.As(err, &syntax):
		return New(http.StatusBadRequest, "invalid-query", "%s: %s", syntax.Option, syntax.Error()), false
	case errors.As(err, &param):
		return New(http.StatusBadRequest, "invalid-query", "%s", param.Error()), false
	case errors.As(err, &unknown):
		return New(http.StatusBadRequest, "invalid-query", "%s", unknown.Error()), false
	case errors.As(err, &mismatch):
		return New(http.StatusBadRequest, "invalid-query", "%s", mismatch.Error()), false
	case errors.As(err, &search):
		return New(http.StatusBadRequest, "invalid-query", "%s", search.Error()), false
	case errors.As(err, &broad):
		return TooBroad(broad, nil), false
	case errors.As(err, &subs):
		return New(http.StatusConflict, "subscription-limit-reached",
			"you have %d webhook subscriptions here, the most a caller may have: DELETE one you no longer need first", subs.Limit), false
	case errors.As(err, &filter):
		// ParseFilter joins one error a malformed parameter: name them all.
		return New(http.StatusBadRequest, "invalid-filter", "%s", strings.ReplaceAll(err.Error(), "\n", "; ")), false
	case errors.Is(err, submission.ErrNotFound):
		return NotFound("no submission to your services has this archive reference, or it has no such part"), false
	case errors.As(err, &maxBytes):
		return New(http.StatusRequestEntityTooLarge, "body-too-large", "the request body is larger than %d bytes", maxBytes.Limit), false
	case errors.Is(err, store.ErrNotFound):
		return NotFound("the resource does not exist"), false
	case store.IsUnavailable(err):
		return DatabaseUnavailable(), false
	case errors.Is(err, context.Canceled):
		return New(ClientClosed, "", "the client closed the request"), false
	}
	return Internal(), true
}

// problemKind is the status and problem type a domain's kind of refusal is answered with.
type problemKind struct {
	status int
	kind   string
}

// ofKind is the problem of a refusal of kind k of a domain whose kinds are mapped by kinds: a kind the
// mapper does not know is a bug, answered 500.
func ofKind[K comparable](kinds map[K]problemKind, k K, detail string) *Problem {
	pk, found := kinds[k]
	if !found {
		pk = problemKind{status: http.StatusInternalServerError}
	}
	return New(pk.status, pk.kind, "%s", detail)
}

// formTaskKinds are the problems of refused form-task changes.
var formTaskKinds = map[formtask.Kind]problemKind{
	formtask.BadInput:            {http.StatusBadRequest, "bad-request"},
	formtask.Invalid:             {http.StatusBadRequest, "validation-failed"},
	formtask.Forbidden:           {http.StatusForbidden, "forbidden"},
	formtask.SignRefused:         {http.StatusForbidden, "sign-refused"},
	formtask.NotFound:            {http.StatusNotFound, "not-found"},
	formtask.Conflict:            {http.StatusConflict, "conflict"},
	formtask.TooLarge:            {http.StatusRequestEntityTooLarge, "attachment-too-large"},
	formtask.UnsupportedFileType: {http.StatusUnsupportedMediaType, "file-type-not-allowed"},
	formtask.Unavailable:         {http.StatusServiceUnavailable, "temporal-unavailable"},
	formtask.BadFileName:         {http.StatusBadRequest, "file-name-not-allowed"},
	formtask.BadFileContent:      {http.StatusBadRequest, "file-content-not-allowed"},
	formtask.PreconditionFailed:  {http.StatusPreconditionFailed, "precondition-failed"},
	formtask.InTrashbin:          {http.StatusConflict, "in-trashbin"},
	formtask.NotInTrashbin:       {http.StatusConflict, "not-in-trashbin"},
	formtask.ServiceClosed:       {http.StatusConflict, "service-closed"},
	formtask.NotSignee:           {http.StatusForbidden, "not-a-signee"},
	formtask.BadChecksum:         {http.StatusBadRequest, "bad-checksum"},
	formtask.ChecksumNotAllowed:  {http.StatusBadRequest, "checksum-not-allowed"},
	formtask.ChecksumMismatch:    {http.StatusBadRequest, "checksum-mismatch"},
	formtask.NotAFormTask:        {http.StatusConflict, "not-a-form-task"},
	formtask.MainFormStays:       {http.StatusConflict, "main-form"},
}

func formTaskProblem(e *formtask.Error) *Problem {
	p := ofKind(formTaskKinds, e.Kind, e.Detail)
	p.TaskStatus, p.ArchiveReference = e.Status, e.ArchiveReference
	if e.Validation != nil {
		p.Errors = e.Validation.ValidationErrors
	}
	return p
}

// accessKinds are the problems of refused access changes.
var accessKinds = map[access.Kind]problemKind{
	access.Gone:               {http.StatusNotFound, "not-found"},
	access.NameTaken:          {http.StatusConflict, "role-name-taken"},
	access.AlreadyHeld:        {http.StatusConflict, "role-already-held"},
	access.NotFound:           {http.StatusNotFound, "not-found"},
	access.BadInput:           {http.StatusBadRequest, "bad-request"},
	access.NotAccessManager:   {http.StatusForbidden, "not-access-manager"},
	access.FromRegister:       {http.StatusForbidden, "role-from-register"},
	access.NotDelegable:       {http.StatusForbidden, "role-not-delegatable"},
	access.PlatformRole:       {http.StatusForbidden, "platform-role"},
	access.RightComesWithRole: {http.StatusConflict, "right-comes-with-role"},
	access.RoleNotHeld:        {http.StatusForbidden, "role-not-held"},
	access.RightsNotHeld:      {http.StatusForbidden, "rights-not-held"},
	access.HolderMismatch:     {http.StatusBadRequest, "right-holder-mismatch"},
}

// correspondenceKinds are the problems of refused sending.
var correspondenceKinds = map[correspondence.Kind]problemKind{
	correspondence.BadInput:    {http.StatusBadRequest, "bad-request"},
	correspondence.NotOwned:    {http.StatusForbidden, "service-not-owned"},
	correspondence.NoRecipient: {http.StatusBadRequest, "no-recipient"},
	correspondence.NotFound:    {http.StatusNotFound, "not-found"},
	correspondence.AlreadyRead: {http.StatusConflict, "already-read"},
	correspondence.TooLarge:    {http.StatusRequestEntityTooLarge, "body-too-large"},
	correspondence.Unavailable: {http.StatusServiceUnavailable, "temporal-unavailable"},
}

// metadataKinds are the problems of refused metadata requests.
var metadataKinds = map[metadata.Kind]problemKind{
	metadata.NotFound: {http.StatusNotFound, "not-found"},
}

// serviceOwnerKinds are the problems of refused service-owner requests.
var serviceOwnerKinds = map[serviceowner.Kind]problemKind{
	serviceowner.BadInput:         {http.StatusBadRequest, "bad-request"},
	serviceowner.NotFound:         {http.StatusNotFound, "not-found"},
	serviceowner.ServiceNotOwned:  {http.StatusForbidden, "service-not-owned"},
	serviceowner.RoleNotRelevant:  {http.StatusForbidden, "role-not-relevant"},
	serviceowner.NotOwnerLogin:    {http.StatusForbidden, "serviceowner-authentication"},
	serviceowner.NotAServiceOwner: {http.StatusForbidden, "not-a-service-owner"},
	serviceowner.NotKeyOwner:      {http.StatusForbidden, "api-key-owner"},
}

// subscriptionKinds are the problems of refused webhook subscription requests.
var subscriptionKinds = map[webhook.Kind]problemKind{
	webhook.BadInput:           {http.StatusBadRequest, "bad-request"},
	webhook.EndpointNotAllowed: {http.StatusBadRequest, "endpoint-not-allowed"},
	webhook.NotFound:           {http.StatusNotFound, "not-found"},
}

// notificationKinds are the problems of refused notification orders.
var notificationKinds = map[notification.Kind]problemKind{
	notification.BadInput:           {http.StatusBadRequest, "bad-request"},
	notification.ChannelUnavailable: {http.StatusBadRequest, "channel-not-configured"},
	notification.NotFound:           {http.StatusNotFound, "not-found"},
	notification.Unavailable:        {http.StatusServiceUnavailable, "temporal-unavailable"},
}

// messageKinds are the problems of refused changes of a message's place and state.
var messageKinds = map[mailbox.Kind]problemKind{
	mailbox.NotFound:              {http.StatusNotFound, "not-found"},
	mailbox.MissingRight:          {http.StatusForbidden, "missing-right"},
	mailbox.TaskInProgress:        {http.StatusConflict, "conflict"},
	mailbox.NotCorrespondence:     {http.StatusConflict, "not-correspondence"},
	mailbox.ConfirmationNotNeeded: {http.StatusConflict, "confirmation-not-needed"},
	mailbox.NotInTrashbin:         {http.StatusConflict, "not-in-trashbin"},
}

func messageProblem(e *mailbox.Error) *Problem {
	p := ofKind(messageKinds, e.Kind, e.Detail)
	p.TaskStatus = e.TaskStatus
	return p
}
