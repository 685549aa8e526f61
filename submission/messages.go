package submission

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Where every message of an owner's services stands, in every mailbox: the form tasks not yet submitted,
// those in signing and those sent, and the correspondence read and confirmed.

// OwnerMessage is a message of one of the owner's services.
type OwnerMessage struct {
	MessageID        string
	Type             string // FormTask or Correspondence
	ServiceCode      string
	ServiceEdition   int
	Status           string
	Reportee         Reportee
	CreatedAt        time.Time
	LastChangedAt    time.Time
	ArchiveReference string     // a sent form task's
	InQueue          bool       // the sent form task is a submission of the download queue
	ReadAt           *time.Time // a correspondence's first read
	ConfirmedAt      *time.Time // a correspondence's confirmation
}

// MessageFilter narrows the owner's messages.
type MessageFilter struct {
	ServiceCode    string
	ServiceEdition int
	Status         string
	Type           string // FormTask, Correspondence or "" for both
	Reportee       string // as Filter.Reportee
}

var messageStatuses = []string{"Utfylling", "Signering", "Sendt og arkivert", "Ulest", "Lest", "Arkivert"}

// ParseMessageFilter reads serviceCode, serviceEdition, status, type and reportee from a request's query;
// a malformed one is a *FilterError naming it (joined, all of them).
func ParseMessageFilter(q url.Values) (MessageFilter, error) {
	p := &queryParser{q: q}
	f := MessageFilter{Reportee: p.reportee()}
	f.ServiceCode, f.ServiceEdition = p.service()
	if v, ok := p.get("status"); ok {
		if f.Status = v; !slices.Contains(messageStatuses, v) {
			p.bad("status", "is one of "+strings.Join(messageStatuses, ", "))
		}
	}
	if v, ok := p.get("type"); ok {
		if f.Type = v; v != "FormTask" && v != "Correspondence" {
			p.bad("type", "is FormTask or Correspondence")
		}
	}
	return f, errors.Join(p.errs...)
}

// MessageKey is a message's place in the owner's list (by service, then id): a page continues after it.
type MessageKey struct {
	ServiceCode    string
	ServiceEdition int
	ID             string
}

// Key is the message's place in the list.
func (m OwnerMessage) Key() MessageKey {
	return MessageKey{ServiceCode: m.ServiceCode, ServiceEdition: m.ServiceEdition, ID: m.MessageID}
}

const messageKeyPrefix = "om1\x00"

// Token is the key as an opaque continuation token.
func (k MessageKey) Token() string {
	return base64.RawURLEncoding.EncodeToString([]byte(messageKeyPrefix + k.ServiceCode + "\x00" + strconv.Itoa(k.ServiceEdition) + "\x00" + k.ID))
}

// ParseMessageKey reads a continuation token that Token made.
func ParseMessageKey(token string) (MessageKey, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return MessageKey{}, false
	}
	parts := strings.Split(strings.TrimPrefix(string(raw), messageKeyPrefix), "\x00")
	if !strings.HasPrefix(string(raw), messageKeyPrefix) || len(parts) != 3 {
		return MessageKey{}, false
	}
	edition, err := strconv.Atoi(parts[1])
	if err != nil || !serviceCodePattern.MatchString(parts[0]) {
		return MessageKey{}, false
	}
	return MessageKey{ServiceCode: parts[0], ServiceEdition: edition, ID: parts[2]}, true
}

// Messages returns up to limit (at most MaxPage) messages of owner's services after key after (the zero
// key: from the start) that match f, by service and then id, and whether more follow. Each service's
// messages are one index range (messages_service, or messages_service_status with a status), walked
// service by service, so a page costs the same whether the services hold a thousand messages or millions.
func (s *Service) Messages(ctx context.Context, owner string, f MessageFilter, after MessageKey, limit int) ([]OwnerMessage, bool, error) {
	limit = min(max(limit, 1), MaxPage)
	args := []any{owner, after.ServiceCode, after.ServiceEdition, after.ID, limit + 1}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	services := `SELECT service_code, service_edition FROM services
		WHERE service_owner_code = $1 AND (service_code, service_edition) >= ($2, $3)`
	if f.ServiceCode != "" {
		services += ` AND service_code = ` + arg(f.ServiceCode)
	}
	if f.ServiceEdition != 0 {
		services += ` AND service_edition = ` + arg(f.ServiceEdition)
	}
	if f.Type != "" {
		services += ` AND service_type = ` + arg(f.Type)
	}
	// Within the first service the page continues after the key's id; in the next ones it starts at the first.
	inner := `m.service_code = s.service_code AND m.service_edition = s.service_edition
		AND m.id > CASE WHEN (s.service_code, s.service_edition) = ($2, $3) THEN $4 ELSE '' END`
	if f.Status != "" {
		inner += ` AND m.status = ` + arg(f.Status)
	}
	if f.Reportee != "" {
		inner += ` AND m.reportee_id = ` + reporteeSQL(f.Reportee, arg)
	}
	sql := `SELECT m.id, m.type, m.service_code, m.service_edition, m.status, m.created_date, m.last_changed,
			COALESCE(m.archive_reference, ''), EXISTS (SELECT FROM submissions su WHERE su.message_id = m.id), m.read_at, m.confirmed_at,
			p.id, p.name, COALESCE(p.organization_number, ''), COALESCE(p.ssn, '')
		FROM (` + services + ` ORDER BY service_code, service_edition) s
		CROSS JOIN LATERAL (SELECT * FROM messages m WHERE ` + inner + ` ORDER BY m.id LIMIT $5) m
		JOIN parties p ON p.id = m.reportee_id
		ORDER BY m.service_code, m.service_edition, m.id LIMIT $5`
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, false, err
	}
	msgs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (OwnerMessage, error) {
		var m OwnerMessage
		err := row.Scan(&m.MessageID, &m.Type, &m.ServiceCode, &m.ServiceEdition, &m.Status, &m.CreatedAt, &m.LastChangedAt,
			&m.ArchiveReference, &m.InQueue, &m.ReadAt, &m.ConfirmedAt,
			&m.Reportee.ID, &m.Reportee.Name, &m.Reportee.OrganizationNumber, &m.Reportee.SocialSecurityNumber)
		return m, err
	})
	return page(msgs, limit, err)
}
