package printpdf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask/printpdf/pdftext"
)

// pdfPages is the text of every page, one line per text object.
func pdfPages(t testing.TB, b []byte) [][]string {
	t.Helper()
	pages, err := pdftext.Pages(b)
	require.NoError(t, err)
	return pages
}

// pdfText is all text, lines joined by spaces.
func pdfText(t testing.TB, b []byte) string {
	t.Helper()
	text, err := pdftext.Text(b)
	require.NoError(t, err)
	return text
}
