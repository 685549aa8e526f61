package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed document and client are what the current code gives: a route, parameter or type changed
// without `go generate ./client/` fails here.
func TestCommittedClientIsGeneratedFromTheCurrentDocument(t *testing.T) {
	doc, code, err := generate()
	require.NoError(t, err)
	for file, want := range map[string][]byte{documentFile: doc, codeFile: code} {
		got, err := os.ReadFile("../../" + file)
		require.NoError(t, err)
		assert.True(t, string(got) == string(want), "client/%s is not what the current code gives: run go generate ./client/", file)
	}
}
