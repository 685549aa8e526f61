---- tern: disable-tx ----
-- Built CONCURRENTLY outside a transaction (docs/operations.md, Migrations): each statement may run again.
-- Case-insensitive substring, prefix and suffix matches ($filter substringof/startswith/endswith over
-- tolower(Subject) or tolower(MessageSender)) use trigram indexes of the lowered text, in every reportee's
-- mailbox and across all of them. pg_trgm ships with PostgreSQL (the contrib package) and is a trusted
-- extension: the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_subject_trgm ON messages USING gin (lower(subject) gin_trgm_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_sender_trgm ON messages USING gin (lower(message_sender) gin_trgm_ops);
