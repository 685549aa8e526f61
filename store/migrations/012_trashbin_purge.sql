---- tern: disable-tx ----
-- Built CONCURRENTLY outside a transaction (docs/operations.md, Migrations): each statement may run again.
-- The scheduled purge of the trashbins walks every trashbin, oldest deletion first.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_trashbin_age ON messages (deleted_at) WHERE deleted_at IS NOT NULL;
