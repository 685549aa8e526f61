---- tern: disable-tx ----
-- The indexes earlier migrations added to tables that were already large, built CONCURRENTLY outside a
-- transaction so that writes to those tables go on while they build (docs/operations.md, Migrations).
-- Each statement may run again: a build that failed half-way leaves an invalid index, which store.Migrate
-- drops before it runs this file again. A database that already has an index skips it.

-- The names of a reportee's local role definitions are unique within it (005); a single right has one
-- definition, shared by every reportee (029).
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS role_definitions_local_name ON role_definitions (owner_party_id, lower(role_name))
    WHERE owner_party_id IS NOT NULL;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS role_definitions_single_right ON role_definitions (role_definition_code)
    WHERE role_type = 'SingleRight';

-- Deleting a local role definition finds its delegations through this (005).
CREATE INDEX CONCURRENTLY IF NOT EXISTS roles_role_definition ON roles (role_definition_id);

-- Contact-point search compares e-mail addresses case-insensitively without surrounding blanks, and phone
-- numbers by contact_phone_key (006).
CREATE INDEX CONCURRENTLY IF NOT EXISTS parties_email_key ON parties (lower(btrim(email_address)));
CREATE INDEX CONCURRENTLY IF NOT EXISTS parties_phone_key ON parties (contact_phone_key(mobile_number));

-- The trashbin of a reportee, newest deletion first (011).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_trashbin ON messages (reportee_id, deleted_at DESC, id DESC)
    WHERE deleted_at IS NOT NULL;

-- The words of the search hold the reportee too (btree_gin, 019), so that a search in one party is one GIN
-- lookup that follows the party's messages, not a bitmap of every message with a common word ANDed with
-- the party's; a search in every party uses it for the words alone.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_search_words ON messages USING gin (reportee_id, search_words);

-- The words of each month, for the newest matches of a search over every party (020).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_search_months ON messages
    USING gin (search_month_words(search_words, created_date));

-- One service's messages in the service owner's list's keyset order, so a page costs an index range per
-- service however many mailboxes there are; and the same walk narrowed to one status ("who has not
-- submitted yet": status Utfylling) (024).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_service ON messages (service_code, service_edition, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_service_status ON messages (service_code, service_edition, status, id);

-- The messages of a shipment (025).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_shipment ON messages (shipment_id) WHERE shipment_id IS NOT NULL;

-- The sweeper deletes a blob only when no row names it (033): each table that names contents is looked up
-- by digest.
CREATE INDEX CONCURRENTLY IF NOT EXISTS prints_pdf_sha256 ON prints (pdf_sha256);
CREATE INDEX CONCURRENTLY IF NOT EXISTS attachments_sha256 ON attachments (sha256);
CREATE INDEX CONCURRENTLY IF NOT EXISTS revision_attachments_sha256 ON revision_attachments (sha256);
CREATE INDEX CONCURRENTLY IF NOT EXISTS shipment_attachments_sha256 ON shipment_attachments (sha256);
CREATE INDEX CONCURRENTLY IF NOT EXISTS correspondence_uploads_sha256 ON correspondence_uploads (sha256);

ANALYZE messages;
