-- Rate limits per API key and area: a key may carry its own limits (area → requests per window), over the
-- configured default; every API replica counts in the same fixed window, one row per key and area.
ALTER TABLE api_keys ADD COLUMN rate_limits jsonb NOT NULL DEFAULT '{}';

-- Counters are worth nothing after a crash (a window lasts a minute), so they skip the WAL.
CREATE UNLOGGED TABLE rate_windows (
    key_hash     bytea NOT NULL,
    area         text NOT NULL,
    window_start timestamptz NOT NULL,
    count        integer NOT NULL,
    PRIMARY KEY (key_hash, area)
);
