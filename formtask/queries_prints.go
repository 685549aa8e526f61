package formtask

import (
	"context"
	"time"

	"github.com/postbox/postbox/store"
)

// Prints of form tasks: the header a print shows and the stored PDFs, by the digest of their document.

// PrintHeader is what a print shows about a message besides its content.
type PrintHeader struct {
	ServiceName      string
	ServiceCode      string
	ServiceEdition   int
	ServiceOwner     string
	Reportee         string // name, and the organization number for organizations
	Status           string
	LastChanged      time.Time
	LastChangedBy    string
	ArchiveReference string
	// ReporteeID is the reportee's party id; it is not printed (the events of an archive carry it).
	ReporteeID int64
}

// printHeaderSQL selects the columns of a PrintHeader (printHeaderScan's order) of form task $1, after
// the columns of the select list it ends.
const printHeaderSQL = ` s.service_name, m.service_code, m.service_edition, o.name,
			p.name || COALESCE(' (' || p.organization_number || ')', ''),
			m.status, m.last_changed, m.last_changed_by, COALESCE(m.archive_reference, ''), m.reportee_id
		FROM messages m
		JOIN services s USING (service_code, service_edition)
		JOIN service_owners o ON o.code = s.service_owner_code
		JOIN parties p ON p.id = m.reportee_id
		WHERE m.id = $1 AND m.type = 'FormTask'`

func (h *PrintHeader) scan() []any {
	return []any{&h.ServiceName, &h.ServiceCode, &h.ServiceEdition, &h.ServiceOwner, &h.Reportee,
		&h.Status, &h.LastChanged, &h.LastChangedBy, &h.ArchiveReference, &h.ReporteeID}
}

// GetPrintHeader returns the header of a form task's print.
func (q Store) GetPrintHeader(ctx context.Context, messageID string) (PrintHeader, error) {
	var h PrintHeader
	err := q.DB().QueryRow(ctx, `SELECT`+printHeaderSQL, messageID).Scan(h.scan()...)
	return h, store.NotFound(err)
}

// GetPrint returns the SHA-256 of the PDF printed from a document (its blob, package files) by the
// digest of the document, or store.ErrNotFound.
func (q Store) GetPrint(ctx context.Context, digest []byte) ([]byte, error) {
	var pdf []byte
	err := q.DB().QueryRow(ctx, `SELECT pdf_sha256 FROM prints WHERE document_digest = $1`, digest).Scan(&pdf)
	return pdf, store.NotFound(err)
}

// PutPrint names the PDF (a blob, by its SHA-256) printed from a document; the first one named stays.
func (q Store) PutPrint(ctx context.Context, digest, pdfSHA256 []byte) error {
	_, err := q.DB().Exec(ctx, putPrintSQL, digest, pdfSHA256)
	return err
}

const putPrintSQL = `INSERT INTO prints (document_digest, pdf_sha256) VALUES ($1, $2) ON CONFLICT DO NOTHING`
