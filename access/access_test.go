package access_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/access"
	"github.com/postbox/postbox/audit"
	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

type invalidations struct{ n int }

func (i *invalidations) Invalidate() { i.n++ }

// For and ForSubject answer no rights: these tests' callers act for no one but themselves.
func (i *invalidations) For(context.Context, identity.Principal, int64) (identity.RightSet, error) {
	return identity.RightSet{}, nil
}

func (i *invalidations) ForSubject(context.Context, store.Subject, int64) (identity.RightSet, error) {
	return identity.RightSet{}, nil
}

// A local role's life through the room: each change one transaction with its audit line and event, the
// rights cache emptied after each that committed and never after a refused one.
func TestLocalRoleChanges(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	var reportee int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM parties WHERE organization_number = '310123455'`).Scan(&reportee))
	cache := &invalidations{}
	s := access.New(pool, cache, nil, events.NewBuilder("http://postbox.test"), nil)
	actor := audit.Entry{At: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), ActorName: "Tester", ActorMethod: "test", APIKeyName: "k", RequestID: "r"}
	count := func(sql string, args ...any) int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	auditBefore, eventsBefore := count(`SELECT count(*) FROM authorization_audit`), count(`SELECT count(*) FROM events`)

	name, description, renamed := "Lønn", "lønnsrapportering", "Lønn og a-melding"
	role := access.LocalRoleRequest{Name: &name, Description: &description, RightsAt: "Rights",
		Rights: []access.RightRequest{{ServiceCode: "4711", ServiceEditionCode: "2", Action: "read"}}}

	// Every problem of a request is named at once, before anything is written.
	blank, unknown := "", access.LocalRoleRequest{Name: &name, RightsAt: "Rights", Rights: []access.RightRequest{
		{ServiceCode: "4711", ServiceEditionCode: "99", Action: "Read"}, {ServiceCode: "4711", ServiceEditionCode: "x", Action: "Fly"}}}
	_, err := s.CreateLocalRole(ctx, actor, reportee, access.LocalRoleRequest{Name: &blank, RightsAt: "Rights"})
	var refused *access.Error
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, access.BadInput, refused.Kind)
	assert.Len(t, refused.Items, 2, "no name, no rights: %v", refused.Items)
	_, err = s.CreateLocalRole(ctx, actor, reportee, unknown)
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, []string{"Rights[1].ServiceEditionCode must be a positive integer",
		`Rights[1].Action "Fly" is not one of Read, Write, Delete, Sign, ReadArchive, DeleteArchive`,
		"Rights[0]: there is no service 4711 edition 99"}, refused.Items)
	assert.Zero(t, cache.n, "a refused request changes nothing")

	id, err := s.CreateLocalRole(ctx, actor, reportee, role)
	require.NoError(t, err)
	assert.Equal(t, 1, cache.n)

	_, err = s.CreateLocalRole(ctx, actor, reportee, role)
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, access.NameTaken, refused.Kind)
	assert.Equal(t, 1, cache.n, "a refused change empties nothing")

	local := access.RoleDefinition{ID: id, Name: "Lønn", OwnerPartyID: reportee}
	stale := errors.New("stale")
	err = s.UpdateLocalRole(ctx, actor, reportee, local, role, func(access.RoleDefinition) error { return stale })
	assert.ErrorIs(t, err, stale, "the precondition is checked on the locked row")
	require.NoError(t, s.UpdateLocalRole(ctx, actor, reportee, local, access.LocalRoleRequest{Name: &renamed, Rights: role.Rights, RightsAt: "Rights"},
		func(d access.RoleDefinition) error {
			assert.Equal(t, "Lønn", d.Name)
			return nil
		}))
	assert.Equal(t, 2, cache.n)

	d := access.RoleDefinition{ID: id, Name: renamed, OwnerPartyID: reportee}
	require.NoError(t, s.DeleteLocalRole(ctx, actor, reportee, d, nil))
	err = s.UpdateLocalRole(ctx, actor, reportee, d, role, func(access.RoleDefinition) error { return nil })
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, access.Gone, refused.Kind)
	assert.Equal(t, 3, cache.n)
	platform := access.RoleDefinition{ID: id, Name: renamed} // no owner: a platform role
	require.ErrorAs(t, s.DeleteLocalRole(ctx, actor, reportee, platform, nil), &refused)
	assert.Equal(t, access.PlatformRole, refused.Kind)
	require.ErrorAs(t, s.UpdateLocalRole(ctx, actor, reportee, platform, role, nil), &refused)
	assert.Equal(t, access.PlatformRole, refused.Kind)

	assert.Equal(t, auditBefore+3, count(`SELECT count(*) FROM authorization_audit`), "created, changed, deleted")
	assert.Equal(t, eventsBefore+3, count(`SELECT count(*) FROM events`))
	assert.Equal(t, 1, count(`SELECT count(*) FROM authorization_audit WHERE role_definition_id = $1 AND summary LIKE 'changed local role%'`, id))
}

// A delegation gives every role in one change; one the holder has already refuses it all.
func TestDelegateRoles(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	var reportee, holder int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM parties WHERE organization_number = '310123455'`).Scan(&reportee))
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM parties WHERE kind = 'Person' AND id <> $1 AND NOT EXISTS
		(SELECT FROM roles r WHERE r.holder_party_id = parties.id AND r.reportee_id = $1) LIMIT 1`, reportee).Scan(&holder))
	var defs []access.RoleDefinition
	rows, err := pool.Query(ctx, `SELECT id, COALESCE(role_definition_code, ''), role_name FROM role_definitions
		WHERE role_definition_code IN ('REGNA', 'UTINN') ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var d access.RoleDefinition
		require.NoError(t, rows.Scan(&d.ID, &d.Code, &d.Name))
		defs = append(defs, d)
	}
	require.NoError(t, rows.Err())
	require.Len(t, defs, 2)
	cache := &invalidations{}
	s := access.New(pool, cache, nil, events.NewBuilder("http://postbox.test"), nil)
	actor := audit.Entry{At: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), ActorName: "Tester", ActorMethod: "test", APIKeyName: "k", RequestID: "r"}

	ids, err := s.DelegateRoles(ctx, actor, reportee, access.Holder{PartyID: holder, Name: "Mottaker"}, access.Grant{Roles: defs[:1]})
	require.NoError(t, err)
	require.Len(t, ids, 1)
	assert.Equal(t, 1, cache.n)

	_, err = s.DelegateRoles(ctx, actor, reportee, access.Holder{PartyID: holder, Name: "Mottaker"}, access.Grant{Roles: defs})
	var refused *access.Error
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, access.AlreadyHeld, refused.Kind)
	var held int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM roles WHERE holder_party_id = $1 AND reportee_id = $2`, holder, reportee).Scan(&held))
	assert.Equal(t, 1, held, "the refused delegation gave nothing")
	assert.Equal(t, 1, cache.n)
}

// A role's deletion: one who may not delete it learns nothing of whether it exists; an access manager
// learns that it is not there, and deletes one that is, with its audit line, after which the holder is
// refused like anyone for a role that is gone.
func TestDeleteRole(t *testing.T) {
	ctx := context.Background()
	pool := storetest.New(t)
	var reportee, holder int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM parties WHERE organization_number = '310123455'`).Scan(&reportee))
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM parties WHERE kind = 'Person' AND id <> $1 AND NOT EXISTS
		(SELECT FROM roles r WHERE r.holder_party_id = parties.id AND r.reportee_id = $1) LIMIT 1`, reportee).Scan(&holder))
	var def access.RoleDefinition
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM role_definitions WHERE role_definition_code = 'REGNA'`).Scan(&def.ID))
	s := access.New(pool, &invalidations{}, nil, events.NewBuilder("http://postbox.test"), nil)
	actor := audit.Entry{ReporteeID: reportee, ActorName: "Tester", ActorMethod: "test", RequestID: "r"}
	ids, err := s.DelegateRoles(ctx, actor, reportee, access.Holder{PartyID: holder, Name: "Mottaker"}, access.Grant{Roles: []access.RoleDefinition{def}})
	require.NoError(t, err)
	role := strconv.FormatInt(ids[0], 10)

	stranger := access.Caller{Actor: actor, Principal: identity.Principal{PersonID: -1}, Who: "310123455"}
	manager := stranger
	manager.Rights = identity.RightSet{All: true}
	who := access.Who{Party: identity.Party{ID: reportee}}
	kind := func(err error) access.Kind {
		var refused *access.Error
		require.ErrorAs(t, err, &refused)
		return refused.Kind
	}
	assert.Equal(t, access.NotAccessManager, kind(s.DeleteRole(ctx, stranger, who, role)))
	assert.Equal(t, access.NotAccessManager, kind(s.DeleteRole(ctx, stranger, who, "999999999")), "the same answer as for a role that exists")
	assert.Equal(t, access.NotFound, kind(s.DeleteRole(ctx, manager, who, "999999999")))
	assert.Equal(t, access.NotFound, kind(s.DeleteRole(ctx, manager, who, "REGNA")))

	audited := func() int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM authorization_audit WHERE role_id = $1 AND action = $2`,
			ids[0], access.AuditDeleteRole).Scan(&n))
		return n
	}
	require.NoError(t, s.DeleteRole(ctx, manager, who, role))
	assert.Equal(t, 1, audited())
	assert.Equal(t, access.NotFound, kind(s.DeleteRole(ctx, manager, who, role)), "gone")
}
