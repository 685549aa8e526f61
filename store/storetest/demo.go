package storetest

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
)

// DemoMessage is a message of the demo dataset as the file has it, the expectation the store is checked against.
type DemoMessage struct {
	MessageID, Reportee, Type, ServiceCode, Subject, Status, ServiceOwnerCode string
	ServiceEdition                                                            int
	CreatedDate, LastChangedDateTime                                          string
	LastChangedBy, MessageSender, Summary, Body                               string
	ArchiveReference                                                          *string
	ReplyOptions                                                              []store.ReplyOption
	Forms                                                                     []struct {
		Type, DataFormatID, Name, FormData string
		DataFormatVersion                  int
	}
	Attachments []struct {
		Name, FileName, AttachmentType            string
		Encrypted, SigningLocked, SignedByDefault bool
		Data                                      []byte // base64 in the file
	}
}

// DemoMessages are the messages of the demo dataset by id.
func DemoMessages(t testing.TB) map[string]DemoMessage {
	t.Helper()
	raw, err := os.ReadFile(DemoDataset())
	require.NoError(t, err)
	var ds struct{ Messages []DemoMessage }
	require.NoError(t, json.Unmarshal(raw, &ds))
	out := map[string]DemoMessage{}
	for _, m := range ds.Messages {
		out[m.MessageID] = m
	}
	return out
}

// PartyID is the id of the party with an organization number or national identity number.
func PartyID(t testing.TB, pool *pgxpool.Pool, number string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT id FROM parties WHERE organization_number = $1 OR ssn = $1`, number).Scan(&id))
	return id
}

// The demo's service editions, for tests that read its messages.
var (
	Svc4711v1 = store.ServiceKey{Code: "4711", Edition: 1}
	Svc4711v2 = store.ServiceKey{Code: "4711", Edition: 2}
	Svc5302   = store.ServiceKey{Code: "5302", Edition: 1}
	Svc6120   = store.ServiceKey{Code: "6120", Edition: 1}
	Svc7001   = store.ServiceKey{Code: "7001", Edition: 1}
	Svc7102   = store.ServiceKey{Code: "7102", Edition: 1}
	// The rights of the demo's roles on O1, written out from RoleDefinitions.
	VisP1 = store.Visibility{ // DAGL + HADM
		Read:        []store.ServiceKey{Svc4711v1, Svc4711v2, Svc5302, Svc6120, Svc7001, Svc7102},
		ArchiveRead: []store.ServiceKey{Svc4711v1, Svc4711v2, Svc5302, Svc6120, Svc7001, Svc7102},
	}
	VisP3 = store.Visibility{ // ADMAI (nothing) + REGNA
		Read:        []store.ServiceKey{Svc4711v1, Svc4711v2, Svc7001},
		ArchiveRead: []store.ServiceKey{Svc4711v1, Svc4711v2},
	}
	VisP4 = store.Visibility{Read: []store.ServiceKey{Svc7102}} // INNSK
)
