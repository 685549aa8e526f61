-- Idempotent retries: the first complete answer to a creating POST with an Idempotency-Key, kept per API
-- key, caller and key, so that a retry gets the same answer instead of creating twice. A row without a
-- status is a request still running; claim identifies the request that holds it.
CREATE TABLE idempotent_requests (
    api_key        bytea NOT NULL, -- the SHA-256 of the API key, as api_keys.key_hash
    caller         text NOT NULL,
    key            text NOT NULL,
    claim          uuid NOT NULL,
    claimed_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    request_digest bytea,  -- SHA-256 of method, path, query and body
    request_bytes  bigint, -- the body's length: a retry's body is read no further than this to compare it
    status         integer,
    header         jsonb,
    body           bytea,
    PRIMARY KEY (api_key, caller, key),
    CHECK (length(key) BETWEEN 1 AND 255)
);
CREATE INDEX idempotent_requests_expires ON idempotent_requests (expires_at);
