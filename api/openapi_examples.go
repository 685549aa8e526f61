package api

import (
	"reflect"
	"time"

	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/store"
)

// Examples of the main resources in the OpenAPI document, as values of the types the handlers write (so
// their field names cannot drift); TestOpenAPIExamplesMatchTheirSchemas validates them against the
// document.

const exampleBase = "https://postbox.example"

var exampleTime = render.TimestampOf(time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC))

func exampleLinks(rels ...string) render.Links {
	var l render.Links
	for i := 0; i+1 < len(rels); i += 2 {
		l.Add(rels[i], render.Link{Href: exampleBase + rels[i+1]})
	}
	return l
}

var exampleMessage = messageResource{
	MessageID: "a3101102", Subject: "Melding om flytting", Status: "Utfylling", LastChangedDateTime: exampleTime,
	LastChangedBy: "Ingrid Fjellheim", ServiceOwner: "Folkeregisteret", Type: "FormTask", ServiceCode: "4711", ServiceEdition: 2,
	CreatedDate: exampleTime,
	Links: messageLinks{
		Self:       render.Link{Href: exampleBase + "/api/my/messages/a3101102"},
		Print:      &render.Link{Href: exampleBase + "/api/my/messages/a3101102/print", MimeType: "application/pdf"},
		Metadata:   render.Link{Href: exampleBase + "/api/metadata/formtask/4711/2"},
		PortalView: &render.Link{Href: exampleBase + "/api/my/messages/a3101102/portalview"},
		Form:       []render.Link{{Href: exampleBase + "/api/my/messages/a3101102/forms/1", Name: "Flyttemelding"}},
	},
}

// resourceExamples are the examples of answers by the type of their body.
var resourceExamples = map[reflect.Type]any{
	reflect.TypeFor[messageResource](): exampleMessage,
	reflect.TypeFor[serviceEntry](): serviceEntry{ServiceOwnerCode: "FREG", ServiceOwnerName: "Folkeregisteret",
		ServiceName: "Melding om flytting", ServiceCode: "4711", ServiceEditionCode: 2, ValidFrom: exampleTime, ValidTo: exampleTime,
		ServiceType: "FormTask", Links: exampleLinks("self", "/api/metadata/formtask/4711/2")},
	reflect.TypeFor[reporteeResource](): reporteeResource{ReporteeID: "r50012345", Name: "Fjellheim Bakeri AS", Type: "Foretak",
		OrganizationNumber: "310123455", Status: "Active", Links: exampleLinks("self", "/api/reportees/r50012345", "messages", "/api/r50012345/messages")},
	reflect.TypeFor[formResource](): formResource{Type: "MainForm", DataFormatID: "3106", DataFormatVersion: 21845,
		ValidationStatus: "NotValidated", Name: "Flyttemelding",
		Links: exampleLinks("self", "/api/my/messages/a3101102/forms/1", "formdata", "/api/my/messages/a3101102/forms/1/formdata")},
	reflect.TypeFor[roleResource](): roleResource{RoleID: 5001, RoleType: "Local", RoleDefinitionID: 85, RoleName: "Regnskapsmedarbeider",
		RoleDescription: "Leser og sender regnskapsskjema", Delegator: "Ingrid Fjellheim", DelegatedTime: &exampleTime,
		Links: exampleLinks("roledefinition", "/api/my/authorization/roledefinitions/85")},
	reflect.TypeFor[userRoleDefinition](): userRoleDefinition{RoleType: "Local", RoleDefinitionID: 85, RoleName: "Regnskapsmedarbeider",
		RoleDescription: "Leser og sender regnskapsskjema", Rights: &[]rightResource{{RightID: 7001, RightType: "Service", ServiceCode: "4711",
			ServiceEditionCode: 2, Action: "Read", RightSourceType: "RoleTypeRights", IsDelegatable: true}},
		Links: exampleLinks("self", "/api/310123455/authorization/roledefinitions/85")},
	reflect.TypeFor[store.CustomData](): store.CustomData{Key: "saksnummer", Value: "2026/1234"},
}
