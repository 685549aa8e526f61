package api_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/store"
)

// halMediaTypes are the four media types every resource is rendered in.
var halMediaTypes = []string{"application/hal+json", "application/json", "application/hal+xml", "application/xml"}

// notResources are the GET routes that answer with something else than a HAL resource.
var notResources = []string{
	"/healthz", "/readyz",
	"/api/metadata/formtask/:serviceCode/:serviceEdition/forms/:dataFormatId/:dataFormatVersion/xsd",
	"/api/metadata/formtask/:serviceCode/:serviceEdition/attachmentrules/:ruleId/xsd",
	"/api/:who/messages/:messageId/print",
	"/api/:who/messages/:messageId/forms/:formId/formdata",
	"/api/:who/messages/:messageId/forms/:formId/print",
	"/api/:who/messages/:messageId/attachments/:attachmentId",
	"/api/:who/messages/:messageId/portalview",
	"/api/openapi.json", "/api/openapi.yaml", "/api/docs", "/api/docs/redoc.standalone.js",
	"/api/serviceowner/submissions/:archiveReference/forms/:formId/formdata",
	"/api/serviceowner/submissions/:archiveReference/attachments/:attachmentId",
	"/api/serviceowner/submissions/:archiveReference/print",
}

// Every resource carries the same fields in all four media types: for each GET route of the router that
// answers with a resource, the field names of the JSON forms (keys, recursively, with the items of
// _embedded lists and of arrays) are the element names of the XML forms. And every local date-time a
// resource shows (without a zone) is in the service's zone: one made during the test is within a minute
// of the request's time there, so no field can drift into UTC wall-clock time (an hour off in Oslo).
func TestEveryResourceHasTheSameFieldsInEveryMediaType(t *testing.T) {
	srv, pool := newServer(t)
	began := time.Now()
	timestamps := 0
	// A delegation, so the delegations, the audit log and the personal contacts have entries to compare.
	require.Equal(t, http.StatusCreated, authzDelegate(t, srv, ssnP1, orgO1, authzDelegation(authzPerson(ssnP5, "Brekke"), roleREGNA)).Code)
	formTasks, _ := formTaskServer(t)

	person := func(h http.Handler) func(t *testing.T, path, accept string) response {
		return func(t *testing.T, path, accept string) response { return getAs(t, h, ssnP1, path, "Accept", accept) }
	}
	owner := func(t *testing.T, path, accept string) response {
		return fjeToken(t).get(t, srv, path, "Accept", accept)
	}
	p1, p5 := selfReporteeID(t, ssnP1), selfReporteeID(t, ssnP5)
	formTask, correspondence := "/api/"+orgO1+"/messages/a3100129", "/api/"+orgO1+"/messages/a3100150"
	form := pathOf(t, getAs(t, srv, ssnP1, formTask).json(t)["_links"].(map[string]any)["form"].([]any)[0].(map[string]any)["href"].(string))
	contacts := owner(t, "/api/serviceowner/organizations/"+orgO1+"/personalcontacts", "").embedded(t, "personalcontacts")
	require.NotEmpty(t, contacts)
	contact := fmt.Sprint(contacts[0]["PersonalContactId"])
	// A message in the trashbin, for its list and its single view.
	trashed := "/api/" + orgO1 + "/messages/a3100241"
	require.Equal(t, http.StatusNoContent, do(t, srv, request{method: http.MethodDelete, path: trashed, header: map[string]string{
		"ApiKey": keyAll, "Authorization": bearer(t, ssnP1)[3]}}).Code)

	// Webhook subscriptions of a person and of a service owner, each with a dead letter.
	subscription := func(path string, header map[string]string) string {
		r := do(t, srv, request{method: http.MethodPost, path: path, header: header, body: `{"EndPoint": "https://93.184.215.14/hook"}`})
		require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
		return pathOf(t, r.Header().Get("Location"))
	}
	personSub := subscription("/api/my/events/subscriptions", asPerson(t, ssnP1))
	ownerSub := subscription("/api/serviceowner/events/subscriptions", map[string]string{"ApiKey": keyFJE,
		"Authorization": "Bearer " + fjeToken(t).token, "Content-Type": "application/json"})
	for _, sub := range []string{personSub, ownerSub} {
		id, err := strconv.ParseInt(path.Base(sub), 10, 64)
		require.NoError(t, err)
		require.NoError(t, webhook.NewStore(store.New(pool)).AddDeadLetter(context.Background(), id, webhook.DeadLetter{Seq: 1,
			EventID: "0b3d3c0e-5b0c-4c55-9a1f-2f1d8f9c1a11", Attempts: 11, Reason: "the endpoint answered 503 Service Unavailable"}))
	}

	// A submission FJE has downloaded and confirmed, for the queue, its log and the party's message.
	submission := submitWithAttachment(t, formTasks)
	queue := "/api/serviceowner/submissions/" + submission.ref
	require.Equal(t, http.StatusOK, fjeQueue(t).get(t, formTasks, queue+"/print").Code)
	require.Equal(t, http.StatusOK, fjeQueue(t).send(t, formTasks, http.MethodPut, queue+"/confirm").Code)
	agencyOn := func(h http.Handler) func(t *testing.T, path, accept string) response {
		return func(t *testing.T, path, accept string) response { return fjeQueue(t).get(t, h, path, "Accept", accept) }
	}
	agency := agencyOn(formTasks)
	// A correspondence FJE sent with its dates, for the shipment and the recipient's single view.
	letterWithDates := letter(ssnP1, "12345")
	letterWithDates["DueDateTime"], letterWithDates["AllowSystemDeleteDateTime"] = "2035-01-31T12:00:00", "2035-06-30T12:00:00"
	sentAnswer := fjeSender(t).post(t, formTasks, "/api/serviceowner/correspondence", letterWithDates)
	require.Equal(t, http.StatusAccepted, sentAnswer.Code, sentAnswer.Body.String())
	sentMessage := "/api/" + ssnP1 + "/messages/" + outcomes(t, sentAnswer)[ssnP1]
	awaitMessage(t, formTasks, ssnP1, outcomes(t, sentAnswer)[ssnP1])
	shipment := "/api/serviceowner/correspondence/shipments/" + sentAnswer.json(t)["ShipmentId"].(string)
	sender := func(t *testing.T, path, accept string) response {
		return fjeSender(t).get(t, formTasks, path, "Accept", accept)
	}
	// A notification order with a reminder, decided for its notice.
	ordered := fjeNotifier(t).post(t, formTasks, "/api/serviceowner/messages/a3100136/notifications", map[string]any{"Channel": "Email",
		"Reminders": map[string]any{"AfterDays": 30, "Count": 1}})
	require.Equal(t, http.StatusCreated, ordered.Code, ordered.Body.String())
	order := strings.TrimPrefix(ordered.Header().Get("Location"), "http://postbox.test")
	require.Eventually(t, func() bool {
		return fjeNotifier(t).get(t, formTasks, order).embedded(t, "recipients")[0]["Status"] == "Sent"
	}, 30*time.Second, 100*time.Millisecond)
	// A joint application P1 completed and signed, and P2 signed, waiting for P3.
	signed, content := jointApplication(t, formTasks)
	signedTask := "/api/" + ssnP1 + "/messages/" + signed
	require.Equal(t, http.StatusOK, sendAs(t, formTasks, ssnP1, http.MethodPut, signedTask+"/signees", signees(ola, sigra)).Code)
	require.Equal(t, http.StatusOK, sendAs(t, formTasks, ssnP1, http.MethodPut, signedTask, content).Code)
	require.Equal(t, http.StatusOK, sendAs(t, formTasks, ssnP2, http.MethodPost, "/api/my/signing/"+signed, "").Code)
	signee := func(t *testing.T, path, accept string) response {
		return getAs(t, formTasks, ssnP3, path, "Accept", accept)
	}
	notifier := func(t *testing.T, path, accept string) response {
		return fjeNotifier(t).get(t, formTasks, path, "Accept", accept)
	}

	cases := []struct {
		route string
		paths []string
		get   func(t *testing.T, path, accept string) response
	}{
		{"/api/metadata", []string{"/api/metadata"}, person(srv)},
		{"/api/metadata/formtask/:serviceCode/:serviceEdition", []string{"/api/metadata/formtask/6120/1", "/api/metadata/formtask/4711/2"}, person(srv)},
		{"/api/metadata/correspondence/:serviceCode/:serviceEdition", []string{"/api/metadata/correspondence/7001/1"}, person(srv)},
		{"/api/metadata/codelists", []string{"/api/metadata/codelists"}, person(srv)},
		{"/api/metadata/codelists/:name/:version", []string{"/api/metadata/codelists/Landkoder/1"}, person(srv)},
		{"/api/metadata/rolerequirements", []string{"/api/metadata/rolerequirements?serviceCode=6120&serviceEditionCode=1"}, person(srv)},
		{"/api/organizations", []string{"/api/organizations"}, person(srv)},
		{"/api/organizations/:organizationNumber", []string{"/api/organizations/" + orgO1}, person(srv)},
		{"/api/reportees", []string{"/api/reportees"}, person(srv)},
		{"/api/reportees/:reporteeId", []string{"/api/reportees/" + p1, "/api/reportees/" + orgO1}, person(srv)},
		{"/api/my/messagebox", []string{"/api/my/messagebox"}, person(srv)},
		{"/api/all/messagebox", []string{"/api/all/messagebox"}, person(srv)},
		{"/api/all/messages", []string{"/api/all/messages"}, person(srv)},
		{"/api/:who/messages", []string{"/api/" + orgO1 + "/messages"}, person(srv)},
		{"/api/:who/messages/:messageId", []string{formTask, correspondence}, person(srv)},
		{"/api/:who/messages/:messageId/forms/:formId", []string{form}, person(srv)},
		{"/api/:who/messages/:messageId/forms", []string{formTask + "/forms"}, person(srv)},
		{"/api/:who/messages/:messageId/attachments", []string{formTask + "/attachments", correspondence + "/attachments"}, person(srv)},
		{"/api/:who/messages/trashbin", []string{"/api/" + orgO1 + "/messages/trashbin"}, person(srv)},
		{"/api/:who/messages/trashbin/:messageId", []string{"/api/" + orgO1 + "/messages/trashbin/a3100241"}, person(srv)},
		{"/api/:who/messages/:messageId/signingtext", []string{formTask + "/signingtext"}, person(srv)},
		{"/api/:who/messages/:messageId/custommessagedata", []string{"/api/" + orgO1 + "/messages/a3100234/custommessagedata"}, person(srv)},
		{"/api/:who/messages/:messageId/validate", []string{"/api/" + orgO1 + "/messages/a3101186/validate"}, person(formTasks)},
		{"/api/:who/authorization/roles", []string{"/api/" + orgO1 + "/authorization/roles", "/api/my/authorization/roles"}, person(srv)},
		{"/api/:who/authorization/rights", []string{"/api/" + orgO1 + "/authorization/rights"}, person(srv)},
		{"/api/:who/authorization/delegations", []string{"/api/" + orgO1 + "/authorization/delegations"}, person(srv)},
		{"/api/:who/authorization/auditlog", []string{"/api/" + orgO1 + "/authorization/auditlog"}, person(srv)},
		{"/api/:who/authorization/delegations/:receiverId", []string{"/api/" + orgO1 + "/authorization/delegations/" + p5}, person(srv)},
		{"/api/:who/authorization/delegations/:receiverId/roles", []string{"/api/" + orgO1 + "/authorization/delegations/" + p5 + "/roles"}, person(srv)},
		{"/api/:who/authorization/delegations/:receiverId/rights", []string{"/api/" + orgO1 + "/authorization/delegations/" + p5 + "/rights"}, person(srv)},
		{"/api/:who/authorization/reportee/:receiverId", []string{"/api/" + orgO1 + "/authorization/reportee/" + p5, "/api/my/authorization/reportee/" + p1}, person(srv)},
		{"/api/:who/authorization/attachments/:receiverId", []string{"/api/" + orgO1 + "/authorization/attachments/" + p5 + "?messageId=a3100297&attachmentId=" + firstAttachmentID(t, "a3100297")}, person(srv)},
		{"/api/:who/authorization/roledefinitions", []string{"/api/" + orgO1 + "/authorization/roledefinitions"}, person(srv)},
		{"/api/:who/authorization/roledefinitions/:roleDefinitionId", []string{fmt.Sprintf("/api/%s/authorization/roledefinitions/%d", orgO1, roleREGNA)}, person(srv)},
		{"/api/serviceowner/organizations", []string{"/api/serviceowner/organizations"}, owner},
		{"/api/serviceowner/organizations/:who", []string{"/api/serviceowner/organizations/" + orgO1}, owner},
		{"/api/serviceowner/organizations/:who/officialcontacts", []string{"/api/serviceowner/organizations/" + orgO1 + "/officialcontacts"}, owner},
		{"/api/serviceowner/organizations/:who/personalcontacts", []string{"/api/serviceowner/organizations/" + orgO1 + "/personalcontacts"}, owner},
		{"/api/serviceowner/organizations/:who/personalcontacts/:person/roles", []string{"/api/serviceowner/organizations/" + orgO1 + "/personalcontacts/" + contact + "/roles"}, owner},
		{"/api/serviceowner/authorization/roles", []string{"/api/serviceowner/authorization/roles?subject=" + ssnP1 + "&reportee=" + orgO1}, owner},
		{"/api/serviceowner/authorization/rights", []string{"/api/serviceowner/authorization/rights?subject=" + ssnP1 + "&reportee=" + orgO1}, owner},
		{"/api/serviceowner/roledefinitions", []string{"/api/serviceowner/roledefinitions"}, owner},
		{"/api/serviceowner/roledefinitions/:roleDefinitionId", []string{fmt.Sprintf("/api/serviceowner/roledefinitions/%d", roleREGNA)}, owner},
		{"/api/serviceowner/reportees", []string{"/api/serviceowner/reportees?subject=" + ssnP1}, owner},
		{"/api/:who/events/subscriptions", []string{"/api/my/events/subscriptions"}, person(srv)},
		{"/api/:who/events/subscriptions/:subscriptionId", []string{personSub}, person(srv)},
		{"/api/:who/events/subscriptions/:subscriptionId/deadletters", []string{personSub + "/deadletters"}, person(srv)},
		{"/api/serviceowner/events/subscriptions", []string{"/api/serviceowner/events/subscriptions"}, owner},
		{"/api/serviceowner/events/subscriptions/:subscriptionId", []string{ownerSub}, owner},
		{"/api/serviceowner/events/subscriptions/:subscriptionId/deadletters", []string{ownerSub + "/deadletters"}, owner},
		// The delegation and the trashed message above are events of O1; the latter also FJE's.
		{"/api/:who/events", []string{"/api/" + orgO1 + "/events"}, person(srv)},
		{"/api/serviceowner/events/feed", []string{"/api/serviceowner/events/feed"}, owner},
		// Only what this test made: the form-task database is shared with the tests before it.
		{"/api/serviceowner/submissions", []string{"/api/serviceowner/submissions?confirmed=all&archivedAfter=" + url.QueryEscape(began.Format(time.RFC3339))}, agency},
		{"/api/serviceowner/submissions/:archiveReference", []string{queue}, agency},
		{"/api/serviceowner/submissions/:archiveReference/log", []string{queue + "/log"}, agency},
		{"/api/serviceowner/messages", []string{"/api/serviceowner/messages?reportee=" + orgO1}, agencyOn(srv)},
		{"/api/:who/messages/:messageId", []string{submission.messagePath, sentMessage}, person(formTasks)},
		{"/api/serviceowner/correspondence/shipments/:shipmentId", []string{shipment}, sender},
		{"/api/serviceowner/notifications/:orderId", []string{order}, notifier},
		{"/api/serviceowner/messages/:messageId/notifications", []string{"/api/serviceowner/messages/a3100136/notifications"}, notifier},
		{"/api/:who/messages/:messageId/signees", []string{signedTask + "/signees"}, person(formTasks)},
		{"/api/:who/messages/:messageId/signatures", []string{signedTask + "/signatures"}, person(formTasks)},
		{"/api/:who/signing", []string{"/api/my/signing"}, signee},
		{"/api/:who/signing/:messageId", []string{"/api/my/signing/" + signed}, signee},
	}

	covered := append([]string(nil), notResources...)
	for _, tc := range cases {
		covered = append(covered, tc.route)
		for _, path := range tc.paths {
			t.Run(path, func(t *testing.T) {
				var (
					want     []string
					wantFrom string
					shape    any // the JSON form, which tells lists from structs in the XML forms
				)
				for _, accept := range halMediaTypes {
					r := tc.get(t, path, accept)
					require.Equal(t, http.StatusOK, r.Code, "%s: %s", accept, r.Body.String())
					require.Contains(t, r.Header().Get("Content-Type"), accept)
					if shape == nil {
						require.NoError(t, json.Unmarshal(r.Body.Bytes(), &shape))
						timestamps += checkLocalTimes(t, shape, "", began, time.Now())
					}
					got := map[string]bool{}
					if strings.Contains(accept, "xml") {
						xmlFieldPaths(xmlTree(t, r.Body.Bytes()), shape, "", got)
					} else {
						var v any
						require.NoError(t, json.Unmarshal(r.Body.Bytes(), &v))
						jsonFieldPaths(v, "", got)
					}
					fields := sortedKeys(got)
					require.NotEmpty(t, fields, accept)
					if want == nil {
						want, wantFrom = fields, accept
						continue
					}
					assert.Equal(t, want, fields, "the fields of %s (want) and %s (got)", wantFrom, accept)
				}
			})
		}
	}

	for _, route := range srv.Routes() {
		if route.Method == http.MethodGet {
			assert.Contains(t, covered, route.Path, "a GET route whose resource this test does not render")
		}
	}
	// The delegation's DelegatedTime and audit entry, the trashed message's change, the subscriptions and
	// their dead letters were all made during the test.
	assert.GreaterOrEqual(t, timestamps, 6, "local date-times made during the test were checked")
}

// localTime is the form of a local date-time without a zone, as the interface writes them.
var localTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?$`)

// checkLocalTimes checks every local date-time of a JSON resource that falls within three hours of the
// request (so it was made during the test; the dataset's are years old) against the request's time in the
// service's zone, and returns how many it checked.
func checkLocalTimes(t *testing.T, v any, path string, from, to time.Time) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != "_links" {
				n += checkLocalTimes(t, x, path+"."+k, from, to)
			}
		}
	case []any:
		for i, x := range v {
			n += checkLocalTimes(t, x, fmt.Sprintf("%s[%d]", path, i), from, to)
		}
	case string:
		if !localTime.MatchString(v) {
			return 0
		}
		at, err := time.ParseInLocation("2006-01-02T15:04:05", v[:19], clock.Zone())
		require.NoError(t, err)
		if at.Before(from.Add(-3*time.Hour)) || at.After(to.Add(3*time.Hour)) {
			return 0
		}
		assert.WithinRange(t, at, from.Add(-time.Minute), to.Add(time.Minute),
			"%s = %s is not the request's time in %s (%s)", path, v, clock.Zone(), to.In(clock.Zone()).Format(time.DateTime))
		return 1
	}
	return n
}

// jsonFieldPaths adds the fields of a JSON resource to out as paths (Name, Rights[].Action,
// _embedded.messages[].Subject); links are not fields.
func jsonFieldPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case []any: // a plain array of resources
		for _, item := range x {
			jsonFieldPaths(item, prefix+"[].", out)
		}
	case map[string]any:
		for key, val := range x {
			switch key {
			case "_links":
			case "_embedded":
				for name, list := range val.(map[string]any) {
					for _, item := range list.([]any) {
						jsonFieldPaths(item, prefix+"_embedded."+name+"[].", out)
					}
				}
			default:
				out[prefix+key] = true
				switch inner := val.(type) {
				case map[string]any:
					jsonFieldPaths(inner, prefix+key+".", out)
				case []any:
					for _, item := range inner {
						if _, ok := item.(map[string]any); ok {
							jsonFieldPaths(item, prefix+key+"[].", out)
						}
					}
				}
			}
		}
	}
}

// xmlElement is an element of an XML answer.
type xmlElement struct {
	name, rel string
	children  []*xmlElement
}

func xmlTree(t *testing.T, body []byte) *xmlElement {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(body)))
	var stack []*xmlElement
	var root *xmlElement
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, string(body))
		switch e := tok.(type) {
		case xml.StartElement:
			n := &xmlElement{name: e.Name.Local}
			for _, a := range e.Attr {
				if a.Name.Local == "rel" {
					n.rel = a.Value
				}
			}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	require.NotNil(t, root)
	return root
}

// xmlFieldPaths adds the fields of an XML resource to out as jsonFieldPaths names them. shape is the
// resource's JSON form, which tells a list (its items are the element's children) from a struct.
func xmlFieldPaths(n *xmlElement, shape any, prefix string, out map[string]bool) {
	if list, ok := shape.([]any); ok { // <resources> of a plain array
		for i, item := range n.children {
			xmlFieldPaths(item, at(list, i), prefix+"[].", out)
		}
		return
	}
	obj, _ := shape.(map[string]any)
	embedded, _ := obj["_embedded"].(map[string]any)
	seen := map[string]int{}
	for _, c := range n.children {
		switch {
		case c.name == "link":
		case c.name == "resource" && c.rel != "":
			list, _ := embedded[c.rel].([]any)
			xmlFieldPaths(c, at(list, seen[c.rel]), prefix+"_embedded."+c.rel+"[].", out)
			seen[c.rel]++
		default:
			out[prefix+c.name] = true
			switch inner := obj[c.name].(type) {
			case map[string]any:
				xmlFieldPaths(c, inner, prefix+c.name+".", out)
			case []any:
				for i, item := range c.children {
					if m, ok := at(inner, i).(map[string]any); ok {
						xmlFieldPaths(item, m, prefix+c.name+"[].", out)
					}
				}
			}
		}
	}
}

func at(list []any, i int) any {
	if i < len(list) {
		return list[i]
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
