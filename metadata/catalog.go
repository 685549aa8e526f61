// Package metadata is the room of the open metadata area (/api/metadata…): the service editions with
// their forms, steps, attachment rules and signing, the schemas of their forms and attachment rules, the
// role definitions a service requires, and the code lists. It answers anyone: nothing here depends on a
// caller. Its lists and schemas are its own SQL (queries.go).
package metadata

import (
	"context"
	"errors"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/store"
)

// The types of service edition, as ServiceType and in the metadata paths.
const (
	FormTask       = "FormTask"
	Correspondence = "Correspondence"
)

// Kind is a kind of refused request.
type Kind int

// Kinds of refusal.
const (
	NotFound Kind = iota + 1 // no such service edition, schema or code list
)

// Error is a refused request.
type Error = refusal.Error[Kind]

// Catalog answers the metadata area's reads.
type Catalog struct {
	q *store.Queries
}

// New returns the catalog over q (whose list timeout bounds its lists).
func New(q *store.Queries) *Catalog { return &Catalog{q: q} }

// Services lists service editions, by default ordered by code and edition, and whether more follow.
func (c *Catalog) Services(ctx context.Context, lq store.ListQuery) ([]store.Service, bool, error) {
	return listServices(ctx, c.q, lq)
}

// Service is service edition code/edition of serviceType ("" for either).
func (c *Catalog) Service(ctx context.Context, serviceType, code string, edition int) (store.ServiceDetail, error) {
	svc, err := c.q.GetService(ctx, code, edition)
	if err == nil && serviceType != "" && svc.ServiceType != serviceType {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		if serviceType == "" {
			return svc, refusal.New(NotFound, "there is no service %s edition %d", code, edition)
		}
		return svc, refusal.New(NotFound, "there is no %s service %s edition %d", serviceType, code, edition)
	}
	return svc, err
}

// FormSchema is the XSD of the form with data format id/version of service edition code/edition.
func (c *Catalog) FormSchema(ctx context.Context, code string, edition int, id string, version int) (string, error) {
	xsd, err := formSchema(ctx, c.q.DB(), code, edition, id, version)
	if errors.Is(err, store.ErrNotFound) {
		return "", refusal.New(NotFound, "service %s edition %d has no form with data format %s version %d", code, edition, id, version)
	}
	return xsd, err
}

// AttachmentRuleSchema is the XSD attachments of rule ruleID of service edition code/edition must be
// valid against; a rule that requires no XSD validation has none.
func (c *Catalog) AttachmentRuleSchema(ctx context.Context, code string, edition, ruleID int) (string, error) {
	xsd, err := AttachmentRuleSchema(ctx, c.q.DB(), code, edition, ruleID)
	if errors.Is(err, store.ErrNotFound) {
		return "", refusal.New(NotFound, "service %s edition %d has no attachment rule %d that requires XSD validation", code, edition, ruleID)
	}
	return xsd, err
}

// RoleRequirements lists, by id, the platform role definitions that grant a right on the service edition,
// each with the rights it grants there.
func (c *Catalog) RoleRequirements(ctx context.Context, service store.ServiceKey, lq store.ListQuery) ([]access.RoleDefinition, bool, error) {
	return access.NewStore(c.q).RoleRequirements(ctx, service, lq)
}

// CodeLists lists code lists, in one language when language is not zero.
func (c *Catalog) CodeLists(ctx context.Context, language int, lq store.ListQuery) ([]CodeList, bool, error) {
	return listCodeLists(ctx, c.q, language, lq)
}

// CodeList is version version of code list name in language, with its codes (language zero: bokmål
// when it has it, else the lowest language id).
func (c *Catalog) CodeList(ctx context.Context, name string, version, language int) (CodeList, []Code, error) {
	list, codes, err := codeList(ctx, c.q.DB(), name, version, language)
	if errors.Is(err, store.ErrNotFound) {
		return list, nil, refusal.New(NotFound, "there is no code list %s version %d in that language", name, version)
	}
	if codes == nil {
		codes = []Code{}
	}
	return list, codes, err
}
