package identity

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/postbox/postbox/store"
)

type actionMask uint8

func maskOf(a Action) actionMask {
	if i := slices.Index(allActions, a); i >= 0 {
		return 1 << i
	}
	return 0
}

// RightSet is what a subject may do for one reportee.
type RightSet struct {
	// All is set for a person acting for themself: every right on every service, main administrator.
	All       bool
	rights    map[store.ServiceKey]actionMask
	roleCodes []string
	// visibility is Visibility, sorted once when the set is made: every mailbox request needs it, and the
	// set is cached.
	visibility store.Visibility
}

// Has tells whether the set allows action a on service s.
func (r RightSet) Has(a Action, s store.ServiceKey) bool {
	return r.All || r.rights[s]&maskOf(a) != 0
}

// Services lists the services on which the set allows a, in a stable order.
func (r RightSet) Services(a Action) []store.ServiceKey {
	var out []store.ServiceKey
	for s, m := range r.rights {
		if m&maskOf(a) != 0 {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(x, y store.ServiceKey) int {
		if c := strings.Compare(x.Code, y.Code); c != 0 {
			return c
		}
		return x.Edition - y.Edition
	})
	return out
}

// Visibility is which of the reportee's messages (and their events) the set lets its holder see.
func (r RightSet) Visibility() store.Visibility {
	if r.All {
		return store.Visibility{All: true}
	}
	return r.visibility
}

// HoldsRole tells whether one of the subject's roles for the reportee has the role definition code.
func (r RightSet) HoldsRole(code string) bool {
	return slices.Contains(r.roleCodes, code)
}

// MainAdministratorCode is the role definition code of the main administrator, the automatic base role of
// a party acting for itself.
const MainAdministratorCode = "HADM"

// MainAdministrator tells whether the subject is main administrator (HADM) for the reportee.
func (r RightSet) MainAdministrator() bool { return r.All || r.HoldsRole(MainAdministratorCode) }

// AccessManager tells whether the subject may manage access for the reportee (HADM or ADMAI).
func (r RightSet) AccessManager() bool { return r.MainAdministrator() || r.HoldsRole("ADMAI") }

// Represents tells whether the subject may act for the reportee at all.
func (r RightSet) Represents() bool { return r.All || len(r.roleCodes) > 0 }

// Rights answers "may this subject do that for this reportee" from roles, role definitions and their
// rights, with a cache that every change to roles or role definitions empties, in every replica, through
// PostgreSQL LISTEN/NOTIFY. While no listener is connected the cache is bypassed, so a lost
// notification can never leave stale rights behind.
type Rights struct {
	q         *store.Queries
	mu        sync.RWMutex
	cache     map[rightsKey]cachedRights
	ttl       time.Duration
	gen       atomic.Uint64
	listening atomic.Bool
	log       *slog.Logger
}

// cachedRights is a cached answer and when it was read.
type cachedRights struct {
	set    RightSet
	readAt time.Time
}

// DefaultRightsCacheTTL is how long a cached answer is used unless WithCacheTTL says otherwise.
const DefaultRightsCacheTTL = time.Minute

type rightsKey struct {
	subject  store.Subject
	reportee int64
}

// maxCachedRights bounds the cache; past it the cache starts over.
const maxCachedRights = 100_000

// NewRights returns an effective-rights service over q. Call Listen to enable its cache.
func NewRights(q *store.Queries, log *slog.Logger) *Rights {
	return &Rights{q: q, cache: map[rightsKey]cachedRights{}, ttl: DefaultRightsCacheTTL, log: log}
}

// WithCacheTTL sets how long a cached answer is used (config's POSTBOX_RIGHTS_CACHE_TTL); call it before
// the first use.
func (r *Rights) WithCacheTTL(ttl time.Duration) *Rights {
	r.ttl = ttl
	return r
}

// For returns the rights of p for the reportee.
func (r *Rights) For(ctx context.Context, p Principal, reporteeID int64) (RightSet, error) {
	if self := p.Self(); self != 0 && self == reporteeID {
		return RightSet{All: true}, nil
	}
	return r.ForSubject(ctx, p.Subject(), reporteeID)
}

// ForSubscriber returns the rights of subject for the reportee as For does for the caller it was: all of
// them where it acts for itself. A webhook subscription keeps its subscriber as a subject.
func (r *Rights) ForSubscriber(ctx context.Context, s store.Subject, reporteeID int64) (RightSet, error) {
	if s.PartyID != 0 && s.PartyID == reporteeID {
		return RightSet{All: true}, nil
	}
	return r.ForSubject(ctx, s, reporteeID)
}

// ForSubject returns the rights a subject's roles give for the reportee.
func (r *Rights) ForSubject(ctx context.Context, s store.Subject, reporteeID int64) (RightSet, error) {
	key := rightsKey{s, reporteeID}
	caching := r.listening.Load()
	if caching {
		r.mu.RLock()
		cached, ok := r.cache[key]
		r.mu.RUnlock()
		// The TTL is the fallback of a listener that hears nothing: behind a transaction-mode pooler a
		// LISTEN is accepted and never notified, and the cache would otherwise keep a revoked right.
		if ok && time.Since(cached.readAt) < r.ttl {
			return cached.set, nil
		}
	}
	gen, readAt := r.gen.Load(), time.Now()
	rows, err := NewStore(r.q).RoleRights(ctx, s, reporteeID)
	if err != nil {
		return RightSet{}, err
	}
	set := RightSet{rights: map[store.ServiceKey]actionMask{}}
	for _, row := range rows {
		if !slices.Contains(set.roleCodes, row.RoleDefinitionCode) {
			set.roleCodes = append(set.roleCodes, row.RoleDefinitionCode)
		}
		if row.ServiceCode != "" {
			k := store.ServiceKey{Code: row.ServiceCode, Edition: row.ServiceEdition}
			set.rights[k] |= maskOf(Action(row.Action))
		}
	}
	set.visibility = store.NewVisibility(set.Services(Read), set.Services(ArchiveRead))
	if caching {
		r.mu.Lock()
		// A change that arrived while we read may have made these rows stale: keep them only if none did.
		if r.gen.Load() == gen {
			if len(r.cache) >= maxCachedRights {
				clear(r.cache)
			}
			r.cache[key] = cachedRights{set: set, readAt: readAt}
		}
		r.mu.Unlock()
	}
	return set, nil
}

// Invalidate forgets every cached answer; writers call it after a change commits, and the listener
// on every replica when PostgreSQL reports one.
func (r *Rights) Invalidate() {
	r.gen.Add(1)
	r.mu.Lock()
	clear(r.cache)
	r.mu.Unlock()
}

// Listen keeps a connection made from conn LISTENing for rights changes until ctx ends, reconnecting
// after failures; the cache is on only while it listens.
func (r *Rights) Listen(ctx context.Context, conn *pgx.ConnConfig) {
	off := func() {
		r.listening.Store(false)
		r.Invalidate()
	}
	defer off()
	store.Listen(ctx, conn, []string{"postbox_rights_changed"}, store.ListenHandler{
		Connected: func() {
			// Anything cached before the LISTEN took effect may have missed a change.
			r.Invalidate()
			r.listening.Store(true)
		},
		Notified: func(*pgconn.Notification) { r.Invalidate() },
		Lost: func(err error) {
			off()
			r.log.WarnContext(ctx, "rights change listener lost its connection; caching off until it is back", "err", err)
		},
	})
}

// Listening tells whether the cache is on; tests wait for it.
func (r *Rights) Listening() bool { return r.listening.Load() }
