-- Password sessions, login throttling, and change notification for the effective-rights caches.

CREATE TABLE sessions (
    token_hash     bytea PRIMARY KEY, -- SHA-256 of the random cookie value
    login_id       bigint NOT NULL REFERENCES logins (id) ON DELETE CASCADE,
    security_level integer NOT NULL,
    enterprise_org text, -- organization number of the certificate an enterprise user logged in with
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    absolute_end   timestamptz NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- Failed password logins per user name as typed (existing or not, so a lockout reveals nothing).
CREATE TABLE login_failures (
    user_key     text PRIMARY KEY,
    failures     integer NOT NULL,
    first_failed timestamptz NOT NULL,
    locked_until timestamptz
);

-- Every API replica caches effective rights; any change to roles or role definitions tells them all.
CREATE FUNCTION notify_rights_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('postbox_rights_changed', TG_TABLE_NAME);
    RETURN NULL;
END $$;

CREATE TRIGGER roles_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION notify_rights_changed();
CREATE TRIGGER role_definitions_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON role_definitions
    FOR EACH STATEMENT EXECUTE FUNCTION notify_rights_changed();
CREATE TRIGGER role_definition_rights_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON role_definition_rights
    FOR EACH STATEMENT EXECUTE FUNCTION notify_rights_changed();
