-- The scheduled purge of the trashbins walks every trashbin, oldest deletion first.
CREATE INDEX messages_trashbin_age ON messages (deleted_at) WHERE deleted_at IS NOT NULL;
