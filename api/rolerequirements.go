package api

import (
	"math"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/api/problem"
	"github.com/postbox/postbox/api/render"
	"github.com/postbox/postbox/store"
)

// roleRequirement is a platform role definition that grants rights on a service, with those rights: what
// a user must be given to use the service.
type roleRequirement struct {
	RoleType           string
	RoleDefinitionID   int `json:"RoleDefinitionId"`
	RoleDefinitionCode string
	RoleName           string
	RoleDescription    string
	Rights             []rightResource `xmlitem:"Right"`
}

// roleRequirementService reads the required serviceCode and serviceEditionCode of the role requirements.
func roleRequirementService(c *gin.Context) (store.ServiceKey, error) {
	code, edition := c.Query("serviceCode"), c.Query("serviceEditionCode")
	switch {
	case code == "":
		return store.ServiceKey{}, problem.BadRequest("serviceCode is required")
	case !serviceCodePattern.MatchString(code):
		return store.ServiceKey{}, problem.BadRequest("serviceCode %q is not a service code (letters, digits, '-' or '_', at most 64)", code)
	case edition == "":
		return store.ServiceKey{}, problem.BadRequest("serviceEditionCode is required")
	}
	n, err := strconv.Atoi(edition)
	if err != nil || n <= 0 || n > math.MaxInt32 {
		return store.ServiceKey{}, problem.BadRequest("serviceEditionCode must be a positive integer")
	}
	return store.ServiceKey{Code: code, Edition: n}, nil
}

// listRoleRequirements lists the platform role definitions that grant a right on a service edition, each
// with the rights it grants there; the collection links to the service.
func (h *metadataHandlers) listRoleRequirements(c *gin.Context) {
	key, err := roleRequirementService(c)
	if err != nil {
		abort(c, err)
		return
	}
	svc, err := h.catalog.Service(c.Request.Context(), "", key.Code, key.Edition)
	if err != nil {
		abort(c, err)
		return
	}
	var service render.Links
	service.Add("service", render.Link{Href: h.serviceEntry(c, svc.Service).Links.Self()})
	respondList(c, "rolerequirements", func(lq store.ListQuery) ([]access.RoleDefinition, bool, error) {
		return h.catalog.RoleRequirements(c.Request.Context(), key, lq)
	}, func(d access.RoleDefinition) roleRequirement {
		return roleRequirement{RoleType: d.RoleType, RoleDefinitionID: d.ID, RoleDefinitionCode: d.Code, RoleName: d.Name,
			RoleDescription: d.Description, Rights: rightResources(d.Rights)}
	}, service)
}
