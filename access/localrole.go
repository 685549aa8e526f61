package access

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/postbox/postbox/internal/refusal"
	"github.com/postbox/postbox/store"
)

// LocalRoleRequest is a local role definition as a client wrote it, every text as sent; RightsAt names
// where its rights are in the request, for the refusal's details.
type LocalRoleRequest struct {
	Name        *string
	Description *string
	Rights      []RightRequest
	RightsAt    string
}

// RightRequest is a right of a local role as a client wrote it.
type RightRequest struct {
	ServiceCode, ServiceEditionCode, Action string
}

// localRoleActions maps the actions of role creation (and, for a client that sends back what it read, the
// names rights are shown with) to the stored action.
var localRoleActions = map[string]string{
	"read": "Read", "write": "Write", "delete": "Delete", "sign": "Sign",
	"readarchive": "ArchiveRead", "deletearchive": "ArchiveDelete",
	"archiveread": "ArchiveRead", "archivedelete": "ArchiveDelete",
}

// MaxLocalRoleRights bounds the rights of a local role.
const MaxLocalRoleRights = 200

// localRoleOf checks r: a name, one to MaxLocalRoleRights rights of known actions on service editions
// that exist (the same right twice is one). Every problem found is in the BadInput refusal's Items.
func localRoleOf(ctx context.Context, q Store, r LocalRoleRequest) (LocalRole, error) {
	var (
		l    LocalRole
		errs []string
	)
	if r.Name == nil || strings.TrimSpace(*r.Name) == "" {
		errs = append(errs, "RoleName is required")
	} else {
		l.Name = strings.TrimSpace(*r.Name)
	}
	if r.Description != nil {
		l.Description = strings.TrimSpace(*r.Description)
	}
	switch {
	case len(r.Rights) == 0:
		errs = append(errs, "_embedded.Rights must hold at least one right {ServiceCode, ServiceEditionCode, Action}")
	case len(r.Rights) > MaxLocalRoleRights:
		errs = append(errs, fmt.Sprintf("_embedded.Rights holds more than %d rights", MaxLocalRoleRights))
	}
	seen := map[RightSpec]bool{}
	var (
		keys []store.ServiceKey
		at   []string
	)
	for i, right := range r.Rights {
		where := fmt.Sprintf("%s[%d]", r.RightsAt, i)
		code := strings.TrimSpace(right.ServiceCode)
		codeOK := code != "" && len(code) <= 64
		edition, err := strconv.Atoi(strings.TrimSpace(right.ServiceEditionCode))
		editionOK := err == nil && edition > 0
		action, actionOK := localRoleActions[strings.ToLower(strings.TrimSpace(right.Action))]
		if !codeOK {
			errs = append(errs, where+".ServiceCode is required")
		}
		if !editionOK {
			errs = append(errs, where+".ServiceEditionCode must be a positive integer")
		}
		if !actionOK {
			errs = append(errs, fmt.Sprintf("%s.Action %q is not one of Read, Write, Delete, Sign, ReadArchive, DeleteArchive", where, right.Action))
		}
		if !codeOK || !editionOK || !actionOK {
			continue
		}
		spec := RightSpec{ServiceCode: code, ServiceEdition: edition, Action: action}
		if seen[spec] {
			continue // the same right twice is the same right
		}
		seen[spec] = true
		l.Rights = append(l.Rights, spec)
		keys = append(keys, store.ServiceKey{Code: code, Edition: edition})
		at = append(at, where)
	}
	if len(keys) > 0 {
		unknown, err := q.UnknownServices(ctx, keys)
		if err != nil {
			return l, err
		}
		for _, u := range unknown {
			for i, k := range keys {
				if k == u {
					errs = append(errs, fmt.Sprintf("%s: there is no service %s edition %d", at[i], u.Code, u.Edition))
					break
				}
			}
		}
	}
	if len(errs) > 0 {
		e := refusal.New(BadInput, "the role definition is not valid: %s", strings.Join(errs, "; "))
		e.Items = errs
		return l, e
	}
	return l, nil
}
