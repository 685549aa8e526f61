package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/metadata"
	"github.com/postbox/postbox/store"
)

// metadataHandlers answer the open metadata area: services, their forms and schemas, and code lists.
type metadataHandlers struct {
	catalog *metadata.Catalog
}

type serviceEntry struct {
	ServiceOwnerCode   string
	ServiceOwnerName   string
	ServiceName        string
	ServiceCode        string
	ServiceEditionCode int
	ValidFrom          render.Timestamp
	ValidTo            render.Timestamp
	ServiceType        string
	Links              render.Links `json:"_links"`
}

type serviceDetail struct {
	serviceEntry
	RestEnabled           bool
	EUSEnabled            bool
	EnterpriseUserEnabled bool
	FormsMetaData         []formMeta             `xmlitem:"FormMetaData"`
	ProcessSteps          []store.ProcessStep    `xmlitem:"ProcessStep"`
	AttachmentRules       []store.AttachmentRule `json:",omitempty" xmlitem:"AttachmentRule"`
	// SigningText is what a signer confirms, in the requested language (bokmål by default).
	SigningText string
	// SigningSteps are the service's signing in order (none: one signature by anyone with Sign), and
	// SigningDeadlineDays how long a completed task may wait for them.
	SigningSteps        []store.SigningStep `json:",omitempty" xmlitem:"SigningStep"`
	SigningDeadlineDays int                 `json:",omitempty"`
}

// formMeta is a form of the service with the link to its schema.
type formMeta struct {
	store.FormMeta
	Links render.Links `json:"_links"`
}

type codeListEntry struct {
	Name     string
	Version  int
	Language int
	Links    render.Links `json:"_links"`
}

type codeListDetail struct {
	codeListEntry
	Codes []metadata.Code
}

func (h *metadataHandlers) serviceEntry(c *gin.Context, svc store.Service) serviceEntry {
	kind := "formtask"
	if svc.ServiceType == metadata.Correspondence {
		kind = "correspondence"
	}
	var links render.Links
	links.Add("self", render.Link{Href: fmt.Sprintf("%s/api/metadata/%s/%s/%d", baseURL(c), kind, url.PathEscape(svc.ServiceCode), svc.ServiceEdition)})
	return serviceEntry{
		ServiceOwnerCode: svc.ServiceOwnerCode, ServiceOwnerName: svc.ServiceOwnerName, ServiceName: svc.ServiceName,
		ServiceCode: svc.ServiceCode, ServiceEditionCode: svc.ServiceEdition,
		ValidFrom: render.TimestampOf(svc.ValidFrom), ValidTo: render.TimestampOf(svc.ValidTo), ServiceType: svc.ServiceType, Links: links,
	}
}

func (h *metadataHandlers) listServices(c *gin.Context) {
	respondList(c, "metadata", func(lq store.ListQuery) ([]store.Service, bool, error) {
		return h.catalog.Services(c.Request.Context(), lq)
	}, func(svc store.Service) serviceEntry { return h.serviceEntry(c, svc) }, nil)
}

// serviceParams reads the service code and edition of a metadata path.
func serviceParams(c *gin.Context) (string, int, error) {
	code := c.Param("serviceCode")
	edition, err := strconv.Atoi(c.Param("serviceEdition"))
	if err != nil || edition <= 0 {
		return "", 0, problem.BadRequest("service edition %q is not a positive whole number", c.Param("serviceEdition"))
	}
	return code, edition, nil
}

// loadService reads a service edition of the given type, or fails with a 404 that names it.
func (h *metadataHandlers) loadService(c *gin.Context, serviceType string) (store.ServiceDetail, bool) {
	code, edition, err := serviceParams(c)
	if err != nil {
		abort(c, err)
		return store.ServiceDetail{}, false
	}
	svc, err := h.catalog.Service(c.Request.Context(), serviceType, code, edition)
	if err != nil {
		abort(c, err)
		return svc, false
	}
	return svc, true
}

func (h *metadataHandlers) getFormTaskService(c *gin.Context) {
	svc, ok := h.loadService(c, metadata.FormTask)
	if !ok {
		return
	}
	d := serviceDetail{
		serviceEntry: h.serviceEntry(c, svc.Service),
		RestEnabled:  svc.RestEnabled, EUSEnabled: svc.EUSEnabled, EnterpriseUserEnabled: svc.EnterpriseUserEnabled,
		FormsMetaData: make([]formMeta, len(svc.Forms)),
		ProcessSteps:  svc.ProcessSteps,
	}
	if d.ProcessSteps == nil {
		d.ProcessSteps = []store.ProcessStep{}
	}
	self := d.Links.Self()
	for i, f := range svc.Forms {
		var links render.Links
		links.Add("schema", render.Link{Href: fmt.Sprintf("%s/forms/%s/%d/xsd", self, url.PathEscape(f.DataFormatID), f.DataFormatVersion), MimeType: "application/xml"})
		d.FormsMetaData[i] = formMeta{FormMeta: f, Links: links}
	}
	d.AttachmentRules = svc.AttachmentRules
	d.SigningText = svc.SigningText(languageOf(c))
	d.SigningSteps, d.SigningDeadlineDays = svc.SigningSteps, svc.SigningDeadlineDays
	respond(c, http.StatusOK, d)
}

func (h *metadataHandlers) getCorrespondenceService(c *gin.Context) {
	svc, ok := h.loadService(c, metadata.Correspondence)
	if !ok {
		return
	}
	respond(c, http.StatusOK, h.serviceEntry(c, svc.Service))
}

func (h *metadataHandlers) getFormSchema(c *gin.Context) {
	code, edition, err := serviceParams(c)
	if err != nil {
		abort(c, err)
		return
	}
	id := c.Param("dataFormatId")
	version, err := strconv.Atoi(c.Param("dataFormatVersion"))
	if err != nil {
		abort(c, problem.BadRequest("data format version %q is not a whole number", c.Param("dataFormatVersion")))
		return
	}
	xsd, err := h.catalog.FormSchema(c.Request.Context(), code, edition, id, version)
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Content-Disposition", fmt.Sprintf(`inline; filename="%s-%d.xsd"`, safeFileName(id), version))
	c.Data(http.StatusOK, "application/xml; charset=utf-8", []byte(xsd))
}

// getAttachmentRuleSchema is GET …/attachmentrules/{ruleId}/xsd: the schema attachments of a rule with
// IsXsdValidationRequired must be valid against; 404 for a rule that requires no XSD validation.
func (h *metadataHandlers) getAttachmentRuleSchema(c *gin.Context) {
	code, edition, err := serviceParams(c)
	if err != nil {
		abort(c, err)
		return
	}
	ruleID, err := strconv.Atoi(c.Param("ruleId"))
	if err != nil {
		abort(c, problem.NotFound("service %s edition %d has no attachment rule %q", code, edition, c.Param("ruleId")))
		return
	}
	xsd, err := h.catalog.AttachmentRuleSchema(c.Request.Context(), code, edition, ruleID)
	if err != nil {
		abort(c, err)
		return
	}
	c.Header("Content-Disposition", fmt.Sprintf(`inline; filename="attachmentrule-%d.xsd"`, ruleID))
	c.Data(http.StatusOK, "application/xml; charset=utf-8", []byte(xsd))
}

func (h *metadataHandlers) codeListEntry(c *gin.Context, l metadata.CodeList) codeListEntry {
	var links render.Links
	links.Add("self", render.Link{Href: fmt.Sprintf("%s/api/metadata/codelists/%s/%d?language=%d", baseURL(c), url.PathEscape(l.Name), l.Version, l.Language)})
	return codeListEntry{Name: l.Name, Version: l.Version, Language: l.Language, Links: links}
}

func (h *metadataHandlers) listCodeLists(c *gin.Context) {
	respondList(c, "codelists", func(lq store.ListQuery) ([]metadata.CodeList, bool, error) {
		return h.catalog.CodeLists(c.Request.Context(), languageOf(c), lq)
	}, func(l metadata.CodeList) codeListEntry { return h.codeListEntry(c, l) }, nil)
}

func (h *metadataHandlers) getCodeList(c *gin.Context) {
	name := c.Param("name")
	version, err := strconv.Atoi(c.Param("version"))
	if err != nil || version <= 0 {
		abort(c, problem.BadRequest("code list version %q is not a positive whole number", c.Param("version")))
		return
	}
	list, codes, err := h.catalog.CodeList(c.Request.Context(), name, version, languageOf(c))
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, codeListDetail{codeListEntry: h.codeListEntry(c, list), Codes: codes})
}

// safeFileName keeps a value fit for a Content-Disposition file name.
func safeFileName(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f || r == '/' {
			r = '_'
		}
		out = append(out, r)
	}
	return string(out)
}
