package odatasql_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/odata"
	"github.com/postbox/postbox/store/odatasql"
	"github.com/postbox/postbox/store/storetest"
)

// TestPostgres runs compiled filters and orderings against a real database.
func TestPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, storetest.ServerURL())
	require.NoError(t, err, "the tests need PostgreSQL at POSTBOX_TEST_DATABASE_URL")
	defer conn.Close(context.Background())

	// A TEMP table lives only in this session, so parallel runs cannot collide.
	_, err = conn.Exec(ctx, `
		CREATE TEMP TABLE msg (
			id              bigint PRIMARY KEY,
			party           text NOT NULL,
			service_owner   text NOT NULL,
			subject         text,
			service_edition integer,
			created_at      timestamp NOT NULL,
			is_read         boolean NOT NULL
		)`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `
		INSERT INTO msg VALUES
			(1, 'p1', 'Fjordetaten',               'Årsoppgave 2024',           1,    '2024-06-30 23:59:59', false),
			(2, 'p1', 'Nordlys skatteforvaltning', 'Skattemelding',             2,    '2024-07-01 00:00:00', true),
			(3, 'p1', 'Nordlys skatteforvaltning', 'Faktura 50% rabatt',        3,    '2024-07-01 00:00:01', false),
			(4, 'p1', 'Fjordetaten',               'x''; DROP TABLE msg; --',   NULL, '2024-08-15 12:00:00', false),
			(5, 'p1', 'Fjordetaten',               NULL,                        5,    '2024-09-01 08:30:00', true),
			(6, 'p1', 'Fjordetaten',               'a_b c:\d',                  2,    '2024-09-01 08:30:00', false),
			(7, 'p2', 'Fjordetaten',               'Other party''s message',   1,    '2024-01-01 00:00:00', false)`)
	require.NoError(t, err)

	fields := odatasql.Fields{
		"ServiceOwner":   {Column: "service_owner", Kind: odatasql.String},
		"Subject":        {Column: "subject", Kind: odatasql.String},
		"ServiceEdition": {Column: "service_edition", Kind: odatasql.Int},
		"CreatedDate":    {Column: "created_at", Kind: odatasql.DateTime},
		"IsRead":         {Column: "is_read", Kind: odatasql.Bool},
	}

	// query mimics a store method: its own argument ($1, the party) comes
	// first, then the compiled filter's.
	query := func(t *testing.T, filter, orderby string) []int64 {
		t.Helper()
		where, args := "TRUE", []any(nil)
		if filter != "" {
			where, args, err = odatasql.Where(mustParse(t, filter), fields, 2)
			require.NoError(t, err)
		}
		var items []odata.OrderItem
		if orderby != "" {
			items, err = odata.ParseOrderBy(orderby)
			require.NoError(t, err)
		}
		order, err := odatasql.OrderBy(items, fields, "id")
		require.NoError(t, err)
		rows, err := conn.Query(ctx, "SELECT id FROM msg WHERE party = $1 AND "+where+" ORDER BY "+order,
			append([]any{"p1"}, args...)...)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		return ids
	}

	tests := []struct {
		filter, orderby string
		want            []int64
	}{
		{"", "", []int64{1, 2, 3, 4, 5, 6}},
		{"ServiceOwner eq 'Fjordetaten'", "", []int64{1, 4, 5, 6}},
		{"CreatedDate gt DateTime'2024-07-01T00:00:00' and ServiceOwner eq 'Nordlys skatteforvaltning'", "", []int64{3}},
		{"CreatedDate ge DateTime'2024-07-01T00:00' and CreatedDate lt DateTime'2024-09-01T08:30:00.000001'", "", []int64{2, 3, 4, 5, 6}},
		{"ServiceEdition ge 2 or IsRead eq true", "ServiceEdition desc", []int64{5, 3, 2, 6}},
		{"ServiceEdition lt 9223372036854775807", "", []int64{1, 2, 3, 5, 6}},
		// OData null rules: NULL is "not equal" and fails orderings.
		{"Subject ne 'Skattemelding'", "", []int64{1, 3, 4, 5, 6}},
		{"not (ServiceEdition gt 1)", "", []int64{1, 4}},
		{"not (ServiceEdition gt 1 or Subject eq null)", "", []int64{1, 4}},
		{"Subject eq null", "", []int64{5}},
		{"ServiceEdition ne null and not IsRead eq true", "", []int64{1, 3, 6}},
		// The hostile literal is data: it matches its own row and the table survives.
		{"Subject eq 'x''; DROP TABLE msg; --'", "", []int64{4}},
		{"contains(Subject,'; DROP TABLE')", "", []int64{4}},
		// LIKE metacharacters in arguments match literally.
		{"contains(Subject,'%')", "", []int64{3}},
		{"contains(Subject,'_')", "", []int64{6}},
		{"endswith(Subject,':\\d')", "", []int64{6}},
		{"startswith(Subject,'Års')", "", []int64{1}},
		{"substringof('skatt',ServiceOwner) eq true", "", []int64{2, 3}},
		{"not contains(Subject,'a')", "", []int64{4}},
		// Case conversions: tolower and toupper make matches case-insensitive; a NULL stays unmatched.
		{"substringof('skatt',tolower(Subject))", "", []int64{2}},
		{"substringof('SKATT',tolower(ServiceOwner))", "", []int64{}},
		{"startswith(toupper(Subject),'ÅRS')", "", []int64{1}},
		{"endswith(tolower(Subject),'RABATT')", "", []int64{}},
		{"endswith(tolower(Subject),'rabatt')", "", []int64{3}},
		{"tolower(Subject) eq 'skattemelding'", "", []int64{2}},
		{"toupper(Subject) ne 'SKATTEMELDING'", "", []int64{1, 3, 4, 5, 6}},
		{"contains(tolower(Subject),'50%')", "", []int64{3}},
		{"contains(toupper(Subject),'A_B')", "", []int64{6}},
		{"not startswith(tolower(Subject),'a')", "", []int64{1, 2, 3, 4}},
		{"", "CreatedDate desc", []int64{5, 6, 4, 3, 2, 1}},
		// NULLs sort as PostgreSQL does: last ascending, first descending.
		{"", "ServiceOwner, serviceedition DESC", []int64{4, 5, 6, 1, 3, 2}},
		// Equal keys fall back to the tie-breaker.
		{"", "IsRead desc", []int64{2, 5, 1, 3, 4, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.filter+"|"+tt.orderby, func(t *testing.T) {
			assert.Equal(t, tt.want, query(t, tt.filter, tt.orderby))
		})
	}

	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM msg").Scan(&n))
	assert.Equal(t, 7, n)
}
