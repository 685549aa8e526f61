package formtask_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/store"
)

func TestCheckAttachments(t *testing.T) {
	rules := []store.AttachmentRule{
		{AttachmentTypeName: "Dokumentasjon", AllowedFileTypes: "pdf,xml", MaxAttachmentCount: 2, MinAttachmentCount: 1, MaxFileSize: 100},
		{AttachmentTypeName: "Bilde", AllowedFileTypes: "*.png; *.JPG", MaxAttachmentCount: 3, MaxFileSize: 10},
	}
	heads := map[string]string{"pdf": "%PDF-1.7\n", "png": "\x89PNG\r\n\x1a\n", "jpg": "\xff\xd8\xff\xe0", "xml": "<a/>", "gif": "GIF89a"}
	att := func(name, typ string, size int64) formtask.AttachmentInfo {
		ext := strings.ToLower(name[strings.LastIndexByte(name, '.')+1:])
		return formtask.AttachmentInfo{FileName: name, AttachmentType: typ, FileSize: size, Head: []byte(heads[ext])}
	}
	cases := []struct {
		name  string
		atts  []formtask.AttachmentInfo
		final bool
		want  []string // FieldNames of the errors
	}{
		{"allowed, any case", []formtask.AttachmentInfo{att("Rapport.PDF", "Dokumentasjon", 100), att("scan.jpg", "Bilde", 10), att("A.Png", "Bilde", 1)}, true, nil},
		{"extension must be the suffix", []formtask.AttachmentInfo{att("rapport.pdf.exe", "Dokumentasjon", 1), att("pdf", "Dokumentasjon", 1)}, false, []string{"rapport.pdf.exe", "pdf"}},
		{"glob", []formtask.AttachmentInfo{att("bilde.gif", "Bilde", 1)}, false, []string{"bilde.gif"}},
		{"too large", []formtask.AttachmentInfo{att("a.pdf", "Dokumentasjon", 101)}, false, []string{"a.pdf"}},
		{"unknown type", []formtask.AttachmentInfo{att("a.pdf", "Vedlegg", 1)}, false, []string{"a.pdf"}},
		{"too many", []formtask.AttachmentInfo{att("a.pdf", "Dokumentasjon", 1), att("b.pdf", "Dokumentasjon", 1), att("c.xml", "Dokumentasjon", 1)}, false, []string{"Dokumentasjon"}},
		{"too few, only when final", nil, false, nil},
		{"too few", nil, true, []string{"Dokumentasjon"}},
		{"content not what the name says", []formtask.AttachmentInfo{{FileName: "a.pdf", AttachmentType: "Dokumentasjon", FileSize: 9, Head: []byte("MZ\x90\x00\x03")}}, false, []string{"a.pdf"}},
		{"empty", []formtask.AttachmentInfo{{FileName: "a.xml", AttachmentType: "Dokumentasjon"}}, false, []string{"a.xml"}},
		{"file name", []formtask.AttachmentInfo{att("CON.pdf", "Dokumentasjon", 9)}, false, []string{"CON.pdf"}},
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

func TestCheckFileName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"Årsregnskap 2024.pdf", true},
		{"rapport.v2.final.xml", true},
		{"console.txt", true},
		{"comet.png", true},
		{"a..b.pdf", true},
		{"", false},
		{"   ", false},
		{".", false},
		{"..", false},
		{". .", false},
		{strings.Repeat("a", 252) + ".pdf", false},
		{"rapport\u202Efdp.exe", false},     // right-to-left override: shows as "rapportexe.pdf"
		{"rapport\u200E.pdf", false},        // left-to-right mark
		{"rapport\u200F.pdf", false},        // right-to-left mark
		{"rapport\u2066x\u2069.pdf", false}, // isolates
		{"rapport\u200B.pdf", false},        // zero-width space
		{"rapport\u0085.pdf", false},        // C1 control
		{"rapport\t.pdf", false},
		{"rapport\x00.pdf", false},
		{"rapport\xff.pdf", false},
		{"../../etc/passwd.pdf", false},
		{"C:\\Windows\\a.pdf", false},
		{"..%2Fa.pdf", false},
		{"..%5ca.pdf", false},
		{"a\u2215b.pdf", false}, // division slash
		{"a\uff0fb.pdf", false}, // fullwidth solidus
		{"CON", false},
		{"con.txt", false},
		{"Nul.tar.gz", false},
		{"COM1.pdf", false},
		{"lpt9", false},
		{"aux .pdf", false},
		{"CONOUT$", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := formtask.CheckFileName(tc.name)
			if tc.ok {
				assert.Nil(t, v)
				return
			}
			if assert.NotNil(t, v) {
				assert.Equal(t, formtask.BadFileName, v.Kind)
			}
		})
	}
}

func TestCheckFileContent(t *testing.T) {
	cases := []struct {
		name, file, content string
		refused             string // part of the message; "" for accepted
	}{
		{"pdf", "a.pdf", "%PDF-1.7\n...", ""},
		{"pdf of another format", "a.pdf", "\x89PNG\r\n\x1a\n", "PDF"},
		{"pdf that is a Windows executable", "a.pdf", "MZ\x90\x00\x03\x00", "Windows executable"},
		{"png", "a.PNG", "\x89PNG\r\n\x1a\n\x00\x00", ""},
		{"png that is text", "a.png", "hello", "PNG"},
		{"png with half its signature", "a.png", "\x89PNG", "PNG"},
		{"jpeg", "a.jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF", ""},
		{"gif", "a.gif", "GIF89a", ""},
		{"docx", "a.docx", "PK\x03\x04\x14\x00", ""},
		{"docx that is a PDF", "a.docx", "%PDF-1.4", "ZIP"},
		{"odt", "a.odt", "PK\x03\x04", ""},
		{"xml", "a.xml", "\ufeff  <?xml version=\"1.0\"?><a/>", ""},
		{"xml that is not", "a.xml", "hello <a/>", "XML"},
		{"xml with NUL", "a.xml", "<a>\x00</a>", "NUL"},
		{"txt", "a.txt", "Grüße, blåbær", ""},
		{"txt with invalid UTF-8", "a.txt", "bl\xe5b\xe6r", "UTF-8"},
		{"txt cut inside a rune", "a.txt", "bl\xc3", "UTF-8"},
		{"csv with NUL", "a.csv", "a;b\x00", "NUL"},
		{"ELF", "a.jpg", "\x7fELF\x02\x01", "ELF"},
		{"Mach-O", "a.bin.dat", "\xcf\xfa\xed\xfe", "Mach-O"},
		{"script", "a.txt", "#!/bin/sh\nrm -rf /", "script"},
		{"executable of an unchecked extension", "a.dat", "MZ\x90\x00", "Windows executable"},
		{"executable by its own name", "setup.exe", "MZ\x90\x00", ""},
		{"unchecked extension", "a.dat", "\x00\x01\x02", ""},
		{"no extension", "README", "anything", ""},
		{"empty", "a.pdf", "", "empty"},
		{"empty, unchecked extension", "a.dat", "", "empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := formtask.CheckFileContent(tc.file, []byte(tc.content), int64(len(tc.content)))
			if tc.refused == "" {
				assert.Nil(t, v)
				return
			}
			if assert.NotNil(t, v) {
				assert.Equal(t, formtask.BadFileContent, v.Kind)
				assert.Contains(t, v.Message, tc.refused)
			}
		})
	}
}

// Streamed in pieces of any size, the content gets the same verdict as checked at once, and a refused
// head is refused before the rest arrives.
func TestContentCheckStreams(t *testing.T) {
	text := []byte(strings.Repeat("blåbærsyltetøy ", 100))
	for _, piece := range []int{1, 2, 3, 7, 512, 4096} {
		c := formtask.NewContentCheck("a.txt")
		for r := bytes.NewReader(text); r.Len() > 0; {
			b := make([]byte, min(piece, r.Len()))
			_, _ = r.Read(b)
			_, err := c.Write(b)
			require.NoError(t, err, "piece %d", piece)
		}
		assert.NoError(t, c.Close(), "piece %d", piece)
	}

	c := formtask.NewContentCheck("a.pdf")
	_, err := c.Write(append([]byte("MZ"), make([]byte, formtask.SniffLen)...))
	require.Error(t, err, "refused on its head")
	_, err = c.Write([]byte("more"))
	assert.Error(t, err)

	c = formtask.NewContentCheck("a.txt")
	_, err = c.Write([]byte("ok \xc3"))
	require.NoError(t, err)
	assert.Error(t, c.Close(), "ends inside a rune")

	// A stored attachment is re-checked from its head: the text after it is not seen.
	assert.Nil(t, formtask.CheckFileContent("a.txt", []byte("bl\xc3"), 1000))
	assert.NotNil(t, formtask.CheckFileContent("a.pdf", []byte("%PD"), 1000))
}

// A service takes new tasks only while it is REST-enabled and within its ValidFrom–ValidTo.
func TestServiceOpen(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	open := store.ServiceDetail{RestEnabled: true}
	open.ServiceCode, open.ServiceEdition, open.ValidFrom, open.ValidTo = "4711", 2, now.Add(-time.Hour), now.Add(time.Hour)
	assert.NoError(t, formtask.ServiceOpen(open, now))
	for name, svc := range map[string]store.ServiceDetail{
		"not REST-enabled": func() store.ServiceDetail { s := open; s.RestEnabled = false; return s }(),
		"not yet valid":    func() store.ServiceDetail { s := open; s.ValidFrom = now.Add(time.Minute); return s }(),
		"no longer valid":  func() store.ServiceDetail { s := open; s.ValidTo = now.Add(-time.Minute); return s }(),
	} {
		var e *formtask.Error
		require.ErrorAs(t, formtask.ServiceOpen(svc, now), &e, name)
		assert.Equal(t, formtask.ServiceClosed, e.Kind, name)
		assert.Contains(t, e.Detail, "service 4711 edition 2", name)
	}
}
