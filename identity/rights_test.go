package identity_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/storetest"
)

func party(t testing.TB, pool *pgxpool.Pool, key string) int64 {
	t.Helper()
	p, err := identity.NewStore(store.New(pool)).FindParty(context.Background(), key)
	require.NoError(t, err)
	return p.ID
}

func person(t testing.TB, pool *pgxpool.Pool, ssn string) identity.Principal {
	id := party(t, pool, ssn)
	return identity.Principal{Method: identity.MethodPersonToken, PersonID: id, SecurityLevel: 3}
}

func enterpriseUser(t testing.TB, pool *pgxpool.Pool) identity.Principal {
	t.Helper()
	l, err := identity.FindLogin(context.Background(), pool, "NORDKYST_INTEGRASJON")
	require.NoError(t, err)
	return identity.Principal{Method: identity.MethodEnterpriseUser, LoginID: l.ID, OrganizationID: l.OrganizationID, SecurityLevel: 3}
}

var (
	s4711v1 = store.ServiceKey{Code: "4711", Edition: 1}
	s4711v2 = store.ServiceKey{Code: "4711", Edition: 2}
	s5302   = store.ServiceKey{Code: "5302", Edition: 1}
	s6120   = store.ServiceKey{Code: "6120", Edition: 1}
	s7001   = store.ServiceKey{Code: "7001", Edition: 1}
	s7102   = store.ServiceKey{Code: "7102", Edition: 1}
)

// The personas of deploy/demo/README.md and what the dataset gives each of them.
func TestEffectiveRightsOfThePersonas(t *testing.T) {
	pool := storetest.New(t)
	rights := identity.NewRights(store.New(pool), slog.New(slog.DiscardHandler))
	ctx := context.Background()
	o1, o2, o3, o4, o5, o6 := party(t, pool, "310123455"), party(t, pool, "310123609"), party(t, pool, "310246808"),
		party(t, pool, "310369128"), party(t, pool, "310481203"), party(t, pool, "310593001")
	p1, p2, p3 := person(t, pool, "12857812326"), person(t, pool, "03919023480"), person(t, pool, "27828534586")
	p4, p5, eu := person(t, pool, "19886945720"), person(t, pool, "01928216752"), enterpriseUser(t, pool)

	type check struct {
		action  identity.Action
		service store.ServiceKey
		want    bool
	}
	cases := []struct {
		name       string
		who        identity.Principal
		reportee   int64
		represents bool
		mainAdmin  bool
		accessMgr  bool
		checks     []check
	}{
		{"P1 for O1 (DAGL + HADM)", p1, o1, true, true, true, []check{
			{identity.Sign, s4711v1, true}, {identity.Read, s7102, true}, {identity.ArchiveDelete, s6120, true}}},
		{"P1 for O2 (UTINN)", p1, o2, true, false, false, []check{{identity.Write, s4711v1, true}, {identity.Read, s7102, false}}},
		{"P1 for O3 (POSTI)", p1, o3, true, false, false, []check{{identity.Read, s7001, true}}},
		{"P1 for herself", p1, p1.PersonID, true, true, true, []check{{identity.Sign, s5302, true}, {identity.Delete, s6120, true}}},
		{"P2 for O1 (nothing)", p2, o1, false, false, false, []check{{identity.Read, s4711v1, false}, {identity.Read, s7102, false}}},
		{"P3 for O1 (ADMAI + REGNA)", p3, o1, true, false, true, []check{
			{identity.Read, s4711v2, true}, {identity.Write, s4711v2, true}, {identity.Sign, s4711v2, false}, {identity.Sign, s4711v1, false}}},
		{"P4 for O1 (INNSK: Read 7102)", p4, o1, true, false, false, []check{
			{identity.Read, s7102, true}, {identity.Write, s7102, false}, {identity.Read, s4711v1, false}, {identity.Read, s7001, false}}},
		{"P5 for O4 (DAGL)", p5, o4, true, false, false, nil},
		{"P5 for O6 (DAGL, deleted)", p5, o6, true, false, false, nil},
		{"P5 for O1 (nothing)", p5, o1, false, false, false, []check{{identity.Read, s4711v1, false}}},
		{"EU for O3", eu, o3, true, false, false, nil},
		{"EU for O5", eu, o5, true, false, false, nil},
		{"EU for O1", eu, o1, false, false, false, []check{{identity.Read, s7001, false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, err := rights.For(ctx, tc.who, tc.reportee)
			require.NoError(t, err)
			assert.Equal(t, tc.represents, set.Represents())
			assert.Equal(t, tc.mainAdmin, set.MainAdministrator())
			assert.Equal(t, tc.accessMgr, set.AccessManager())
			for _, c := range tc.checks {
				assert.Equal(t, c.want, set.Has(c.action, c.service), "%s on %v", c.action, c.service)
			}
		})
	}

	p4set, err := rights.For(ctx, p4, o1)
	require.NoError(t, err)
	assert.Equal(t, []store.ServiceKey{s7102}, p4set.Services(identity.Read))
}

// A role change reaches every replica's cache through LISTEN/NOTIFY: here two Rights services stand for two
// replicas, and the change is made behind both their backs.
func TestRightsCacheFollowsChangesInEveryReplica(t *testing.T) {
	pool := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	replicas := []*identity.Rights{identity.NewRights(store.New(pool), slog.New(slog.DiscardHandler)), identity.NewRights(store.New(pool), slog.New(slog.DiscardHandler))}
	for _, r := range replicas {
		go r.Listen(ctx, pool.Config().ConnConfig)
	}
	require.Eventually(t, func() bool { return replicas[0].Listening() && replicas[1].Listening() }, 5*time.Second, 10*time.Millisecond)

	p2 := person(t, pool, "03919023480")
	o1 := party(t, pool, "310123455")
	for _, r := range replicas {
		set, err := r.For(ctx, p2, o1)
		require.NoError(t, err)
		require.False(t, set.Has(identity.Read, s7102)) // now cached
	}

	_, err := pool.Exec(ctx, `INSERT INTO roles (holder_party_id, reportee_id, role_definition_id, delegator, delegated_time)
		VALUES ($1, $2, 90, 'test', now())`, p2.PersonID, o1)
	require.NoError(t, err)
	for i, r := range replicas {
		assert.Eventually(t, func() bool {
			set, err := r.For(ctx, p2, o1)
			return err == nil && set.Has(identity.Read, s7102)
		}, 5*time.Second, 5*time.Millisecond, "replica %d", i)
	}

	_, err = pool.Exec(ctx, `DELETE FROM role_definition_rights WHERE role_definition_id = 90`)
	require.NoError(t, err)
	for i, r := range replicas {
		assert.Eventually(t, func() bool {
			set, err := r.For(ctx, p2, o1)
			return err == nil && !set.Has(identity.Read, s7102) && set.Represents()
		}, 5*time.Second, 5*time.Millisecond, "replica %d", i)
	}
}

// A listener that hears nothing (its LISTEN went through a transaction-mode pooler; here it listens on
// another database) keeps the cache on, but no longer than the TTL: a revoked role stops counting then.
func TestRightsCacheTTLOutlivesADeafListener(t *testing.T) {
	pool := storetest.New(t)
	deaf, err := pgx.ParseConfig(storetest.NewBlank(t))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ttl = 300 * time.Millisecond
	rights := identity.NewRights(store.New(pool), slog.New(slog.DiscardHandler)).WithCacheTTL(ttl)
	go rights.Listen(ctx, deaf)
	require.Eventually(t, rights.Listening, 5*time.Second, 10*time.Millisecond)

	p2 := person(t, pool, "03919023480")
	o1 := party(t, pool, "310123455")
	_, err = pool.Exec(ctx, `INSERT INTO roles (holder_party_id, reportee_id, role_definition_id, delegator, delegated_time)
		VALUES ($1, $2, 90, 'test', now())`, p2.PersonID, o1)
	require.NoError(t, err)
	set, err := rights.For(ctx, p2, o1)
	require.NoError(t, err)
	require.True(t, set.Has(identity.Read, s7102)) // now cached

	_, err = pool.Exec(ctx, `DELETE FROM roles WHERE holder_party_id = $1 AND reportee_id = $2 AND role_definition_id = 90`, p2.PersonID, o1)
	require.NoError(t, err)
	set, err = rights.For(ctx, p2, o1)
	require.NoError(t, err)
	require.True(t, set.Has(identity.Read, s7102), "the deaf listener heard nothing: the cached answer stands")
	require.Eventually(t, func() bool {
		set, err := rights.For(ctx, p2, o1)
		return err == nil && !set.Has(identity.Read, s7102)
	}, 5*time.Second, 10*time.Millisecond, "without the TTL the revoked role would count for good")
}

// BenchmarkRights measures an answer from a warm cache (target: under 5 µs) against the cold answer,
// which is the one indexed query it caches.
func BenchmarkRights(b *testing.B) {
	pool := storetest.New(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p3 := person(b, pool, "27828534586")
	o1 := party(b, pool, "310123455")

	cold := identity.NewRights(store.New(pool), slog.New(slog.DiscardHandler))
	var coldNs float64
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := cold.For(ctx, p3, o1); err != nil {
				b.Fatal(err)
			}
		}
		coldNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})

	warm := identity.NewRights(store.New(pool), slog.New(slog.DiscardHandler))
	go warm.Listen(ctx, pool.Config().ConnConfig)
	for !warm.Listening() {
		time.Sleep(time.Millisecond)
	}
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			set, err := warm.For(ctx, p3, o1)
			if err != nil || !set.Has(identity.Write, s4711v2) {
				b.Fatal("wrong answer", err)
			}
		}
		warmNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if coldNs > 0 {
			b.ReportMetric(coldNs/warmNs, "x-faster-than-cold")
		}
	})
}
