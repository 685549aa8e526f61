package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetadataListsTheServices(t *testing.T) {
	r := get(t, shared, "/api/metadata", "Accept", "application/hal+json")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, "application/hal+json; charset=utf-8", r.Header().Get("Content-Type"))
	services := r.embedded(t, "metadata")
	require.Len(t, services, 7)
	first := services[0]
	assert.Equal(t, "FJE", first["ServiceOwnerCode"])
	assert.Equal(t, "Fjordetaten", first["ServiceOwnerName"])
	assert.Equal(t, "Årsoppgave for næringsvirksomhet", first["ServiceName"])
	assert.Equal(t, "4711", first["ServiceCode"])
	assert.EqualValues(t, 1, first["ServiceEditionCode"])
	assert.Equal(t, "2019-01-01T00:00:00", first["ValidFrom"])
	assert.Equal(t, "FormTask", first["ServiceType"])
	assert.Equal(t, "http://postbox.test/api/metadata/formtask/4711/1", link(t, first, "self"))
	assert.Equal(t, "http://postbox.test/api/metadata", link(t, r.json(t), "self"))

	// Correspondence services link to their own metadata resource, and it answers.
	last := services[6]
	assert.Equal(t, "Correspondence", last["ServiceType"])
	c := get(t, shared, pathOf(t, link(t, last, "self")))
	require.Equal(t, http.StatusOK, c.Code, c.Body.String())
	assert.Equal(t, "7102", c.json(t)["ServiceCode"])
}

func TestMetadataNeedsNoAPIKey(t *testing.T) {
	for _, path := range []string{"/api/metadata", "/api/metadata/formtask/4711/2", "/api/metadata/codelists"} {
		assert.Equal(t, http.StatusOK, get(t, shared, path).Code, path)
	}
}

func TestFormTaskMetadata(t *testing.T) {
	r := get(t, shared, "/api/metadata/formtask/4711/2")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	svc := r.json(t)
	assert.Equal(t, true, svc["RestEnabled"])
	assert.Equal(t, []any{
		map[string]any{"Name": "Utfylling", "SecurityLevel": float64(1)},
		map[string]any{"Name": "Signering", "SecurityLevel": float64(1)},
	}, svc["ProcessSteps"])

	forms := svc["FormsMetaData"].([]any)
	require.Len(t, forms, 1)
	form := forms[0].(map[string]any)
	assert.EqualValues(t, 11002, form["FormID"])
	assert.Equal(t, "Seres", form["DataFormatProviderType"])
	assert.Equal(t, "3106", form["DataFormatID"])
	assert.EqualValues(t, 21845, form["DataFormatVersion"])
	assert.Equal(t, "MainForm", form["FormType"])
	assert.NotContains(t, form, "XsdFile")

	rules := svc["AttachmentRules"].([]any)
	require.NotEmpty(t, rules)
	rule := rules[0].(map[string]any)
	assert.EqualValues(t, 901, rule["AttachmentRuleId"])
	assert.Equal(t, "Revisjonsberetning", rule["AttachmentTypeName"])
	for _, field := range []string{"AllowedFileTypes", "AttachmentTypeNameLanguage", "IsCheckSumAllowed",
		"IsXsdValidationRequired", "MaxAttachmentCount", "MinAttachmentCount", "MaxFileSize"} {
		assert.Contains(t, rule, field)
	}

	// The schema link serves the data model.
	xsd := get(t, shared, pathOf(t, link(t, form, "schema")))
	require.Equal(t, http.StatusOK, xsd.Code, xsd.Body.String())
	assert.Equal(t, "application/xml; charset=utf-8", xsd.Header().Get("Content-Type"))
	assert.Contains(t, xsd.Body.String(), `<xs:element name="Skjema">`)
	requireWellFormedXML(t, xsd.Body.Bytes())

	// A service without attachment types has no AttachmentRules at all.
	assert.NotContains(t, get(t, shared, "/api/metadata/formtask/4711/1").json(t), "AttachmentRules")
}

func TestMetadataNotFound(t *testing.T) {
	cases := map[string]string{
		"/api/metadata/formtask/4711/9":                      "there is no FormTask service 4711 edition 9",
		"/api/metadata/formtask/9999/1":                      "there is no FormTask service 9999 edition 1",
		"/api/metadata/formtask/7001/1":                      "there is no FormTask service 7001 edition 1",
		"/api/metadata/correspondence/4711/1":                "there is no Correspondence service 4711 edition 1",
		"/api/metadata/formtask/4711/1/forms/3106/21845/xsd": "service 4711 edition 1 has no form with data format 3106 version 21845",
		"/api/metadata/codelists/Landkoder/9":                "there is no code list Landkoder version 9",
		"/api/metadata/codelists/Sivilstand/1?language=1033": "there is no code list Sivilstand version 1",
		"/api/metadata/nothing-here":                         "no resource at /api/metadata/nothing-here",
	}
	for path, detail := range cases {
		p := requireProblem(t, get(t, shared, path), http.StatusNotFound)
		assert.Contains(t, p["detail"], detail, path)
	}
}

func TestMetadataBadParameters(t *testing.T) {
	for _, path := range []string{
		"/api/metadata/formtask/4711/first",
		"/api/metadata/formtask/4711/99999999999999999999999",
		"/api/metadata/formtask/4711/-1",
		"/api/metadata/codelists?language=9999",
		"/api/metadata/codelists?language=bokmål",
		"/api/metadata?$top=ten",
		"/api/metadata?$skip=-1",
		"/api/metadata?$filter=" + url.QueryEscape("ServiceCode eq"),
		"/api/metadata?$filter=" + url.QueryEscape("Colour eq 'blue'"),
		"/api/metadata?$filter=" + url.QueryEscape("ValidFrom gt 'yesterday'"),
		"/api/metadata?$filter=" + url.QueryEscape("ServiceEditionCode eq 99999999999999999999999"),
		"/api/metadata?$orderby=" + url.QueryEscape("ServiceName sideways"),
	} {
		requireProblem(t, get(t, shared, path), http.StatusBadRequest)
	}
	p := requireProblem(t, get(t, shared, "/api/metadata?$filter="+url.QueryEscape("ServiceCode eq")), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "$filter: position 14")
	assert.Equal(t, "urn:postbox:problem:invalid-query", p["type"])
	// Each option's errors name that option.
	p = requireProblem(t, get(t, shared, "/api/metadata?$orderby="+url.QueryEscape("ServiceName sideways")), http.StatusBadRequest)
	assert.Contains(t, p["detail"], "$orderby: position 12")
}

func TestMetadataFilterAndOrder(t *testing.T) {
	cases := []struct {
		query string
		want  []string // ServiceCode/Edition in order
	}{
		{"$filter=" + url.QueryEscape("ServiceOwnerCode eq 'FJE'"), []string{"4711/1", "4711/2", "7001/1"}},
		{"$filter=" + url.QueryEscape("ServiceType eq 'Correspondence' or ServiceEditionCode gt 1"), []string{"4711/2", "5302/2", "7001/1", "7102/1"}},
		{"$filter=" + url.QueryEscape("ValidFrom ge DateTime'2022-01-01T00:00:00' and not (ServiceOwnerName eq 'Fjordetaten')"), []string{"5302/1", "5302/2"}},
		{"$filter=" + url.QueryEscape("startswith(ServiceName,'Årsoppgave')"), []string{"4711/1", "4711/2"}},
		{"$orderby=" + url.QueryEscape("ValidFrom desc"), []string{"4711/2", "5302/1", "5302/2", "6120/1", "4711/1", "7001/1", "7102/1"}},
		{"$filter=" + url.QueryEscape("ServiceName eq 'x'' OR 1=1 --'"), []string{}},
	}
	for _, tc := range cases {
		r := get(t, shared, "/api/metadata?"+tc.query)
		require.Equal(t, http.StatusOK, r.Code, "%s: %s", tc.query, r.Body.String())
		got := []string{}
		for _, s := range r.embedded(t, "metadata") {
			got = append(got, fmt.Sprintf("%s/%v", s["ServiceCode"], s["ServiceEditionCode"]))
		}
		assert.Equal(t, tc.want, got, tc.query)
	}
}

func TestMetadataPaging(t *testing.T) {
	seen := map[string]int{}
	path := "/api/metadata?$top=4"
	pages := 0
	for path != "" {
		r := get(t, shared, path)
		require.Equal(t, http.StatusOK, r.Code, r.Body.String())
		body := r.json(t)
		items := r.embedded(t, "metadata")
		assert.LessOrEqual(t, len(items), 4)
		for _, s := range items {
			seen[link(t, s, "self")]++
		}
		pages++
		links := body["_links"].(map[string]any)
		if pages > 1 {
			assert.Contains(t, links, "prev")
		}
		path = ""
		if next, ok := links["next"].(map[string]any); ok {
			assert.Contains(t, next["href"], "$top=4")
			path = pathOf(t, next["href"].(string))
		}
	}
	assert.Equal(t, 2, pages)
	assert.Len(t, seen, 7)
	for self, n := range seen {
		assert.Equal(t, 1, n, self)
	}

	// $top above 50 is capped, not refused.
	assert.Equal(t, http.StatusOK, get(t, shared, "/api/metadata?$top=5000").Code)
}

func TestCodeLists(t *testing.T) {
	all := get(t, shared, "/api/metadata/codelists").embedded(t, "codelists")
	assert.Len(t, all, 8)

	english := get(t, shared, "/api/metadata/codelists?language=1033").embedded(t, "codelists")
	require.Len(t, english, 2)
	for _, l := range english {
		assert.EqualValues(t, 1033, l["Language"])
		assert.Equal(t, "Landkoder", l["Name"])
	}
	self := link(t, english[1], "self")
	assert.Equal(t, "http://postbox.test/api/metadata/codelists/Landkoder/2?language=1033", self)

	detail := get(t, shared, pathOf(t, self))
	require.Equal(t, http.StatusOK, detail.Code, detail.Body.String())
	d := detail.json(t)
	assert.EqualValues(t, 2, d["Version"])
	codes := d["Codes"].([]any)
	require.Len(t, codes, 8)
	assert.Equal(t, map[string]any{"Code": "NO", "Value1": "Norway", "Value2": "NOR", "Value3": ""}, codes[0])

	// Without a language the bokmål list is served.
	nb := get(t, shared, "/api/metadata/codelists/Landkoder/1").json(t)
	assert.EqualValues(t, 1044, nb["Language"])
	assert.Equal(t, "Norge", nb["Codes"].([]any)[0].(map[string]any)["Value1"])
	// A list that only exists in nynorsk and bokmål is served in nynorsk when asked.
	nn := get(t, shared, "/api/metadata/codelists/Sivilstand/1?language=2068").json(t)
	assert.EqualValues(t, 2068, nn["Language"])
}

// A service's signing shows in its metadata: its steps in order and its deadline, in JSON and XML.
func TestMetadataShowsTheSigningSteps(t *testing.T) {
	r := get(t, shared, "/api/metadata/formtask/5302/2")
	require.Equal(t, http.StatusOK, r.Code, r.Body.String())
	assert.Equal(t, []any{map[string]any{"Signees": "Right"}, map[string]any{"Signees": "TaskSignees"}}, r.json(t)["SigningSteps"])
	assert.EqualValues(t, 14, r.json(t)["SigningDeadlineDays"])
	x := get(t, shared, "/api/metadata/formtask/5302/2", "Accept", "application/hal+xml")
	require.Equal(t, http.StatusOK, x.Code, x.Body.String())
	assert.Contains(t, x.Body.String(), "<SigningSteps><SigningStep><Signees>Right</Signees></SigningStep><SigningStep><Signees>TaskSignees</Signees></SigningStep></SigningSteps>")
	// A service that declares none shows none.
	assert.NotContains(t, get(t, shared, "/api/metadata/formtask/5302/1").Body.String(), "SigningSteps")
}
