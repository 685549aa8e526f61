-- One trigger function for every append-only table (the audit logs): UPDATE, DELETE and TRUNCATE are
-- refused, naming the table. It replaces the copies migrations 005 and 011 made for their own tables.
CREATE FUNCTION refuse_append_only_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;

DO $$
DECLARE
    log text;
BEGIN
    FOREACH log IN ARRAY ARRAY['authorization_audit', 'message_audit'] LOOP
        EXECUTE format('DROP TRIGGER %1$s_no_change ON %1$I', log);
        EXECUTE format('DROP TRIGGER %1$s_no_truncate ON %1$I', log);
        EXECUTE format('DROP FUNCTION %1$s_append_only()', log);
        EXECUTE format('CREATE TRIGGER %1$s_no_change BEFORE UPDATE OR DELETE ON %1$I
            FOR EACH ROW EXECUTE FUNCTION refuse_append_only_change()', log);
        EXECUTE format('CREATE TRIGGER %1$s_no_truncate BEFORE TRUNCATE ON %1$I
            FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change()', log);
    END LOOP;
END $$;
