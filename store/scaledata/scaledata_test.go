package scaledata_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/postbox/postbox/events"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/mailbox"
	"github.com/postbox/postbox/store"
	"github.com/postbox/postbox/store/scaledata"
	"github.com/postbox/postbox/store/storetest"
	"github.com/postbox/postbox/submission"
)

func TestGenerate(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewEmpty(t)
	shape := scaledata.Shape{Messages: 3000, Parties: 30, Services: 12, Owners: 3, Seed: 5}
	res, err := scaledata.Generate(ctx, pool, shape)
	require.NoError(t, err)

	count := func(sql string, args ...any) int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	assert.Equal(t, 3000, count(`SELECT count(*) FROM messages`))
	assert.Equal(t, 30, count(`SELECT count(DISTINCT reportee_id) FROM messages`))
	assert.Equal(t, 12, count(`SELECT count(DISTINCT service_code) FROM messages`))
	assert.Equal(t, 3000, count(`SELECT count(*) FROM messages WHERE search_words <> ''::tsvector`), "the search columns are filled")
	assert.Positive(t, count(`SELECT count(*) FROM messages WHERE language = 1033`))
	assert.Positive(t, count(`SELECT count(*) FROM messages WHERE status IN ('Ulest', 'Sendt og arkivert')`))
	// The person holds a role for every organization, granting Read and ArchiveRead on half the services.
	assert.Equal(t, 30, count(`SELECT count(*) FROM roles WHERE holder_party_id = $1`, res.PersonID))
	assert.Equal(t, 30*6*2, count(`SELECT count(*) FROM roles ro JOIN role_definition_rights r USING (role_definition_id)
		WHERE ro.holder_party_id = $1`, res.PersonID))
	assert.Equal(t, 30*6, res.Grants)

	q := store.New(pool)
	parties, _, err := identity.NewStore(q).ListReportees(ctx, store.Subject{PartyID: res.PersonID}, res.PersonID, store.ServiceFilter{}, store.Unpaged)
	require.NoError(t, err)
	assert.Len(t, parties, 31, "the person and every organization")
	page, more, err := mailbox.NewLists(q).AllMessages(ctx, store.Subject{PartyID: res.PersonID}, res.PersonID, store.ListQuery{Page: store.Page{Limit: 50}}, mailbox.Search{})
	require.NoError(t, err)
	assert.Len(t, page, 50)
	assert.True(t, more)

	_, err = scaledata.Generate(ctx, storetest.NewEmpty(t), scaledata.Shape{Messages: 1, Parties: 1, Services: 1, Owners: 1})
	require.Error(t, err)
}

// Generated submissions are whole archives in the owner's unconfirmed queue, their one attachment stored
// once; a second run of the same queue adds none.
func TestSubmissions(t *testing.T) {
	ctx := context.Background()
	pool := storetest.NewEmpty(t)
	res, err := scaledata.Generate(ctx, pool, scaledata.Shape{Messages: 10, Parties: 3, Services: 2, Owners: 1, Seed: 5})
	require.NoError(t, err)
	q := scaledata.Queue{Count: 120, Owner: "G00", ServiceCode: "80000", ServiceEdition: 1, ReporteeID: res.FirstOrg, FirstSeq: scaledata.FirstSubmission}
	added, err := scaledata.Submissions(ctx, pool, storetest.FilesOf(pool), q)
	require.NoError(t, err)
	assert.Equal(t, 120, added)
	again, err := scaledata.Submissions(ctx, pool, storetest.FilesOf(pool), q)
	require.NoError(t, err)
	assert.Zero(t, again)

	subs := submission.New(pool, storetest.FilesOf(pool), events.NewBuilder("http://postbox.test"))
	first, more, err := subs.List(ctx, "G00", submission.Filter{Confirmed: submission.Unconfirmed}, 0, 50)
	require.NoError(t, err)
	assert.True(t, more)
	require.Len(t, first, 50)
	assert.Equal(t, fmt.Sprintf("AR%d", scaledata.FirstSubmission), first[0].ArchiveReference)
	require.Len(t, first[0].Forms, 1)
	require.Len(t, first[0].Attachments, 1)
	var blobs, named int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM blobs), (SELECT count(*) FROM archive_blobs)`).Scan(&blobs, &named))
	assert.Equal(t, 2, blobs, "one attachment and one print, each stored once")
	assert.Equal(t, 120, named, "each archive keeps its attachment's blob")
}
