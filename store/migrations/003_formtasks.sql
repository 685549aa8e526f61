-- Form tasks driven by Temporal: pending revisions written by the API before it asks the workflow to apply
-- them (so payloads never enter workflow history), print PDFs by content digest, and the immutable archive.

-- A revision is what one PUT/POST brought: a whole form set (Replace), one sub-form (SubForm) or one
-- attachment (Attachment). It is immutable; an activity promotes it into forms/attachments or deletes it.
CREATE TABLE form_revisions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id     text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('Replace', 'SubForm', 'Attachment')),
    target_form_id bigint,            -- SubForm: the form it changes; NULL adds one
    digest         bytea NOT NULL,    -- SHA-256 of the content, carried by the workflow instead of the payload
    created_at     timestamptz NOT NULL DEFAULT now(),
    promoted_at    timestamptz,       -- set once promoted, so a retried promotion is a no-op
    promoted_ref   bigint,            -- after promotion: the form or attachment id it wrote
    CHECK (kind = 'SubForm' OR target_form_id IS NULL)
);
CREATE INDEX form_revisions_message ON form_revisions (message_id);
CREATE INDEX form_revisions_pending ON form_revisions (created_at) WHERE promoted_at IS NULL;

CREATE TABLE revision_forms (
    revision_id         bigint NOT NULL REFERENCES form_revisions (id) ON DELETE CASCADE,
    ordinal             integer NOT NULL,
    type                text NOT NULL CHECK (type IN ('MainForm', 'SubForm')),
    data_format_id      text NOT NULL,
    data_format_version integer NOT NULL,
    name                text NOT NULL,
    form_data           text NOT NULL,
    PRIMARY KEY (revision_id, ordinal)
);

CREATE TABLE revision_attachments (
    revision_id     bigint NOT NULL REFERENCES form_revisions (id) ON DELETE CASCADE,
    ordinal         integer NOT NULL,
    name            text NOT NULL,
    file_name       text NOT NULL,
    attachment_type text NOT NULL,
    file_size       bigint NOT NULL,
    sha256          bytea NOT NULL,
    PRIMARY KEY (revision_id, ordinal)
);

-- A revision attachment's bytes in chunks of the same size as attachment_chunks, so uploads stream in and
-- promotion copies them inside the database.
CREATE TABLE revision_attachment_chunks (
    revision_id bigint NOT NULL,
    ordinal     integer NOT NULL,
    seq         integer NOT NULL,
    data        bytea NOT NULL,
    PRIMARY KEY (revision_id, ordinal, seq),
    FOREIGN KEY (revision_id, ordinal) REFERENCES revision_attachments ON DELETE CASCADE
);

-- Print PDFs keyed by the SHA-256 of the document they were rendered from: rendering is deterministic,
-- so the same content never renders twice.
CREATE TABLE prints (
    document_digest bytea PRIMARY KEY,
    pdf             bytea NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE SEQUENCE archive_reference_seq START WITH 7000001;

-- The archive of a form task as signed and sent. No foreign key to messages: the archive outlives them.
-- UNIQUE (message_id) makes archiving exactly-once, however often the activity is retried.
CREATE TABLE archives (
    archive_reference text PRIMARY KEY CHECK (archive_reference ~ '^AR[0-9]+$'),
    message_id        text NOT NULL UNIQUE,
    archived_at       timestamp NOT NULL,
    archived_by       text NOT NULL,
    forms             jsonb NOT NULL, -- [{ID, Type, DataFormatID, DataFormatVersion, Name, FormData}]
    attachments       jsonb NOT NULL, -- [{ID, Name, FileName, AttachmentType, FileSize, SHA256 (base64)}]
    print_digest      bytea NOT NULL REFERENCES prints (document_digest)
);

-- Attachment bytes of archives, by SHA-256, so the archive does not depend on rows that may change.
CREATE TABLE archived_blobs (
    sha256 bytea PRIMARY KEY,
    data   bytea NOT NULL
);

CREATE FUNCTION refuse_archive_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'archive % is immutable', OLD.archive_reference;
END $$;

CREATE TRIGGER archives_immutable BEFORE UPDATE OR DELETE ON archives
    FOR EACH ROW EXECUTE FUNCTION refuse_archive_change();

-- Ids of form tasks created through the interface ('a' and digits, like the imported ones).
CREATE SEQUENCE message_id_seq START WITH 5000001;
