-- Events and the audit logs are partitioned by the month of their time, so that retention drops a month
-- at once (package retention) instead of deleting rows from tables that only grow. A table <t> has the
-- partitions <t>_pYYYYMM, one per month, and <t>_default for a row of a month that has none (a clock far
-- off), so that a write never fails for want of a partition. Months run from midnight UTC for timestamptz
-- columns and from local midnight for the local date-times of the audit logs.
--
-- The keys hold the partition key, as PostgreSQL requires: events are (seq, time) and the logs (id,
-- occurred_at). seq and id stay unique as before, given by the event counter and the identity sequences;
-- events.id (a random UUID that nothing looks up) is no longer indexed.

-- The append-only logs' trigger names the log, not the partition a row trigger fires on.
CREATE OR REPLACE FUNCTION refuse_append_only_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % is not allowed',
        COALESCE((SELECT i.inhparent::regclass::text FROM pg_inherits i WHERE i.inhrelid = TG_RELID), TG_TABLE_NAME), TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;

-- The two functions below are what the retention schedule calls, as the role of the workers, which may not
-- change the schema (deploy/README.md, PostgreSQL): they run as their owner, the migrating role, with a
-- fixed search_path, and the drop refuses months younger than the shortest retention the configuration
-- allows, so a compromised worker cannot empty an audit log.

-- ensure_month_partitions creates the partitions of parent for the months first..last that it lacks, and
-- its default partition. The TRUNCATE trigger of an append-only log is not inherited, so each partition
-- gets its parent's (its row triggers are). A month with rows already in the default partition keeps them
-- there, with a warning, instead of failing every later run. It returns how many partitions it made.
CREATE FUNCTION ensure_month_partitions(parent text, first date, last date) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    no_truncate regproc := (SELECT t.tgfoid::regproc FROM pg_trigger t
                            WHERE t.tgrelid = parent::regclass AND t.tgname = parent || '_no_truncate');
    month date := date_trunc('month', first);
    part text;
    made integer := 0;
BEGIN
    IF to_regclass(parent || '_default') IS NULL THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', parent || '_default', parent);
        IF no_truncate IS NOT NULL THEN
            EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION %s()',
                parent || '_default_no_truncate', parent || '_default', no_truncate);
        END IF;
    END IF;
    WHILE month <= last LOOP
        part := parent || '_p' || to_char(month, 'YYYYMM');
        IF to_regclass(part) IS NULL THEN
            BEGIN
                -- The offset sets a timestamptz bound at midnight UTC; a timestamp ignores it.
                EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, parent,
                    to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00', to_char(month + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
                IF no_truncate IS NOT NULL THEN
                    EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION %s()',
                        part || '_no_truncate', part, no_truncate);
                END IF;
                made := made + 1;
            EXCEPTION WHEN check_violation THEN
                RAISE WARNING '% has rows of %: that month stays in it', parent || '_default', to_char(month, 'YYYY-MM');
            END;
        END IF;
        month := month + interval '1 month';
    END LOOP;
    RETURN made;
END $$;

-- drop_month_partitions_before drops the month partitions of parent that end on or before the month of
-- before, and returns their names. Dropping a partition is the only way rows leave an append-only log. It
-- keeps at least the current month and the one before of events, and twelve of the audit logs
-- (config: POSTBOX_EVENTS_RETENTION_MONTHS, POSTBOX_AUDIT_RETENTION_MONTHS).
CREATE FUNCTION drop_month_partitions_before(parent text, before date) RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    part text;
    kept interval := CASE WHEN parent = 'events' THEN interval '1 month' ELSE interval '12 months' END;
BEGIN
    IF parent NOT IN ('events', 'authorization_audit', 'message_audit', 'submission_log') THEN
        RAISE EXCEPTION '% is not partitioned by month', parent USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF date_trunc('month', before) > date_trunc('month', now()) - kept THEN
        RAISE EXCEPTION 'the months of % before % are kept: at least % of them', parent, before, kept
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR part IN
        SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = parent::regclass AND c.relname ~ ('^' || parent || '_p[0-9]{6}$')
          AND to_date(right(c.relname, 6), 'YYYYMM') + interval '1 month' <= date_trunc('month', before)
        ORDER BY c.relname
    LOOP
        EXECUTE format('DROP TABLE %I', part);
        RETURN NEXT part;
    END LOOP;
END $$;

-- partition_by_month makes table a table partitioned by the month of column, with the columns, defaults,
-- identity and checks it has, and renames the table it was (and that table's indexes) to
-- <table>_unpartitioned, for the statements below to add the keys, indexes and triggers and move the rows.
CREATE FUNCTION partition_by_month(tbl text, col text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    idx text;
BEGIN
    FOR idx IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = tbl::regclass LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', idx, idx || '_unpartitioned');
    END LOOP;
    EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, tbl || '_unpartitioned');
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING CONSTRAINTS) PARTITION BY RANGE (%I)',
        tbl, tbl || '_unpartitioned', col);
END $$;

-- move_rows fills table from <table>_unpartitioned, with partitions for every month from the oldest row's
-- of the last ten years to three ahead, sets its identity sequence (if any) past the rows' ids, and drops the old table.
CREATE FUNCTION move_rows(tbl text, col text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    oldest date;
    seq text := pg_get_serial_sequence(tbl, 'id');
BEGIN
    EXECUTE format('SELECT min(%1$I)::date FROM %2$I WHERE %1$I > now() - interval ''10 years''', col, tbl || '_unpartitioned') INTO oldest;
    -- A month early, as the date of a timestamptz is the session's, not UTC's. Older rows (a clock far
    -- off) go to the default partition.
    PERFORM ensure_month_partitions(tbl, (COALESCE(oldest, current_date) - interval '1 month')::date,
        (current_date + interval '3 months')::date);
    EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM %I', tbl, tbl || '_unpartitioned');
    IF seq IS NOT NULL THEN
        EXECUTE format('SELECT setval(%L, COALESCE(max(id), 0) + 1, false) FROM %I', seq, tbl);
    END IF;
    EXECUTE format('DROP TABLE %I', tbl || '_unpartitioned');
END $$;

SELECT partition_by_month('events', 'time');
ALTER TABLE events ADD PRIMARY KEY (seq, time);
CREATE INDEX events_reportee ON events (reportee_id, seq);
CREATE INDEX events_service ON events (service_code, service_edition, seq) WHERE service_code IS NOT NULL;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
SELECT move_rows('events', 'time');

SELECT partition_by_month('authorization_audit', 'occurred_at');
ALTER TABLE authorization_audit ADD PRIMARY KEY (id, occurred_at);
CREATE INDEX authorization_audit_reportee ON authorization_audit (reportee_id, occurred_at DESC, id DESC);
CREATE TRIGGER authorization_audit_no_change BEFORE UPDATE OR DELETE ON authorization_audit
    FOR EACH ROW EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER authorization_audit_no_truncate BEFORE TRUNCATE ON authorization_audit
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
SELECT move_rows('authorization_audit', 'occurred_at');

SELECT partition_by_month('message_audit', 'occurred_at');
ALTER TABLE message_audit ADD PRIMARY KEY (id, occurred_at);
CREATE INDEX message_audit_message ON message_audit (message_id, id);
CREATE TRIGGER message_audit_no_change BEFORE UPDATE OR DELETE ON message_audit
    FOR EACH ROW EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER message_audit_no_truncate BEFORE TRUNCATE ON message_audit
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
SELECT move_rows('message_audit', 'occurred_at');

SELECT partition_by_month('submission_log', 'occurred_at');
ALTER TABLE submission_log ADD PRIMARY KEY (id, occurred_at),
    ADD CONSTRAINT submission_log_archive_reference_fkey FOREIGN KEY (archive_reference) REFERENCES submissions;
CREATE INDEX submission_log_reference ON submission_log (archive_reference, id);
CREATE TRIGGER submission_log_no_change BEFORE UPDATE OR DELETE ON submission_log
    FOR EACH ROW EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER submission_log_no_truncate BEFORE TRUNCATE ON submission_log
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
SELECT move_rows('submission_log', 'occurred_at');
DROP FUNCTION submission_log_append_only();

DROP FUNCTION partition_by_month(text, text), move_rows(text, text);
