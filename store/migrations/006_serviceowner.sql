-- The service-owner area: contact-point search, and the key that pseudonymises identity numbers in its
-- audit log.

-- Phone numbers are compared after normalisation: blanks (no-break ones too), dots, dashes and
-- parentheses go, a leading 00 becomes +, and a Norwegian number loses its +47, so "+47 910 00 101",
-- "004791000101" and "91000101" are one key. Search terms go through the same function: one rule, one place.
CREATE FUNCTION contact_phone_key(phone text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT regexp_replace(regexp_replace(regexp_replace(phone, '[[:space:]\u00a0().-]', '', 'g'), '^00', '+'), '^\+47([0-9]{8})$', '\1') $$;

-- E-mail addresses are compared case-insensitively, without surrounding blanks (its index is built by 035_concurrent_indexes.sql).

-- Audit lines name the persons asked about by a keyed hash of their national identity number, never the
-- number itself. The key is made here, once, so every replica and every restart share it: someone with
-- database access can compute the pseudonym of a given number and find its lookups in the log, someone
-- with only the log cannot reverse it (the number space is small enough to hash exhaustively, the key is not).
CREATE TABLE audit_pseudonym_key (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    key       bytea NOT NULL
);
INSERT INTO audit_pseudonym_key (key)
    SELECT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
