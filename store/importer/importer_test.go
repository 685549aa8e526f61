package importer_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/importer"
	"github.com/postbox/postbox/store/storetest"
)

var seededTables = []string{"service_owners", "api_keys", "parties", "logins", "services", "process_steps", "xsd_schemas",
	"form_metadata", "attachment_rules", "code_lists", "role_definitions", "role_definition_rights", "roles",
	"messages", "forms", "attachments", "blobs"}

// snapshot captures every row of every seeded table with its row version, so a write that changes nothing
// visible is still caught.
func snapshot(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range seededTables {
		var s string
		err := pool.QueryRow(context.Background(),
			`SELECT COALESCE(string_agg(xmin::text || ':' || t::text, E'\n' ORDER BY t::text), '') FROM `+table+` t`).Scan(&s)
		require.NoError(t, err)
		out[table] = s
	}
	return out
}

func count(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

func TestSeedImportsTheDemoDataset(t *testing.T) {
	pool := storetest.NewEmpty(t)
	fs := storetest.Files(t, pool)
	require.NoError(t, importer.FromFile(context.Background(), pool, fs, storetest.DemoDataset()))

	for table, want := range map[string]int{"messages": 174, "api_keys": 5, "service_owners": 3, "services": 7,
		"code_lists": 8, "role_definitions": 10, "roles": 12, "logins": 6, "parties": 11, "xsd_schemas": 5} {
		assert.Equal(t, want, count(t, pool, table), table)
	}

	var hash string
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT password_hash FROM logins WHERE user_name = 'ingrid.fjellheim'`).Scan(&hash))
	assert.True(t, strings.HasPrefix(hash, "$argon2id$"), "passwords are stored hashed")
	assert.NotContains(t, hash, "Demo-1")

	var keys int
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM api_keys WHERE encode(key_hash, 'escape') LIKE '%9D4E2680%'`).Scan(&keys))
	assert.Zero(t, keys, "API keys are stored hashed")

	// Attachment bytes come back byte for byte from the object store.
	var size int64
	var sum []byte
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT file_size, sha256 FROM attachments
		WHERE message_id = 'a3100808' ORDER BY id LIMIT 1`).Scan(&size, &sum))
	data, err := fs.Bytes(context.Background(), sum)
	require.NoError(t, err)
	assert.EqualValues(t, size, len(data))
	got := sha256.Sum256(data)
	assert.Equal(t, sum, got[:])
}

func TestSeedIsIdempotent(t *testing.T) {
	pool := storetest.NewEmpty(t)
	ctx := context.Background()
	require.NoError(t, importer.FromFile(ctx, pool, storetest.FilesOf(pool), storetest.DemoDataset()))
	before := snapshot(t, pool)
	require.NoError(t, importer.FromFile(ctx, pool, storetest.FilesOf(pool), storetest.DemoDataset()))
	after := snapshot(t, pool)
	for _, table := range seededTables {
		assert.Equal(t, before[table], after[table], "a second import must not touch %s", table)
	}
}

func TestSeedLifecycleFields(t *testing.T) {
	pool := storetest.NewEmpty(t)
	ctx := context.Background()
	require.NoError(t, importer.FromFile(ctx, pool, storetest.FilesOf(pool), storetest.DemoDataset()))
	var confirm bool
	var custom string
	require.NoError(t, pool.QueryRow(ctx, `SELECT is_confirmation_needed, custom_message_data::text FROM messages WHERE id = 'a3100234'`).
		Scan(&confirm, &custom))
	assert.True(t, confirm)
	assert.JSONEq(t, `[{"Key": "Saksnummer", "Value": "2023/4471"}, {"Key": "Regelverk", "Value": "Forskrift om næringsoppgaver"}]`, custom)
	var none int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE custom_message_data IS NOT NULL AND id <> 'a3100234'`).Scan(&none))
	assert.Zero(t, none, "messages without custom data keep NULL")

	// A message deleted for good is not imported again.
	require.NoError(t, store.New(pool).PurgeMessage(ctx, "a3100290", time.Now()))
	require.NoError(t, importer.FromFile(ctx, pool, storetest.FilesOf(pool), storetest.DemoDataset()))
	var back int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE id = 'a3100290'`).Scan(&back))
	assert.Zero(t, back)
}

// writeBroken writes a copy of the demo dataset changed by edit into a temporary folder with its XSDs.
func writeBroken(t *testing.T, edit func(ds map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(storetest.DemoDataset())
	require.NoError(t, err)
	var ds map[string]any
	require.NoError(t, json.Unmarshal(raw, &ds))
	edit(ds)
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "xsd"), os.DirFS(filepath.Join(filepath.Dir(storetest.DemoDataset()), "xsd"))))
	out, err := json.Marshal(ds)
	require.NoError(t, err)
	path := filepath.Join(dir, "demo.json")
	require.NoError(t, os.WriteFile(path, out, 0o600))
	return path
}

func record(ds map[string]any, list string, i int) map[string]any {
	return ds[list].([]any)[i].(map[string]any)
}

func TestSeedRejectsABrokenFileAndLeavesNothing(t *testing.T) {
	pool := storetest.NewEmpty(t)
	cases := []struct {
		name string
		edit func(ds map[string]any)
		want string
	}{
		{"unknown service", func(ds map[string]any) { record(ds, "Messages", 173)["ServiceCode"] = "9999" },
			"Messages[173] (a3101312).ServiceCode: service 9999/1 is not in Services"},
		{"bad status", func(ds map[string]any) { record(ds, "Messages", 0)["Status"] = "Utfylling" },
			"Messages[0] (a3100101).Status"},
		{"bad language", func(ds map[string]any) { record(ds, "Messages", 1)["Language"] = 1053 },
			"Messages[1] (a3100108).Language: 1053 is not one of 1044, 2068, 1033"},
		{"bad organization number", func(ds map[string]any) { record(ds, "Organizations", 2)["OrganizationNumber"] = "310246809" },
			"Organizations[2] (310246809).OrganizationNumber"},
		{"bad identity number", func(ds map[string]any) { record(ds, "Persons", 1)["SocialSecurityNumber"] = "03919023481" },
			"Persons[1] (ola.bakketun).SocialSecurityNumber"},
		{"unknown role definition", func(ds map[string]any) { record(ds, "Roles", 4)["RoleDefinitionId"] = 4242 },
			"Roles[4] (50005).RoleDefinitionId: 4242 is not in RoleDefinitions"},
		{"unknown area", func(ds map[string]any) { record(ds, "ApiKeys", 1)["Areas"] = []any{"mailbox", "everything"} },
			`ApiKeys[1] (Demo-klient (kun meldingsboks)).Areas: unknown area "everything"`},
		{"rate limit of another area", func(ds map[string]any) { record(ds, "ApiKeys", 1)["RateLimits"] = map[string]any{"reportees": 10} },
			`ApiKeys[1] (Demo-klient (kun meldingsboks)).RateLimits: reportees: 10 must be a positive limit of one of the key's areas`},
		{"rate limit of zero", func(ds map[string]any) { record(ds, "ApiKeys", 1)["RateLimits"] = map[string]any{"mailbox": 0} },
			`ApiKeys[1] (Demo-klient (kun meldingsboks)).RateLimits: mailbox: 0 must be a positive limit of one of the key's areas`},
		{"bad timestamp", func(ds map[string]any) { record(ds, "Messages", 5)["CreatedDate"] = "yesterday" },
			`timestamp "yesterday" is not like 2025-03-14T09:30:00`},
		{"bad base64", func(ds map[string]any) {
			for i := range ds["Messages"].([]any) {
				if m := record(ds, "Messages", i); m["MessageId"] == "a3100808" {
					m["Attachments"].([]any)[0].(map[string]any)["Data"] = "not base64!"
				}
			}
		}, "Attachments[0].Data: is not valid base64"},
		{"missing schema file", func(ds map[string]any) {
			record(ds, "Services", 0)["FormsMetaData"].([]any)[0].(map[string]any)["XsdFile"] = "xsd/missing.xsd"
		}, "Services[0] (4711/1).FormsMetaData[0].XsdFile: cannot read xsd/missing.xsd"},
		{"unknown field", func(ds map[string]any) { record(ds, "Services", 1)["Colour"] = "blue" }, `unknown field "Colour"`},
		{"unknown signing rule", func(ds map[string]any) {
			record(ds, "Services", 1)["SigningSteps"] = []any{map[string]any{"Signees": "Anyone"}}
		}, `Services[1] (4711/2).SigningSteps[0]: Signees must be TaskSignees, Role, Right or Organization, not "Anyone"`},
		{"a person named in the open metadata", func(ds map[string]any) {
			record(ds, "Services", 1)["SigningSteps"] = []any{map[string]any{"Signees": "Person"}}
		}, "Services[1] (4711/2).SigningSteps[0]: a person is named on the task (Signees TaskSignees), never in the open metadata"},
		{"an organization step naming no organization of the dataset", func(ds map[string]any) {
			record(ds, "Services", 1)["SigningSteps"] = []any{map[string]any{"Signees": "Organization", "OrganizationNumber": "999999999"}}
		}, `Services[1] (4711/2).SigningSteps[0]: OrganizationNumber "999999999" is not in Organizations`},
		{"an organization number on a role step", func(ds map[string]any) {
			record(ds, "Services", 1)["SigningSteps"] = []any{map[string]any{"Signees": "Role", "RoleDefinitionCode": "DAGL",
				"OrganizationNumber": "310246808"}}
		}, "Services[1] (4711/2).SigningSteps[0]: an OrganizationNumber goes with Signees Organization, and only with it"},
		{"a role step without its role", func(ds map[string]any) {
			record(ds, "Services", 1)["SigningSteps"] = []any{map[string]any{"Signees": "Role"}}
		}, "Services[1] (4711/2).SigningSteps[0]: a RoleDefinitionCode goes with Signees Role, and only with it"},
		{"confirmation on a form task", func(ds map[string]any) { record(ds, "Messages", 4)["IsConfirmationNeeded"] = true },
			"Messages[4] (a3100129).IsConfirmationNeeded: only a correspondence asks for confirmation"},
		{"custom data without a key", func(ds map[string]any) {
			record(ds, "Messages", 0)["CustomMessageData"] = []any{map[string]any{"Key": "", "Value": "x"}}
		}, "Messages[0] (a3100101).CustomMessageData[0].Key"},
		// Passes validation, fails in the database on the last message: the transaction must undo everything before it.
		{"fails while writing", func(ds map[string]any) { record(ds, "Messages", 173)["Subject"] = "nul \u0000 byte" },
			"message a3101312"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := importer.FromFile(context.Background(), pool, storetest.FilesOf(pool), writeBroken(t, tc.edit))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			for _, table := range seededTables {
				assert.Zero(t, count(t, pool, table), "%s must stay empty", table)
			}
		})
	}
}
