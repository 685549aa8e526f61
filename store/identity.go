package store

// ServiceKey names a service edition.
type ServiceKey struct {
	Code    string
	Edition int
}

// Subject is who holds roles: a person or organization (PartyID), or an enterprise user (LoginID).
type Subject struct {
	PartyID int64
	LoginID int64
}
