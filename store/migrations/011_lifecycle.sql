-- The life of a message after it arrives: confirmation of a correspondence that asks for it, the
-- reportee's trashbin (a soft delete that keeps the message's data), the service owner's extra data of a
-- message, the signing texts of a service, and the append-only log of every such change.

ALTER TABLE messages
    ADD COLUMN is_confirmation_needed boolean NOT NULL DEFAULT false,
    ADD COLUMN confirmed_at           timestamp,
    ADD COLUMN confirmed_by           text,
    -- Set while the message is in the trashbin: it has left lists, counts and the messagebox summary.
    ADD COLUMN deleted_at             timestamp,
    ADD COLUMN deleted_by             text,
    -- [{Key, Value}] as the service owner sent it; NULL when there is none.
    ADD COLUMN custom_message_data    jsonb,
    ADD CHECK ((deleted_at IS NULL) = (deleted_by IS NULL)),
    ADD CHECK ((confirmed_at IS NULL) = (confirmed_by IS NULL));

-- The text a signer confirms, per language id ({"1044": "…"}); NULL: the default text.
ALTER TABLE services ADD COLUMN signing_texts jsonb;

-- Messages deleted for good, so that importing the dataset again does not bring them back.
CREATE TABLE purged_messages (
    id        text PRIMARY KEY,
    purged_at timestamp NOT NULL
);

-- One row per change of a message's place or state, written in the transaction of the change. No foreign
-- keys: the log outlives the messages it names.
CREATE TABLE message_audit (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurred_at    timestamp NOT NULL,
    reportee_id    bigint NOT NULL,
    message_id     text NOT NULL,
    actor_name     text NOT NULL,
    actor_party_id bigint,
    actor_login_id bigint,
    actor_method   text NOT NULL,
    api_key_name   text NOT NULL,
    request_id     text NOT NULL,
    action         text NOT NULL CHECK (action IN ('Archive', 'Confirm', 'Delete', 'Restore', 'DeleteForGood', 'Purge')),
    summary        text NOT NULL
);
CREATE INDEX message_audit_message ON message_audit (message_id, id);

CREATE FUNCTION message_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'message_audit is append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER message_audit_no_change BEFORE UPDATE OR DELETE ON message_audit
    FOR EACH ROW EXECUTE FUNCTION message_audit_append_only();
CREATE TRIGGER message_audit_no_truncate BEFORE TRUNCATE ON message_audit
    FOR EACH STATEMENT EXECUTE FUNCTION message_audit_append_only();
