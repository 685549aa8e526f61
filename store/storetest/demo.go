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
