package store_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	createIndex   = regexp.MustCompile(`(?i)CREATE\s+(?:UNIQUE\s+)?INDEX\s+(CONCURRENTLY\s+)?(IF\s+NOT\s+EXISTS\s+)?(\w+)\s+ON\s+(\w+)`)
	createdTables = regexp.MustCompile(`(?i)CREATE\s+TABLE\s+(\w+)|partition_by_month\('(\w+)'`)
	createAny     = regexp.MustCompile(`(?i)\bCREATE\s+(?:UNIQUE\s+)?(?:INDEX|TABLE|EXTENSION)\s+(?:CONCURRENTLY\s+)?(IF\s+NOT\s+EXISTS\s+)?`)
)

// A migration indexes a table it did not create only CONCURRENTLY, in a file tern runs outside a
// transaction (---- tern: disable-tx ----), so that writes to a large table go on while the index builds;
// such a file runs statement by statement, so each must be one that may run again (IF NOT EXISTS), as a
// build that failed half-way makes tern run the whole file again.
func TestMigrationsIndexExistingTablesConcurrently(t *testing.T) {
	files, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		sql := string(b)
		outsideTx := strings.HasPrefix(sql, "---- tern: disable-tx ----\n")
		created := map[string]bool{}
		for _, m := range createdTables.FindAllStringSubmatch(sql, -1) {
			created[m[1]+m[2]] = true
		}
		for _, m := range createIndex.FindAllStringSubmatch(sql, -1) {
			concurrently, index, table := m[1] != "", m[3], m[4]
			if created[table] {
				continue
			}
			assert.True(t, concurrently && outsideTx, "%s: %s indexes %s, which it did not create, without CONCURRENTLY outside a transaction", file, index, table)
		}
		if outsideTx {
			for _, m := range createAny.FindAllStringSubmatch(sql, -1) {
				assert.NotEmpty(t, m[1], "%s runs outside a transaction: %q must be IF NOT EXISTS, to run again", file, strings.TrimSpace(m[0]))
			}
		}
	}
}
