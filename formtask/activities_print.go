package formtask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/postbox/postbox/formtask/printpdf"
	"github.com/postbox/postbox/internal/heartbeat"
	"github.com/postbox/postbox/internal/telemetry"
	"github.com/postbox/postbox/store"
)

// printVersion is part of every document digest, so a change of the print layout renders anew.
const printVersion = "printpdf/1"

// documentDigest is the cache key of a print: the SHA-256 of everything the PDF is made from.
func documentDigest(doc printpdf.Document) ([]byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write([]byte(printVersion))
	h.Write(b)
	return h.Sum(nil), nil
}

func document(h PrintHeader, forms []FormContent, atts []AttachmentInfo, sigs []ArchivedSignature) printpdf.Document {
	doc := printpdf.Document{
		ServiceName: h.ServiceName, ServiceCode: h.ServiceCode, ServiceEdition: h.ServiceEdition,
		ServiceOwner: h.ServiceOwner, Reportee: h.Reportee, Submitter: h.LastChangedBy, Status: h.Status,
		ArchiveReference: h.ArchiveReference, Time: h.LastChanged,
	}
	for _, f := range forms {
		doc.Forms = append(doc.Forms, printpdf.Form{Name: f.Name, Type: f.Type, XML: []byte(f.FormData)})
	}
	for _, a := range atts {
		doc.Attachments = append(doc.Attachments, printpdf.Attachment{FileName: a.FileName, AttachmentType: a.AttachmentType, Size: a.FileSize})
	}
	for _, s := range sigs {
		doc.Signatures = append(doc.Signatures, printpdf.Signature{Step: s.Step, Signer: s.SignerName, OnBehalfOf: s.OnBehalfOf, Time: s.SignedAt})
	}
	return doc
}

// render returns the digest of doc's print and, unless it is stored already, the PDF.
func (a *Activities) render(ctx context.Context, q Store, doc printpdf.Document) (digest, pdf []byte, err error) {
	if digest, err = documentDigest(doc); err != nil {
		return nil, nil, err
	}
	if _, err := q.GetPrint(ctx, digest); err == nil {
		return digest, nil, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	pdf, err = a.renderPDF(doc)
	return digest, pdf, err
}

// renderPDF renders doc's print.
func (a *Activities) renderPDF(doc printpdf.Document) ([]byte, error) {
	start := time.Now()
	pdf, err := a.Renderer.Render(doc)
	telemetry.PDFRender.Observe(time.Since(start).Seconds())
	if errors.Is(err, printpdf.ErrBadFormData) {
		return nil, permanent(ErrBadFormData, err)
	}
	return pdf, err
}

// RenderPrint stores the print of a message's current content and returns its digest (hex). The same
// content is rendered once.
func (a *Activities) RenderPrint(ctx context.Context, messageID string) (PrintResult, error) {
	return a.renderContent(ctx, messageID, func(forms []FormContent, atts []AttachmentInfo) ([]FormContent, []AttachmentInfo, error) {
		return forms, atts, nil
	})
}

// renderContent stores the print of what pick takes of a message's current forms and attachments and
// returns its digest (hex).
func (a *Activities) renderContent(ctx context.Context, messageID string,
	pick func([]FormContent, []AttachmentInfo) ([]FormContent, []AttachmentInfo, error)) (PrintResult, error) {
	defer heartbeat.Start(ctx)()
	q := NewStore(store.New(a.Pool))
	h, err := q.GetPrintHeader(ctx, messageID)
	if errors.Is(err, store.ErrNotFound) {
		return PrintResult{}, permanent(ErrNotFormTask, fmt.Errorf("message %s is not a form task", messageID))
	}
	if err != nil {
		return PrintResult{}, err
	}
	forms, atts, err := q.MessageContent(ctx, messageID)
	if err == nil {
		forms, atts, err = pick(forms, atts)
	}
	if err != nil {
		return PrintResult{}, err
	}
	sigs, err := q.ActiveSignatures(ctx, messageID)
	if err != nil {
		return PrintResult{}, err
	}
	digest, pdf, err := a.render(ctx, q, document(h, forms, atts, sigs))
	if err != nil {
		return PrintResult{}, err
	}
	if pdf != nil {
		f, err := a.Files.SaveBytes(ctx, pdf, "application/pdf")
		if err != nil {
			return PrintResult{}, err
		}
		if err := q.PutPrint(ctx, digest, f.SHA256); err != nil {
			return PrintResult{}, err
		}
	}
	return PrintResult{Digest: hex.EncodeToString(digest)}, nil
}
