package submission

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Manifest is the manifest.json of a submission's ZIP: what the submission is and every other entry of
// the ZIP with its size and SHA-256, so that a receiver can check each part.
type Manifest struct {
	ArchiveReference string
	ServiceCode      string
	ServiceEdition   int
	ArchivedAt       string
	Reportee         ManifestReportee
	FilledBy         string
	SignedBy         string
	Parts            []ManifestPart
}

// ManifestReportee is the party in the manifest.
type ManifestReportee struct {
	Name                 string
	OrganizationNumber   string `json:",omitempty"`
	SocialSecurityNumber string `json:",omitempty"`
}

// ManifestPart is one entry of the ZIP.
type ManifestPart struct {
	Path        string
	Kind        string // Form, Attachment or Print
	Name        string `json:",omitempty"`
	ContentType string
	Size        int64
	SHA256      string // hex
}

// ZIPName is the file name of submission ref's ZIP.
func ZIPName(ref string) string { return ref + ".zip" }

// ManifestOf lists the parts of sub as its ZIP holds them.
func ManifestOf(sub Submission) Manifest {
	m := Manifest{ArchiveReference: sub.ArchiveReference, ServiceCode: sub.ServiceCode, ServiceEdition: sub.ServiceEdition,
		ArchivedAt: sub.ArchivedAt.Format("2006-01-02T15:04:05"), FilledBy: sub.FilledBy, SignedBy: sub.SignedBy,
		Reportee: ManifestReportee{Name: sub.Reportee.Name, OrganizationNumber: sub.Reportee.OrganizationNumber,
			SocialSecurityNumber: sub.Reportee.SocialSecurityNumber}}
	for _, f := range sub.Forms {
		m.Parts = append(m.Parts, ManifestPart{Path: FormPart(f.ID), Kind: "Form", Name: f.Name, ContentType: "application/xml",
			Size: f.Size, SHA256: hex.EncodeToString(f.SHA256)})
	}
	for _, a := range sub.Attachments {
		m.Parts = append(m.Parts, ManifestPart{Path: AttachmentPart(a.ID) + "/" + safeFileName(a.FileName), Kind: "Attachment",
			Name: a.Name, ContentType: a.ContentType(), Size: a.FileSize, SHA256: hex.EncodeToString(a.SHA256)})
	}
	m.Parts = append(m.Parts, ManifestPart{Path: PartPrint, Kind: "Print", ContentType: "application/pdf",
		Size: sub.Print.Size, SHA256: hex.EncodeToString(sub.Print.SHA256)})
	return m
}

// safeFileName keeps a file name to one plain path element, so that no ZIP entry escapes its folder
// when unpacked.
func safeFileName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." {
		return "file"
	}
	return name
}

// WriteZIP streams sub (opened with OpenZIP) to w as a ZIP: manifest.json first, then every form,
// attachment and the print, each checked against its SHA-256 as it is written. Memory stays flat: an
// attachment is read a chunk at a time. An error after the first byte leaves w with a ZIP without its
// central directory, which every reader refuses.
func (s *Service) WriteZIP(ctx context.Context, w io.Writer, sub Submission) error {
	m := ManifestOf(sub)
	zw := zip.NewWriter(w)
	modified := sub.ArchivedAt
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeEntry(zw, "manifest.json", zip.Deflate, modified, bytes.NewReader(manifest), nil); err != nil {
		return err
	}
	parts := m.Parts
	for i, f := range sub.Forms {
		data, err := formData(ctx, s.pool, sub.ArchiveReference, f.ID)
		if err != nil {
			return err
		}
		if err := writeEntry(zw, parts[i].Path, zip.Deflate, modified, strings.NewReader(data), f.SHA256); err != nil {
			return err
		}
	}
	parts = parts[len(sub.Forms):]
	for i, a := range sub.Attachments {
		r, err := s.files.Open(ctx, a.SHA256, 0, -1)
		if err != nil {
			return err
		}
		err = writeEntry(zw, parts[i].Path, zip.Store, modified, r, a.SHA256)
		_ = r.Close()
		if err != nil {
			return err
		}
	}
	pdf, err := s.files.Bytes(ctx, sub.Print.SHA256)
	if err != nil {
		return err
	}
	if err := writeEntry(zw, PartPrint, zip.Store, modified, bytes.NewReader(pdf), sub.Print.SHA256); err != nil {
		return err
	}
	return zw.Close()
}

// writeEntry writes one ZIP entry from r; with want, it fails unless the bytes have that SHA-256.
func writeEntry(zw *zip.Writer, name string, method uint16, modified time.Time, r io.Reader, want []byte) error {
	ew, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: modified})
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(ew, h), r); err != nil {
		return err
	}
	if want != nil && !bytes.Equal(h.Sum(nil), want) {
		return fmt.Errorf("submission: %s does not match its SHA-256 %s", name, strconv.Quote(hex.EncodeToString(want)))
	}
	return nil
}
