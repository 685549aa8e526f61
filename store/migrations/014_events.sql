-- The outbox of CloudEvents: every state change writes its event here in the transaction of the change,
-- and the feeds and deliveries read it in sequence order.

-- The one counter every event's seq is taken from. Appending an event increments it in the appending
-- transaction, whose row lock is held until that transaction ends: the next appender waits, so seqs are
-- given in commit order (a reader that sees seq n has seen every seq below it), and a rollback undoes
-- its increment (no gaps). An identity column would give neither.
CREATE TABLE event_sequence (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    last_seq bigint NOT NULL
);
INSERT INTO event_sequence (only_row, last_seq) VALUES (true, 0);

-- One row per CloudEvent 1.0 (specversion 1.0 is implied), with what the feeds filter on. No foreign
-- keys: events outlive the messages, roles and role definitions they name.
CREATE TABLE events (
    seq             bigint PRIMARY KEY CHECK (seq > 0),
    id              uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    type            text NOT NULL,
    source          text NOT NULL,           -- the absolute URI of the resource
    subject         text NOT NULL,           -- the reportee: /party/r50001
    time            timestamptz NOT NULL DEFAULT now(),
    datacontenttype text NOT NULL DEFAULT 'application/json',
    data            jsonb NOT NULL,          -- ids and the new state; never form data, never an identity number
    reportee_id     bigint NOT NULL,
    message_id      text,
    -- The service of a message's event; NULL for events of roles and role definitions.
    service_code    text,
    service_edition integer,
    -- The message was archived after the change, so seeing the event needs ArchiveRead instead of Read.
    archived        boolean NOT NULL DEFAULT false,
    CHECK ((service_code IS NULL) = (service_edition IS NULL))
);
CREATE INDEX events_reportee ON events (reportee_id, seq);
CREATE INDEX events_service ON events (service_code, service_edition, seq) WHERE service_code IS NOT NULL;

CREATE FUNCTION events_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'an event is never changed' USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION events_immutable();
