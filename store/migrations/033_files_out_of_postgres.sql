-- The file bytes have moved to the object store (postbox migrate runs files.MoveOut between 032 and this
-- one): every row that names a content now refers to its blob, and the tables and columns that held bytes
-- go. A foreign key that does not hold here is a content that was not moved: nothing is dropped then.

-- The archived attachments of an archive, by digest: what keeps their blobs from the sweeper for as long as
-- the archive is kept (archives.attachments says the same in JSON for the API).
CREATE TABLE archive_blobs (
    archive_reference text NOT NULL REFERENCES archives,
    sha256            bytea NOT NULL REFERENCES blobs,
    PRIMARY KEY (archive_reference, sha256)
);
INSERT INTO archive_blobs (archive_reference, sha256)
SELECT DISTINCT a.archive_reference, decode(f ->> 'SHA256', 'base64')
FROM archives a, jsonb_array_elements(a.attachments) f;
CREATE INDEX archive_blobs_sha256 ON archive_blobs (sha256);

ALTER TABLE prints ALTER COLUMN pdf_sha256 SET NOT NULL,
    ADD FOREIGN KEY (pdf_sha256) REFERENCES blobs, DROP COLUMN pdf;

-- Each table that names contents refers to their blobs (the indexes for the sweeper's deletes are built by
-- 035_concurrent_indexes.sql).
ALTER TABLE attachments ADD FOREIGN KEY (sha256) REFERENCES blobs;
ALTER TABLE revision_attachments ADD FOREIGN KEY (sha256) REFERENCES blobs;
ALTER TABLE shipment_attachments ADD FOREIGN KEY (sha256) REFERENCES blobs;
ALTER TABLE correspondence_uploads ADD FOREIGN KEY (sha256) REFERENCES blobs;

-- An upload that was under way is lost with its chunks: its client's retry uploads again.
DROP TABLE attachment_chunks, revision_attachment_chunks, shared_attachment_chunks, correspondence_upload_chunks, archived_blobs;
-- Uploads of correspondence stream into the object store; the row is written when the last byte is in.
ALTER TABLE attachments DROP COLUMN shared;
