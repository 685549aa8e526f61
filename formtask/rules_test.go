package formtask_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

func TestCheckAttachments(t *testing.T) {
	rules := []store.AttachmentRule{
		{AttachmentTypeName: "Dokumentasjon", AllowedFileTypes: "pdf,xml", MaxAttachmentCount: 2, MinAttachmentCount: 1, MaxFileSize: 100},
		{AttachmentTypeName: "Bilde", AllowedFileTypes: "*.png; *.JPG", MaxAttachmentCount: 3, MaxFileSize: 10},
	}
	att := func(name, typ string, size int64) store.AttachmentInfo {
		return store.AttachmentInfo{FileName: name, AttachmentType: typ, FileSize: size}
	}
	cases := []struct {
		name  string
		atts  []store.AttachmentInfo
		final bool
		want  []string // FieldNames of the errors
	}{
		{"allowed, any case", []store.AttachmentInfo{att("Rapport.PDF", "Dokumentasjon", 100), att("scan.jpg", "Bilde", 10), att("A.Png", "Bilde", 1)}, true, nil},
		{"extension must be the suffix", []store.AttachmentInfo{att("rapport.pdf.exe", "Dokumentasjon", 1), att("pdf", "Dokumentasjon", 1)}, false, []string{"rapport.pdf.exe", "pdf"}},
		{"glob", []store.AttachmentInfo{att("bilde.gif", "Bilde", 1)}, false, []string{"bilde.gif"}},
		{"too large", []store.AttachmentInfo{att("a.pdf", "Dokumentasjon", 101)}, false, []string{"a.pdf"}},
		{"unknown type", []store.AttachmentInfo{att("a.pdf", "Vedlegg", 1)}, false, []string{"a.pdf"}},
		{"too many", []store.AttachmentInfo{att("a.pdf", "Dokumentasjon", 1), att("b.pdf", "Dokumentasjon", 1), att("c.xml", "Dokumentasjon", 1)}, false, []string{"Dokumentasjon"}},
		{"too few, only when final", nil, false, nil},
		{"too few", nil, true, []string{"Dokumentasjon"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range formtask.CheckAttachments(store.ServiceDetail{AttachmentRules: rules}, tc.atts, tc.final) {
				got = append(got, v.Field)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
