package identity

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// The SQL of password logins, their sessions and their throttling.

// Login is a password identity: a person's own, or an enterprise user of an organization.
type Login struct {
	ID                 int64
	Kind               string // Person or EnterpriseUser
	UserName           string
	PasswordHash       string
	PersonID           int64 // Person logins
	OrganizationID     int64 // EnterpriseUser logins
	OrganizationNumber string
	Name               string // the person's name, or the enterprise user's name
}

const loginSelect = `SELECT l.id, l.kind, l.user_name, l.password_hash, COALESCE(l.person_id, 0), COALESCE(l.organization_id, 0),
	COALESCE(o.organization_number, ''), COALESCE(p.name, l.user_name)
	FROM logins l LEFT JOIN parties p ON p.id = l.person_id LEFT JOIN parties o ON o.id = l.organization_id`

func scanLogin(row pgx.Row) (Login, error) {
	var l Login
	err := row.Scan(&l.ID, &l.Kind, &l.UserName, &l.PasswordHash, &l.PersonID, &l.OrganizationID, &l.OrganizationNumber, &l.Name)
	return l, store.NotFound(err)
}

// FindLogin finds a login by user name (any case) or by the person's national identity number.
func FindLogin(ctx context.Context, db store.DBTX, name string) (Login, error) {
	return scanLogin(db.QueryRow(ctx, loginSelect+`
		WHERE lower(l.user_name) = lower($1) OR (p.ssn = $1 AND p.ssn IS NOT NULL)
		ORDER BY l.id LIMIT 1`, name))
}

// getLogin returns a login by id.
func getLogin(ctx context.Context, db store.DBTX, id int64) (Login, error) {
	return scanLogin(db.QueryRow(ctx, loginSelect+` WHERE l.id = $1`, id))
}

// Session is an open password session, as stored under the hash of its token.
type Session struct {
	LoginID       int64
	SecurityLevel int
	EnterpriseOrg string
	ExpiresAt     time.Time
	AbsoluteEnd   time.Time
}

// createSession stores a session under the hash of its token.
func createSession(ctx context.Context, db store.DBTX, tokenHash []byte, s Session) error {
	_, err := db.Exec(ctx, `INSERT INTO sessions (token_hash, login_id, security_level, enterprise_org, expires_at, absolute_end)
		VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6)`, tokenHash, s.LoginID, s.SecurityLevel, s.EnterpriseOrg, s.ExpiresAt, s.AbsoluteEnd)
	return err
}

// touchSession returns a live session and slides its expiry to newExpiry (capped at its absolute end).
// Expired sessions are ErrNotFound.
func touchSession(ctx context.Context, db store.DBTX, tokenHash []byte, now, newExpiry time.Time) (Session, error) {
	var s Session
	err := db.QueryRow(ctx, `UPDATE sessions SET expires_at = LEAST($3::timestamptz, absolute_end)
		WHERE token_hash = $1 AND expires_at > $2
		RETURNING login_id, security_level, COALESCE(enterprise_org, ''), expires_at, absolute_end`,
		tokenHash, now, newExpiry).Scan(&s.LoginID, &s.SecurityLevel, &s.EnterpriseOrg, &s.ExpiresAt, &s.AbsoluteEnd)
	return s, store.NotFound(err)
}

// deleteSession ends the session stored under the hash of its token; an unknown one is no error.
func deleteSession(ctx context.Context, db store.DBTX, tokenHash []byte) error {
	_, err := db.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash)
	return err
}

// deleteExpiredSessions removes sessions past their expiry.
func deleteExpiredSessions(ctx context.Context, db store.DBTX, now time.Time) error {
	_, err := db.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, now)
	return err
}

// loginLockedUntil tells until when a user name is locked after failed logins (zero when it is not).
func loginLockedUntil(ctx context.Context, db store.DBTX, userKey string, now time.Time) (time.Time, error) {
	var until *time.Time
	err := db.QueryRow(ctx, `SELECT locked_until FROM login_failures WHERE user_key = $1 AND locked_until > $2`, userKey, now).Scan(&until)
	if err == pgx.ErrNoRows || until == nil {
		return time.Time{}, nil
	}
	return *until, err
}

// recordLoginFailure counts a failed login within window; at maxFailures the user name is locked for lockFor.
func recordLoginFailure(ctx context.Context, db store.DBTX, userKey string, now time.Time, window time.Duration, maxFailures int, lockFor time.Duration) error {
	_, err := db.Exec(ctx, `INSERT INTO login_failures AS f (user_key, failures, first_failed) VALUES ($1, 1, $2)
		ON CONFLICT (user_key) DO UPDATE SET
			failures = CASE WHEN f.first_failed < $2 - $3::interval THEN 1 ELSE f.failures + 1 END,
			first_failed = CASE WHEN f.first_failed < $2 - $3::interval THEN $2 ELSE f.first_failed END,
			locked_until = CASE WHEN f.first_failed >= $2 - $3::interval AND f.failures + 1 >= $4 THEN $2 + $5::interval
				ELSE f.locked_until END`,
		userKey, now, window, maxFailures, lockFor)
	return err
}

// clearLoginFailures forgets the failures of a user name after a successful login.
func clearLoginFailures(ctx context.Context, db store.DBTX, userKey string) error {
	_, err := db.Exec(ctx, `DELETE FROM login_failures WHERE user_key = $1`, userKey)
	return err
}
