-- The outbox refuses updates through the one append-only trigger function of migration 015, in place of the
-- copy migration 014 made for it. Only UPDATE: the outbox keeps its own rules for deleting old events.
DROP TRIGGER events_no_update ON events;
DROP FUNCTION events_immutable();
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION refuse_append_only_change();
