-- Authorization management: local role definitions of a reportee, and the append-only audit log of
-- every delegation, role or right deletion and role-definition change.

-- A local role belongs to the reportee that created it (owner_party_id) and is of type 'Local'; platform
-- roles ('Altinn', 'External') have no owner. Names are unique within a reportee (an index of
-- 035_concurrent_indexes.sql).
ALTER TABLE role_definitions ADD CONSTRAINT role_definitions_local_owner
    CHECK ((role_type = 'Local') = (owner_party_id IS NOT NULL));

-- One row per change, written in the transaction of the change. Ids of actors, reportees and right
-- holders are kept without foreign keys so the log outlives whatever it mentions.
CREATE TABLE authorization_audit (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurred_at        timestamp NOT NULL,                 -- local date-time, like every timestamp of the interface
    reportee_id        bigint NOT NULL,                    -- for whom
    actor_name         text NOT NULL,                      -- who (display name)
    actor_party_id     bigint,                             -- who: the person or organization ...
    actor_login_id     bigint,                             -- ... or the enterprise user
    actor_method       text NOT NULL,                      -- how they authenticated
    api_key_name       text NOT NULL,                      -- from which client
    request_id         text NOT NULL,
    action             text NOT NULL CHECK (action IN ('DelegateRole', 'DeleteRole', 'DeleteRight',
                           'CreateRoleDefinition', 'UpdateRoleDefinition', 'DeleteRoleDefinition')),
    role_id            bigint,
    role_definition_id integer,
    right_id           bigint,
    right_holder       text,                               -- display name of the right holder
    summary            text NOT NULL                       -- what, in words
);
CREATE INDEX authorization_audit_reportee ON authorization_audit (reportee_id, occurred_at DESC, id DESC);

CREATE FUNCTION authorization_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'authorization_audit is append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER authorization_audit_no_change BEFORE UPDATE OR DELETE ON authorization_audit
    FOR EACH ROW EXECUTE FUNCTION authorization_audit_append_only();
CREATE TRIGGER authorization_audit_no_truncate BEFORE TRUNCATE ON authorization_audit
    FOR EACH STATEMENT EXECUTE FUNCTION authorization_audit_append_only();
