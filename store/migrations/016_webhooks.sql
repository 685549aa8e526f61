-- Webhook subscriptions: an endpoint that gets the outbox's events a subscriber may see, pushed by the
-- subscription's delivery workflow (events/webhook). A reportee's subscription is made by a caller (subject_*)
-- for a party (reportee_id) and gets the events the caller's rights for that party let it read; a service
-- owner's gets the events of its services.
CREATE TABLE webhook_subscriptions (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reportee_id        bigint REFERENCES parties (id),
    subject_party_id   bigint NOT NULL DEFAULT 0,
    subject_login_id   bigint NOT NULL DEFAULT 0,
    service_owner_code text REFERENCES service_owners (code),
    endpoint           text NOT NULL,
    -- The HMAC key of the signatures: kept as given, since every delivery is signed with it.
    secret             text NOT NULL,
    types              text[],                  -- NULL: every type
    status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active', 'paused', 'ended')),
    status_reason      text NOT NULL DEFAULT '',
    -- The seq of the last event delivered or passed over; deliveries continue after it.
    cursor             bigint NOT NULL,
    created            timestamptz NOT NULL DEFAULT now(),
    ended              timestamptz,
    CHECK ((reportee_id IS NULL) <> (service_owner_code IS NULL))
);
CREATE INDEX webhook_subscriptions_reportee ON webhook_subscriptions (reportee_id, id) WHERE reportee_id IS NOT NULL;
CREATE INDEX webhook_subscriptions_owner ON webhook_subscriptions (service_owner_code, id) WHERE service_owner_code IS NOT NULL;
CREATE INDEX webhook_subscriptions_running ON webhook_subscriptions (id) WHERE status IN ('pending', 'active');

-- Events whose last attempt failed, until they are replayed and delivered.
CREATE TABLE webhook_dead_letters (
    subscription_id bigint NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    seq             bigint NOT NULL,
    event_id        text NOT NULL,
    attempts        integer NOT NULL,
    reason          text NOT NULL,
    dead            timestamptz NOT NULL DEFAULT now(),
    replay          boolean NOT NULL DEFAULT false,  -- a replay was asked for and has not gone through yet
    PRIMARY KEY (subscription_id, seq)
);

-- Waking the delivery workflows: a commit that adds events notifies postbox_events (the waiting long polls
-- look at the outbox again); a new, ended or replayed subscription notifies postbox_webhooks with its id.
-- Deliveries do not depend on these: the long polls also look every few seconds, and the workers start the
-- workflows of running subscriptions every minute.
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('postbox_events', '');
    RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
