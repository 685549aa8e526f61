package webhook

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/postbox/postbox/store"
)

// Store is the SQL of webhook subscriptions, their dead letters and the dispatcher's mark, over the
// connection of q, a pool or a transaction (whose transactions of their own then run as savepoints), beside
// the shared statements of q itself (the outbox's last seq).
type Store struct {
	*store.Queries
}

// NewStore returns the webhook statements over q.
func NewStore(q *store.Queries) Store { return Store{q} }

// inTx runs fn in one transaction.
func (st Store) inTx(ctx context.Context, fn func(Store) error) error {
	return st.InTx(ctx, func(q *store.Queries) error { return fn(Store{q}) })
}

// Subscription is a webhook subscription: of a reportee, made by a caller whose rights decide what it
// gets, or of a service owner, for the events of its services.
type Subscription struct {
	ID               int64
	ReporteeID       int64         // the party of a reportee's subscription; 0 for a service owner's
	Subscriber       store.Subject // whose rights count, for a reportee's subscription
	ServiceOwnerCode string        // the owner of a service owner's subscription; "" for a reportee's
	EndPoint         string
	Secret           string // sealed (webhook.Sealer)
	// PreviousSecret (sealed) signs deliveries beside Secret until PreviousSecretUntil: the secret a
	// rotation replaced, for the subscriber to switch without missing a delivery.
	PreviousSecret      string
	PreviousSecretUntil time.Time
	Types               []string // nil: every type
	Status              string   // pending, active, paused or ended (webhook.Status*)
	StatusReason        string
	Cursor              int64 // the seq of the last event delivered or passed over
	Created             time.Time
	Ended               time.Time // zero while it runs
}

// The channels the delivery workers LISTEN on: postbox_events when a commit adds events (a trigger),
// postbox_webhooks with a subscription's id when it is made, ended or asked to replay.
const (
	ChannelEvents   = "postbox_events"
	ChannelWebhooks = "postbox_webhooks"
)

const subscriptionColumns = `s.id, COALESCE(s.reportee_id, 0), s.subject_party_id, s.subject_login_id, COALESCE(s.service_owner_code, ''),
	s.endpoint, s.secret, COALESCE(s.previous_secret, ''), COALESCE(s.previous_secret_until, 'epoch'), s.types, s.status,
	s.status_reason, s.cursor, s.created, COALESCE(s.ended, 'epoch')`

func scanSubscription(row pgx.CollectableRow) (Subscription, error) {
	var s Subscription
	err := row.Scan(&s.ID, &s.ReporteeID, &s.Subscriber.PartyID, &s.Subscriber.LoginID, &s.ServiceOwnerCode,
		&s.EndPoint, &s.Secret, &s.PreviousSecret, &s.PreviousSecretUntil, &s.Types, &s.Status, &s.StatusReason, &s.Cursor, &s.Created, &s.Ended)
	for _, t := range []*time.Time{&s.Ended, &s.PreviousSecretUntil} {
		if t.Equal(time.Unix(0, 0)) {
			*t = time.Time{}
		}
	}
	return s, err
}

// SubscriptionSecrets are the stored secrets of a subscription, as stored.
type SubscriptionSecrets struct {
	ID             int64
	Secret         string
	PreviousSecret string
}

// SubscriptionSecrets lists the secrets of every subscription, for resealing them.
func (st Store) SubscriptionSecrets(ctx context.Context) ([]SubscriptionSecrets, error) {
	rows, err := st.DB().Query(ctx, `SELECT id, secret, COALESCE(previous_secret, '') FROM webhook_subscriptions ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[SubscriptionSecrets])
}

// ReplaceSubscriptionSecrets stores secret and previous (resealed) in place of what was, unless a change
// came between (a rotation): then it tells false, and the change stands.
func (st Store) ReplaceSubscriptionSecrets(ctx context.Context, was SubscriptionSecrets, secret, previous string) (bool, error) {
	tag, err := st.DB().Exec(ctx, `UPDATE webhook_subscriptions SET secret = $4, previous_secret = NULLIF($5, '')
		WHERE id = $1 AND secret = $2 AND COALESCE(previous_secret, '') = $3`, was.ID, was.Secret, was.PreviousSecret, secret, previous)
	return tag.RowsAffected() == 1, err
}

// RotateSubscriptionSecret makes secret (sealed) the secret of subscription id, keeping the one it
// replaces as the previous until until; store.ErrNotFound when there is no such subscription that has not ended.
func (st Store) RotateSubscriptionSecret(ctx context.Context, id int64, secret string, until time.Time) error {
	tag, err := st.DB().Exec(ctx, `UPDATE webhook_subscriptions SET previous_secret = secret, previous_secret_until = $3, secret = $2
		WHERE id = $1 AND status <> 'ended'`, id, secret, until)
	if err == nil && tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return err
}

func (st Store) subscriptions(ctx context.Context, where string, args ...any) ([]Subscription, error) {
	rows, err := st.DB().Query(ctx, `SELECT `+subscriptionColumns+` FROM webhook_subscriptions s WHERE `+where+` ORDER BY s.id`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanSubscription)
}

// notifyWebhook tells the delivery workers that subscription id changed, when the transaction commits.
func (st Store) notifyWebhook(ctx context.Context, id int64) error {
	_, err := st.DB().Exec(ctx, `SELECT pg_notify($1, $2)`, ChannelWebhooks, strconv.FormatInt(id, 10))
	return err
}

// SubscriptionLimitError refuses a subscription beyond the most one subscriber may have.
type SubscriptionLimitError struct {
	Limit int
}

func (e *SubscriptionLimitError) Error() string {
	return fmt.Sprintf("the subscriber has %d subscriptions that have not ended, the most it may have", e.Limit)
}

// CreateSubscription stores s as pending, to get the events committed from now on, and returns it as
// stored; a *SubscriptionLimitError when its subscriber (a service owner; else the caller, for every
// reportee) has limit subscriptions that have not ended already (0: no limit).
func (st Store) CreateSubscription(ctx context.Context, s Subscription, limit int) (Subscription, error) {
	var out Subscription
	err := st.inTx(ctx, func(st Store) error {
		var reportee *int64
		var owner *string
		if s.ServiceOwnerCode != "" {
			owner = &s.ServiceOwnerCode
		} else {
			reportee = &s.ReporteeID
		}
		if limit > 0 {
			if err := st.checkSubscriptionLimit(ctx, s, limit); err != nil {
				return err
			}
		}
		// The last committed seq: an event committed later gets a higher one (the counter is locked to commit).
		rows, err := st.DB().Query(ctx, `INSERT INTO webhook_subscriptions AS s (reportee_id, subject_party_id, subject_login_id,
				service_owner_code, endpoint, secret, types, cursor)
			VALUES ($1, $2, $3, $4, $5, $6, $7, (SELECT last_seq FROM event_sequence))
			RETURNING `+subscriptionColumns,
			reportee, s.Subscriber.PartyID, s.Subscriber.LoginID, owner, s.EndPoint, s.Secret, s.Types)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectExactlyOneRow(rows, scanSubscription); err != nil {
			return err
		}
		return st.notifyWebhook(ctx, out.ID)
	})
	return out, err
}

// checkSubscriptionLimit counts the subscriptions of s's subscriber that have not ended, under a lock
// of that subscriber held to the commit: concurrent creations of one subscriber count one after the
// other, each seeing those committed before it (every statement of a transaction in read committed
// takes a new snapshot), so no more than limit are made.
func (st Store) checkSubscriptionLimit(ctx context.Context, s Subscription, limit int) error {
	mine := `service_owner_code = $1`
	args := []any{s.ServiceOwnerCode}
	if s.ServiceOwnerCode == "" {
		mine, args = `service_owner_code IS NULL AND subject_party_id = $1 AND subject_login_id = $2`, []any{s.Subscriber.PartyID, s.Subscriber.LoginID}
	}
	key := fmt.Sprintf("webhook subscriber %s/%d/%d", s.ServiceOwnerCode, s.Subscriber.PartyID, s.Subscriber.LoginID)
	if _, err := st.DB().Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return err
	}
	var n int
	if err := st.DB().QueryRow(ctx, `SELECT count(*) FROM webhook_subscriptions WHERE `+mine+` AND status <> 'ended'`, args...).Scan(&n); err != nil {
		return err
	}
	if n >= limit {
		return &SubscriptionLimitError{Limit: limit}
	}
	return nil
}

// GetSubscription returns subscription id, store.ErrNotFound when there is none.
func (st Store) GetSubscription(ctx context.Context, id int64) (Subscription, error) {
	subs, err := st.subscriptions(ctx, `s.id = $1`, id)
	if err != nil {
		return Subscription{}, err
	}
	if len(subs) == 0 {
		return Subscription{}, store.ErrNotFound
	}
	return subs[0], nil
}

// ReporteeSubscriptions lists the subscriptions subscriber made for reportee that have not ended.
func (st Store) ReporteeSubscriptions(ctx context.Context, reportee int64, subscriber store.Subject) ([]Subscription, error) {
	return st.subscriptions(ctx, `s.reportee_id = $1 AND s.subject_party_id = $2 AND s.subject_login_id = $3 AND s.status <> 'ended'`,
		reportee, subscriber.PartyID, subscriber.LoginID)
}

// ServiceOwnerSubscriptions lists the subscriptions of a service owner that have not ended.
func (st Store) ServiceOwnerSubscriptions(ctx context.Context, owner string) ([]Subscription, error) {
	return st.subscriptions(ctx, `s.service_owner_code = $1 AND s.status <> 'ended'`, owner)
}

// RunningSubscriptions lists the ids of the subscriptions whose workflow should run (pending or active).
func (st Store) RunningSubscriptions(ctx context.Context) ([]int64, error) {
	rows, err := st.DB().Query(ctx, `SELECT id FROM webhook_subscriptions WHERE status IN ('pending', 'active') ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// LockDispatchMark locks the dispatcher's mark until the transaction ends and returns it: the seq through
// which events have woken their subscriptions' workflows. Run it in a transaction.
func (st Store) LockDispatchMark(ctx context.Context) (int64, error) {
	var seq int64
	err := st.DB().QueryRow(ctx, `SELECT seq FROM webhook_dispatch FOR UPDATE`).Scan(&seq)
	return seq, err
}

// SetDispatchMark moves the dispatcher's mark to seq.
func (st Store) SetDispatchMark(ctx context.Context, seq int64) error {
	_, err := st.DB().Exec(ctx, `UPDATE webhook_dispatch SET seq = $1`, seq)
	return err
}

// SubscriptionsWithEvents lists the active subscriptions that events after seq through seq through may
// concern: a reportee's subscriptions of the events' reportees, a service owner's of its services' events.
// A superset of what they may see (their rights and types are checked on delivery), found from the events
// to the subscriptions by index, so it costs the events, not the subscriptions.
func (st Store) SubscriptionsWithEvents(ctx context.Context, after, through int64) ([]int64, error) {
	rows, err := st.DB().Query(ctx, `SELECT s.id FROM events e
			JOIN webhook_subscriptions s ON s.reportee_id = e.reportee_id
			WHERE e.seq > $1 AND e.seq <= $2 AND s.status = 'active'
		UNION
		SELECT s.id FROM events e
			JOIN services sv ON sv.service_code = e.service_code AND sv.service_edition = e.service_edition
			JOIN webhook_subscriptions s ON s.service_owner_code = sv.service_owner_code
			WHERE e.seq > $1 AND e.seq <= $2 AND s.status = 'active'`, after, through)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// EndSubscription ends subscription id (its workflow stops at its next step); ending an ended one is
// no change. store.ErrNotFound when there is none.
func (st Store) EndSubscription(ctx context.Context, id int64) error {
	return st.inTx(ctx, func(st Store) error {
		tag, err := st.DB().Exec(ctx, `UPDATE webhook_subscriptions SET status = 'ended', status_reason = '', ended = COALESCE(ended, now())
			WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		return st.notifyWebhook(ctx, id)
	})
}

// SetSubscriptionStatus sets the status and reason of a subscription that has not ended, and tells
// whether it has not.
func (st Store) SetSubscriptionStatus(ctx context.Context, id int64, status, reason string) (bool, error) {
	tag, err := st.DB().Exec(ctx, `UPDATE webhook_subscriptions SET status = $2, status_reason = $3 WHERE id = $1 AND status <> 'ended'`,
		id, status, reason)
	return tag.RowsAffected() == 1, err
}

// AdvanceSubscription moves the cursor of subscription id up to seq (never back).
func (st Store) AdvanceSubscription(ctx context.Context, id, seq int64) error {
	_, err := st.DB().Exec(ctx, `UPDATE webhook_subscriptions SET cursor = GREATEST(cursor, $2) WHERE id = $1`, id, seq)
	return err
}

// DeadLetter is an event whose last attempt failed.
type DeadLetter struct {
	Seq      int64
	EventID  string
	Attempts int
	Reason   string
	Dead     time.Time
	Replay   bool // a replay was asked for and has not gone through yet
}

// AddDeadLetter puts the event seq aside for subscription id and moves the cursor past it, in one
// transaction; a replayed one that failed again is updated.
func (st Store) AddDeadLetter(ctx context.Context, id int64, d DeadLetter) error {
	return st.inTx(ctx, func(st Store) error {
		if _, err := st.DB().Exec(ctx, `INSERT INTO webhook_dead_letters (subscription_id, seq, event_id, attempts, reason)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (subscription_id, seq) DO UPDATE SET attempts = webhook_dead_letters.attempts + EXCLUDED.attempts,
				reason = EXCLUDED.reason, dead = now(), replay = false`, id, d.Seq, d.EventID, d.Attempts, d.Reason); err != nil {
			return err
		}
		return st.AdvanceSubscription(ctx, id, d.Seq)
	})
}

// DeadLetters lists the dead letters of subscription id, oldest event first.
func (st Store) DeadLetters(ctx context.Context, id int64) ([]DeadLetter, error) {
	return st.deadLetters(ctx, `subscription_id = $1`, id)
}

// ReplaysAsked lists the dead letters of subscription id whose replay was asked for, oldest event first.
func (st Store) ReplaysAsked(ctx context.Context, id int64) ([]DeadLetter, error) {
	return st.deadLetters(ctx, `subscription_id = $1 AND replay`, id)
}

func (st Store) deadLetters(ctx context.Context, where string, args ...any) ([]DeadLetter, error) {
	rows, err := st.DB().Query(ctx, `SELECT seq, event_id, attempts, reason, dead, replay FROM webhook_dead_letters
		WHERE `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[DeadLetter])
}

// ErrSubscriptionEnded is the answer to a replay of an ended subscription.
var ErrSubscriptionEnded = errors.New("the subscription has ended")

// AskReplay asks for the dead letters of subscription id to be sent again and resumes it if it was
// paused; it returns how many there are.
func (st Store) AskReplay(ctx context.Context, id int64) (int, error) {
	var n int
	err := st.inTx(ctx, func(st Store) error {
		var status string
		if err := st.DB().QueryRow(ctx, `SELECT status FROM webhook_subscriptions WHERE id = $1 FOR UPDATE`, id).Scan(&status); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrNotFound
			}
			return err
		}
		if status == "ended" {
			return ErrSubscriptionEnded
		}
		tag, err := st.DB().Exec(ctx, `UPDATE webhook_dead_letters SET replay = true WHERE subscription_id = $1`, id)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		if _, err := st.DB().Exec(ctx, `UPDATE webhook_subscriptions SET status = 'pending', status_reason = 'resumed: waiting for the handshake'
			WHERE id = $1 AND status = 'paused'`, id); err != nil {
			return err
		}
		return st.notifyWebhook(ctx, id)
	})
	return n, err
}

// ReplayDelivered removes the dead letter seq of subscription id once its replay went through.
func (st Store) ReplayDelivered(ctx context.Context, id, seq int64) error {
	_, err := st.DB().Exec(ctx, `DELETE FROM webhook_dead_letters WHERE subscription_id = $1 AND seq = $2`, id, seq)
	return err
}

// OutboxMark is what the delivery workers' fallback poll compares between looks: a change in either
// field is something a waiting long poll may not have been woken for.
type OutboxMark struct {
	LastSeq int64 // the seq of the last committed event
	Replays int64 // the dead letters whose replay was asked for and has not gone through
}

// CurrentOutboxMark reads the outbox's mark, in one statement.
func (st Store) CurrentOutboxMark(ctx context.Context) (OutboxMark, error) {
	var m OutboxMark
	err := st.DB().QueryRow(ctx, `SELECT last_seq, (SELECT count(*) FROM webhook_dead_letters WHERE replay) FROM event_sequence`).
		Scan(&m.LastSeq, &m.Replays)
	return m, err
}
