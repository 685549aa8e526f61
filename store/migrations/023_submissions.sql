-- The agency's download queue: every archive of a form task is a submission to the owner of its service,
-- entered in the archive's own transaction (store.ArchiveFormTask), so no archive is missing from the queue
-- and none is in it twice. The owner reads it, downloads its parts and confirms it; nothing but the
-- confirmation ever changes a row. No foreign key to messages: a submission outlives its message, as the
-- archive does. seq is the number of the ArchiveReference, the order archives were made in: the queue's
-- keyset.
CREATE TABLE submissions (
    archive_reference  text PRIMARY KEY REFERENCES archives,
    seq                bigint NOT NULL UNIQUE,
    message_id         text NOT NULL UNIQUE,
    service_owner_code text NOT NULL REFERENCES service_owners (code),
    service_code       text NOT NULL,
    service_edition    integer NOT NULL,
    reportee_id        bigint NOT NULL REFERENCES parties (id),
    archived_at        timestamp NOT NULL,
    filled_by          text NOT NULL,
    signed_by          text NOT NULL,
    confirmed_at       timestamptz,
    confirmed_by       text,
    CHECK ((confirmed_at IS NULL) = (confirmed_by IS NULL)),
    CHECK (seq = substr(archive_reference, 3)::bigint)
);
-- The unconfirmed queue, which agencies poll, stays small however many submissions are confirmed.
CREATE INDEX submissions_unconfirmed ON submissions (service_owner_code, seq) WHERE confirmed_at IS NULL;
CREATE INDEX submissions_owner ON submissions (service_owner_code, seq);

INSERT INTO submissions (archive_reference, seq, message_id, service_owner_code, service_code, service_edition,
        reportee_id, archived_at, filled_by, signed_by)
    SELECT a.archive_reference, substr(a.archive_reference, 3)::bigint, a.message_id, s.service_owner_code,
        m.service_code, m.service_edition, m.reportee_id, a.archived_at, a.archived_by, a.archived_by
    FROM archives a
    JOIN messages m ON m.id = a.message_id
    JOIN services s ON s.service_code = m.service_code AND s.service_edition = m.service_edition;

-- The party sees in its message when the agency confirmed that it has received the submission.
ALTER TABLE messages ADD COLUMN received_by_owner_at timestamp;

-- Who downloaded which part of a submission, and who confirmed it: written in the transaction of the
-- read or the confirmation it records; append-only like the other audit logs.
CREATE TABLE submission_log (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    archive_reference   text NOT NULL REFERENCES submissions,
    occurred_at         timestamptz NOT NULL DEFAULT now(),
    action              text NOT NULL CHECK (action IN ('Download', 'Confirm')),
    part                text NOT NULL, -- submission.zip, print.pdf, forms/<id>, attachments/<id>, or '' for Confirm
    organization_number text NOT NULL,
    api_key_name        text NOT NULL,
    auth_method         text NOT NULL,
    request_id          text NOT NULL
);
CREATE INDEX submission_log_reference ON submission_log (archive_reference, id);

CREATE FUNCTION submission_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'submission_log is append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER submission_log_no_change BEFORE UPDATE OR DELETE ON submission_log
    FOR EACH ROW EXECUTE FUNCTION submission_log_append_only();
CREATE TRIGGER submission_log_no_truncate BEFORE TRUNCATE ON submission_log
    FOR EACH STATEMENT EXECUTE FUNCTION submission_log_append_only();

-- Archived attachment bytes are read a range at a time (a download streams them, a Range asks for part of
-- one): stored uncompressed out of line, substring reads only the TOAST chunks it covers.
ALTER TABLE archived_blobs ALTER COLUMN data SET STORAGE EXTERNAL;
