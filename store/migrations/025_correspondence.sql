-- The agency sends (package correspondence): a shipment is one correspondence of a service to many
-- recipients. Its row and one row per recipient are written when the request is accepted, each accepted
-- recipient with the id its message will have; the shipment's workflow makes the messages (in batches, at
-- VisibleDateTime) with exactly those ids, so a batch run twice makes nothing twice. Until then a message
-- does not exist in messages at all: no list, read, count or event can show it early.
CREATE TABLE shipments (
    id                     uuid PRIMARY KEY,
    service_owner_code     text NOT NULL REFERENCES service_owners (code),
    service_code           text NOT NULL,
    service_edition        integer NOT NULL,
    created_at             timestamp NOT NULL,
    created_by             text NOT NULL,
    subject                text NOT NULL,
    summary                text NOT NULL,
    body                   text NOT NULL,
    message_sender         text NOT NULL,
    senders_reference      text,
    reply_options          jsonb NOT NULL DEFAULT '[]',
    custom_message_data    jsonb,
    is_confirmation_needed boolean NOT NULL,
    language               integer NOT NULL,
    visible_at             timestamp,
    due_at                 timestamp,
    allow_system_delete_at timestamp,
    recipients             integer NOT NULL,
    -- the sender's IdempotentKey: a send repeated with it answers this shipment (it commits with it, so
    -- a crash between the commit and the answer loses nothing)
    idempotent_key         text,
    FOREIGN KEY (service_code, service_edition) REFERENCES services
);
CREATE INDEX shipments_owner ON shipments (service_owner_code, created_at DESC);
CREATE UNIQUE INDEX shipments_idempotent_key ON shipments (service_owner_code, idempotent_key) WHERE idempotent_key IS NOT NULL;

-- ordinal is the recipient's place in the request (from 1), the status list's keyset. A refused
-- recipient has no party and no message id, and says why; a retracted one keeps its id and says so.
CREATE TABLE shipment_recipients (
    shipment_id uuid NOT NULL REFERENCES shipments ON DELETE CASCADE,
    ordinal     integer NOT NULL,
    recipient   text NOT NULL,
    party_id    bigint REFERENCES parties (id),
    message_id  text UNIQUE,
    refused     text CHECK (refused IN ('malformed', 'unknown', 'deleted', 'duplicate')),
    created_at  timestamp,
    retracted_at timestamp,
    PRIMARY KEY (shipment_id, ordinal),
    CHECK ((refused IS NULL) = (message_id IS NOT NULL))
);

-- A sent message knows its shipment, its sender's reference and its dates, which the mailbox shows and
-- filters on. Nullable without a default: adding them rewrites nothing.
ALTER TABLE messages
    ADD COLUMN shipment_id uuid,
    ADD COLUMN senders_reference text,
    ADD COLUMN visible_at timestamp,
    ADD COLUMN due_at timestamp,
    ADD COLUMN allow_system_delete_at timestamp,
    -- when a sent message was found overdue (its event written once, whether a retried step runs again)
    ADD COLUMN overdue_at timestamp;

-- The sender retracts a message its recipient has not opened.
ALTER TABLE message_audit DROP CONSTRAINT message_audit_action_check;
ALTER TABLE message_audit ADD CONSTRAINT message_audit_action_check
    CHECK (action IN ('Archive', 'Confirm', 'Delete', 'Restore', 'DeleteForGood', 'Purge', 'PutSubForm', 'DeleteForm',
        'AddAttachment', 'ReplaceAttachment', 'DeleteAttachment', 'Retract'));

-- The attachments of a shipment are stored once, by their SHA-256, however many messages (and shipments)
-- have them: each message's attachments row says Shared and names the bytes by its sha256. Bytes no row
-- refers to any more stay until the object store (#30) sweeps them.
CREATE TABLE shared_attachment_chunks (
    sha256 bytea NOT NULL,
    seq    integer NOT NULL,
    data   bytea NOT NULL,
    PRIMARY KEY (sha256, seq)
);
CREATE TABLE shipment_attachments (
    shipment_id  uuid NOT NULL REFERENCES shipments ON DELETE CASCADE,
    ordinal      integer NOT NULL,
    name         text NOT NULL,
    file_name    text NOT NULL,
    content_type text NOT NULL,
    file_size    bigint NOT NULL,
    sha256       bytea NOT NULL,
    PRIMARY KEY (shipment_id, ordinal)
);
ALTER TABLE attachments ADD COLUMN shared boolean NOT NULL DEFAULT false;
