-- Large attachments of correspondence are uploaded first, streamed, and referenced by their id in a send
-- (package correspondence). The bytes arrive as chunks of their upload, each written on its own (no
-- transaction stays open while a client sends); when the last has come they join the shared chunks under
-- their SHA-256 (once, however many uploads and shipments have them) and the upload's row is written.
CREATE TABLE correspondence_upload_chunks (
    upload_id uuid NOT NULL,
    seq       integer NOT NULL,
    data      bytea NOT NULL,
    PRIMARY KEY (upload_id, seq)
);
CREATE TABLE correspondence_uploads (
    id                 uuid PRIMARY KEY,
    service_owner_code text NOT NULL REFERENCES service_owners (code),
    file_name          text NOT NULL,
    content_type       text NOT NULL,
    file_size          bigint NOT NULL,
    sha256             bytea NOT NULL,
    created_at         timestamp NOT NULL
);
