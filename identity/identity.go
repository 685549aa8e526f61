// Package identity knows who calls and what they may do: the four ways to authenticate (password
// session, person token, organization token, enterprise certificate), scopes, the parties a caller may
// represent, and effective rights. Its data lives in the store.
package identity

import (
	"errors"
	"slices"

	"github.com/postbox/postbox/store"
)

// Method is how a caller authenticated.
type Method string

// The ways to authenticate.
const (
	MethodPassword          Method = "password"           // a person's user name and password
	MethodEnterpriseUser    Method = "enterprise-user"    // an enterprise user's password with its organization's certificate
	MethodPersonToken       Method = "person-token"       // a bearer token from the identity provider
	MethodOrganizationToken Method = "organization-token" // a bearer token from the machine-to-machine token provider
	MethodCertificate       Method = "certificate"        // an enterprise certificate on the TLS connection
)

// Principal is an authenticated caller.
type Principal struct {
	Method        Method
	SecurityLevel int
	// Scopes of a bearer token; Scoped is false for password and certificate sessions, which carry none.
	Scopes []string
	Scoped bool

	Name     string // display name, recorded as LastChangedBy
	UserName string // login name of password sessions

	PersonID int64 // the person's party, for persons
	LoginID  int64 // the login, for password sessions and enterprise users

	// OrganizationNumber is the organization of an organization token, a certificate or an enterprise user.
	OrganizationNumber string
	OrganizationID     int64
}

// Subject is whose roles count for this caller.
func (p Principal) Subject() store.Subject {
	switch {
	case p.Method == MethodEnterpriseUser:
		return store.Subject{LoginID: p.LoginID}
	case p.PersonID != 0:
		return store.Subject{PartyID: p.PersonID}
	default:
		return store.Subject{PartyID: p.OrganizationID}
	}
}

// Self is the party the caller is (a person) or acts as by default (an organization token or
// certificate); zero for an enterprise user, who represents exactly the parties where it holds roles.
func (p Principal) Self() int64 {
	switch {
	case p.Method == MethodEnterpriseUser:
		return 0
	case p.PersonID != 0:
		return p.PersonID
	default:
		return p.OrganizationID
	}
}

// HasScope tells whether a bearer token carries scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// Action is something a right allows on a service.
type Action string

// The actions of rights.
const (
	Read          Action = "Read"
	Write         Action = "Write"
	Delete        Action = "Delete"
	Sign          Action = "Sign"
	ArchiveRead   Action = "ArchiveRead"
	ArchiveDelete Action = "ArchiveDelete"
)

var allActions = []Action{Read, Write, Delete, Sign, ArchiveRead, ArchiveDelete}

// Errors of authentication; the api maps them to 401.
var (
	ErrBadCredentials = errors.New("the user name or password is wrong")
	ErrNoSession      = errors.New("the session has expired or does not exist")
)
