---- tern: disable-tx ----
-- Built CONCURRENTLY outside a transaction (docs/operations.md, Migrations): each statement may run again.
-- Indexes of the mailbox read side. messages_mailbox (001) already serves the default order
-- (created_date DESC, id DESC) and CreatedDate ranges within a reportee; these serve lists narrowed
-- by status or by service, so that a large mailbox still pages by walking an index, not by sorting.

-- Status eq '…' in the default order (e.g. the few unread among many archived).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_mailbox_status ON messages (reportee_id, status, created_date DESC, id DESC);

-- ServiceOwner eq '…', ServiceCode eq '…' and callers who may read only some services: one range per
-- service. Status and type are included so the messagebox counts are answered from the index alone.
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_mailbox_service ON messages (reportee_id, service_code, service_edition, created_date DESC, id DESC)
    INCLUDE (status, type);
