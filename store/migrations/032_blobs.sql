-- File bytes live in S3-compatible object storage (package files): one object per content, whatever
-- refers to it. A blob row names the object of a content: its SHA-256, size and first bytes (for the checks
-- of a file's format without reading the object), and its key, random and never written twice.
CREATE TABLE blobs (
    sha256     bytea PRIMARY KEY CHECK (octet_length(sha256) = 32),
    object_key text NOT NULL UNIQUE,
    size       bigint NOT NULL CHECK (size >= 0),
    head       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- Last saved (again): the sweeper leaves a blob no row refers to alone for a grace period after it,
    -- so that the upload that saved it can refer to it.
    touched_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX blobs_touched ON blobs (touched_at);

-- A print names the blob of its PDF (postbox migrate moves the PDFs kept in prints.pdf, then 033 drops it).
ALTER TABLE prints ADD COLUMN pdf_sha256 bytea;
