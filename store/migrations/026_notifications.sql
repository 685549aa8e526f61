-- Notifications (package notification): an owner's order to tell the parties behind messages of its
-- services, by e-mail or SMS, with reminders. An order names its messages (one, or a shipment's); each
-- send of a round (0: the notice, 1…: reminders) to a recipient has one row, written 'sending' before the
-- mail or SMS goes and decided after, so a send retried after a crash reuses its idempotency key.
CREATE TABLE notification_orders (
    id                 uuid PRIMARY KEY,
    service_owner_code text NOT NULL REFERENCES service_owners (code),
    shipment_id        uuid REFERENCES shipments (id),
    channel            text NOT NULL CHECK (channel IN ('Email', 'Sms', 'EmailPreferred', 'SmsPreferred')),
    email_subject      text NOT NULL,
    email_body         text NOT NULL,
    sms_text           text NOT NULL,
    send_at            timestamp NOT NULL,
    reminder_days      integer NOT NULL CHECK (reminder_days >= 0),
    reminders          integer NOT NULL CHECK (reminders >= 0),
    recipients         integer NOT NULL,
    created_at         timestamp NOT NULL,
    created_by         text NOT NULL
);
CREATE INDEX notification_orders_shipment ON notification_orders (shipment_id) WHERE shipment_id IS NOT NULL;

-- One row per message of the order (ordinal from 1, the batches' and the status list's keyset). The
-- addresses are those the order gave; NULL: the party's contact data at send time.
CREATE TABLE notification_recipients (
    order_id      uuid NOT NULL REFERENCES notification_orders ON DELETE CASCADE,
    ordinal       integer NOT NULL,
    message_id    text NOT NULL,
    party_id      bigint NOT NULL REFERENCES parties (id),
    email_address text,
    mobile_number text,
    PRIMARY KEY (order_id, ordinal)
);
CREATE INDEX notification_recipients_message ON notification_recipients (message_id);

-- attempts counts the sends begun: above 1 the mail or SMS may have gone twice, with the same key.
CREATE TABLE notification_sends (
    order_id    uuid NOT NULL,
    ordinal     integer NOT NULL,
    round       integer NOT NULL,
    state       text NOT NULL CHECK (state IN ('sending', 'sent', 'failed', 'skipped')),
    channel     text CHECK (channel IN ('Email', 'Sms')),
    address     text,
    reason      text,
    attempts    integer NOT NULL DEFAULT 0,
    decided_at  timestamp,
    PRIMARY KEY (order_id, ordinal, round),
    FOREIGN KEY (order_id, ordinal) REFERENCES notification_recipients ON DELETE CASCADE,
    CHECK ((state = 'sending') = (decided_at IS NULL))
);
