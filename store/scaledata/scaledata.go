// Package scaledata builds a large synthetic mailbox in a migrated database, for load tests and query
// plans at scale: organizations, services of several owners, one person who represents every organization
// with rights on about half of the services of each, and messages with Norwegian (and some English)
// subjects and bodies, in a mix of types, statuses and three years of dates. Rows go in with COPY.
//
// Everything it writes uses codes and numbers of its own (owners G00…, services 80000…, organizations
// 8…, messages a8…), so it can be added beside the demo dataset, whose API keys then serve it.
package scaledata

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Shape is the size of the dataset.
type Shape struct {
	Messages int
	Parties  int // organizations, all represented by the person
	Services int
	Owners   int
	Seed     uint64
}

// Full is the shape of the load benchmark: a million messages over a thousand organizations.
var Full = Shape{Messages: 1_000_000, Parties: 1_000, Services: 200, Owners: 20, Seed: 1}

// PersonSSN is the national identity number of the person who represents every generated organization.
const PersonSSN = "24047510003"

// Result says where the generated data is.
type Result struct {
	PersonID  int64
	FirstOrg  int64 // party ids FirstOrg … FirstOrg+Parties-1
	FirstCode int   // service codes FirstCode … FirstCode+Services-1, edition 1
	Grants    int   // (organization, service) pairs on which the person may read
}

// roleDefinitions is how many role definitions share the services out; each organization's role for the
// person is one of them.
const roleDefinitions = 10

// Generate writes the dataset in one transaction, then vacuums and analyzes the tables it filled.
func Generate(ctx context.Context, pool *pgxpool.Pool, shape Shape) (Result, error) {
	if shape.Messages < 0 || shape.Parties < 1 || shape.Services < 2 || shape.Owners < 1 || shape.Owners > shape.Services {
		return Result{}, fmt.Errorf("scaledata: shape %+v needs a party, two services and at least one owner per service", shape)
	}
	rng := rand.New(rand.NewPCG(shape.Seed, 7))
	res := Result{FirstCode: 80000}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return res, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit

	owners := make([]string, shape.Owners)
	for i := range owners {
		owners[i] = ownerNames[i%len(ownerNames)]
		if i >= len(ownerNames) {
			owners[i] += fmt.Sprintf(" %d", i/len(ownerNames)+1)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO service_owners (code, name, organization_number) VALUES ($1, $2, $3)`,
			fmt.Sprintf("G%02d", i), owners[i], fmt.Sprintf("79%07d", i)); err != nil {
			return res, fmt.Errorf("service owner: %w", err)
		}
	}
	for i := range shape.Services {
		if _, err := tx.Exec(ctx, `INSERT INTO services (service_code, service_edition, service_owner_code, service_name,
				service_type, valid_from, valid_to, rest_enabled, eus_enabled, enterprise_user_enabled)
			VALUES ($1, 1, $2, $3, $4, '2020-01-01', '2035-01-01', true, false, false)`,
			serviceCode(res, i), fmt.Sprintf("G%02d", i%shape.Owners), "Tjeneste "+serviceCode(res, i), serviceType(i)); err != nil {
			return res, fmt.Errorf("service: %w", err)
		}
	}
	if err := tx.QueryRow(ctx, `INSERT INTO parties (kind, ssn, name, last_name, status)
		VALUES ('Person', $1, 'Kari Skalerud', 'Skalerud', 'Active') RETURNING id`, PersonSSN).Scan(&res.PersonID); err != nil {
		return res, fmt.Errorf("person: %w", err)
	}
	var lastOrg int64
	if err := tx.QueryRow(ctx, `WITH orgs AS (INSERT INTO parties (kind, organization_number, name, organization_form, status)
			SELECT 'Organization', (800000000 + i)::text, 'Skala ' || i || ' AS', 'AS', 'Active' FROM generate_series(1, $1) i
			RETURNING id)
		SELECT min(id), max(id) FROM orgs`, shape.Parties).Scan(&res.FirstOrg, &lastOrg); err != nil {
		return res, fmt.Errorf("organizations: %w", err)
	}
	if lastOrg-res.FirstOrg+1 != int64(shape.Parties) {
		return res, fmt.Errorf("scaledata: the organizations' ids are not consecutive (%d…%d)", res.FirstOrg, lastOrg)
	}

	// Each role definition grants Read and ArchiveRead on a random half of the services.
	definitions := make([]int64, roleDefinitions)
	granted := make([][]bool, roleDefinitions)
	for d := range definitions {
		if err := tx.QueryRow(ctx, `INSERT INTO role_definitions (role_type, role_definition_code, role_name, role_description)
			VALUES ('External', $1, $2, 'Generert rolle') RETURNING id`, fmt.Sprintf("SKALA%d", d), fmt.Sprintf("Skala rolle %d", d)).Scan(&definitions[d]); err != nil {
			return res, fmt.Errorf("role definition: %w", err)
		}
		granted[d] = make([]bool, shape.Services)
		for _, i := range rng.Perm(shape.Services)[:shape.Services/2] {
			granted[d][i] = true
			if _, err := tx.Exec(ctx, `INSERT INTO role_definition_rights (role_definition_id, service_code, service_edition, action, is_delegatable)
				SELECT $1, $2, 1, a, false FROM unnest(ARRAY['Read', 'ArchiveRead']) a`, definitions[d], serviceCode(res, i)); err != nil {
				return res, fmt.Errorf("rights: %w", err)
			}
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO roles (holder_party_id, reportee_id, role_definition_id, delegator, delegated_time)
		SELECT $1, $2 + i, ($3::int[])[1 + i % $4], 'Skala', '2024-01-01' FROM generate_series(0, $5 - 1) i`,
		res.PersonID, res.FirstOrg, definitions, roleDefinitions, shape.Parties); err != nil {
		return res, fmt.Errorf("roles: %w", err)
	}
	res.Grants = shape.Parties * (shape.Services / 2)

	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	span := int64(3 * 365 * 24 * time.Hour / time.Second)
	n := 0
	rows := pgx.CopyFromFunc(func() ([]any, error) {
		if n == shape.Messages {
			return nil, nil
		}
		n++
		s := rng.IntN(shape.Services)
		created := start.Add(time.Duration(rng.Int64N(span)) * time.Second)
		m := message(rng, owners[s%shape.Owners], serviceType(s))
		return []any{fmt.Sprintf("a8%08d", n), res.FirstOrg + int64(rng.IntN(shape.Parties)), serviceType(s), serviceCode(res, s), int32(1),
			m.subject, m.status, created, created.Add(time.Duration(rng.IntN(72)) * time.Hour), "Skala", m.sender, m.summary, m.body,
			int32(m.language)}, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"messages"}, []string{"id", "reportee_id", "type", "service_code",
		"service_edition", "subject", "status", "created_date", "last_changed", "last_changed_by", "message_sender",
		"summary", "body", "language"}, rows); err != nil {
		return res, fmt.Errorf("messages: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return res, err
	}
	// VACUUM also moves the rows COPY left in the GIN indexes' pending lists into the indexes proper, which
	// every search would otherwise read through.
	_, err = pool.Exec(ctx, "VACUUM ANALYZE parties, services, roles, role_definition_rights, messages")
	return res, err
}

func serviceCode(res Result, i int) string { return fmt.Sprint(res.FirstCode + i) }

// serviceType alternates: even services are form tasks, odd ones correspondence.
func serviceType(i int) string {
	if i%2 == 0 {
		return "FormTask"
	}
	return "Correspondence"
}

type generated struct {
	subject, status       string
	sender, summary, body any // nil for none
	language              int
}

var (
	ownerNames = []string{"Fjordetaten", "Nordlys skatteforvaltning", "Vidde statistikkbyrå", "Kystverket for næring",
		"Dalen arbeids- og velferdsforvaltning", "Fjellet tollvesen", "Elvedalen kommune", "Bre og landbruksdirektoratet",
		"Havbruksetaten", "Lysverket energitilsyn"}
	topics = []string{"årsoppgave for næringsvirksomhet", "kvartalsvis lønnsstatistikk", "skattemelding for aksjeselskap",
		"merverdiavgift", "forskuddsskatt", "arbeidsgiveravgift", "sykepengerefusjon", "tilskudd til lærlinger",
		"konsesjon for havbruk", "tolldeklarasjon", "eiendomsskatt", "byggesøknad", "miljørapportering",
		"yrkesskadeforsikring", "aksjonærregisteroppgave", "a-melding", "regnskapsrapportering", "fiskerikvote"}
	formSubjects = []string{"Søknad om %s %d", "%s %d", "Endring av %s %d", "Rapportering av %s for %d"}
	corrSubjects = []string{"Vedtak om %s %d", "Varsel om %s %d", "Påminnelse: frist for %s %d", "Melding om endret %s %d",
		"Bekreftelse på mottatt %s %d", "Informasjon om %s %d", "Faktura for %s %d"}
	sentences = []string{"Vi viser til innsendt opplysninger om %s.", "Fristen for %s er om fjorten dager.",
		"Du finner betalingsinformasjon i vedlegget.", "Saksbehandlingstiden er normalt tre uker.",
		"Ta kontakt med oss dersom opplysningene er feil.", "Meldingene er registrert i våre systemer.",
		"Beløpet trekkes automatisk fra oppgitt konto.", "Skatteoppgjøret viser at virksomheten har restskatt.",
		"Kvitteringen bekrefter at %s er mottatt.", "Vedtaket kan påklages innen tre uker."}
	englishSubjects = []string{"Decision on %s %d", "Reminder: deadline for %s %d", "Invoice for %s %d"}
	englishTopics   = []string{"value added tax", "customs declaration", "payroll statistics", "fishing quota"}
	englishBody     = "<p>We refer to the information submitted about %s.</p><p>The invoices were approved and payments are due within fourteen days.</p>"
)

func message(rng *rand.Rand, owner, typ string) generated {
	year := 2022 + rng.IntN(4)
	var g generated
	if rng.IntN(20) == 0 { // one in twenty is in English
		topic := englishTopics[rng.IntN(len(englishTopics))]
		g = generated{subject: fmt.Sprintf(englishSubjects[rng.IntN(len(englishSubjects))], topic, year),
			summary: "About " + topic + ".", body: fmt.Sprintf(englishBody, topic), language: 1033}
	} else {
		topic := topics[rng.IntN(len(topics))]
		templates := corrSubjects
		if typ == "FormTask" {
			templates = formSubjects
		}
		subject := fmt.Sprintf(templates[rng.IntN(len(templates))], topic, year)
		var body strings.Builder
		for range 2 + rng.IntN(3) {
			s := sentences[rng.IntN(len(sentences))]
			if strings.Contains(s, "%s") {
				s = fmt.Sprintf(s, topic)
			}
			body.WriteString("<p>" + s + "</p>")
		}
		first, size := utf8.DecodeRuneInString(subject)
		g = generated{subject: string(unicode.ToUpper(first)) + subject[size:], summary: "Gjelder " + topic + ".", body: body.String(), language: 1044}
		if rng.IntN(10) == 0 {
			g.language = 2068
		}
	}
	if typ == "FormTask" {
		g.status = []string{"Utfylling", "Signering", "Sendt og arkivert", "Sendt og arkivert", "Sendt og arkivert"}[rng.IntN(5)]
		g.summary, g.body = nil, nil
	} else {
		g.status = []string{"Ulest", "Lest", "Lest", "Arkivert", "Arkivert"}[rng.IntN(5)]
		g.sender = owner
	}
	return g
}
