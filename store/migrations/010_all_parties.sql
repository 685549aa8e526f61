---- tern: disable-tx ----
-- Built CONCURRENTLY outside a transaction (docs/operations.md, Migrations): each statement may run again.
-- The list of every party's messages (GET /api/all/messages) walks all messages newest first and keeps
-- those the caller's roles grant, until a page is full.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_newest ON messages (created_date DESC, id DESC);
