-- Signing by several (package formtask). A form service may declare its signing: steps in order, each
-- needing signatures from signees matching a rule, and a deadline in days from the task's completion. A
-- task's filler (or the agency that created it) names its signees while it is in Utfylling; completed,
-- the task waits in Signering until every step has its signatures, then archives.
ALTER TABLE services
    ADD COLUMN signing_steps         jsonb,   -- [store.SigningStep]; NULL: one signature by anyone with Sign
    ADD COLUMN signing_deadline_days integer CHECK (signing_deadline_days > 0);

CREATE TABLE task_signees (
    message_id text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    ordinal    integer NOT NULL,
    party_id   bigint NOT NULL REFERENCES parties (id),
    PRIMARY KEY (message_id, ordinal),
    UNIQUE (message_id, party_id)
);
CREATE INDEX task_signees_party ON task_signees (party_id);

-- One row per signature. A signature is voided (voided_at) when its task goes back to Utfylling; it is
-- never deleted while its task exists, so the voided ones stay readable.
CREATE TABLE task_signatures (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id            text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    step                  integer NOT NULL,
    signer_party_id       bigint NOT NULL REFERENCES parties (id),  -- the person who signed
    signer_name           text NOT NULL,
    on_behalf_of_party_id bigint NOT NULL REFERENCES parties (id),  -- the signee: the person, an organization, or the task's party
    signed_at             timestamp NOT NULL,
    content_digest        text NOT NULL,                             -- SHA-256 (hex) of the content signed
    voided_at             timestamp
);
CREATE UNIQUE INDEX task_signatures_once ON task_signatures (message_id, signer_party_id, on_behalf_of_party_id) WHERE voided_at IS NULL;
CREATE INDEX task_signatures_message ON task_signatures (message_id);

-- An archive keeps the signatures its task had when it was sent, as they were ([store.ArchivedSignature]),
-- so the print, the owner's submission and the archive say who signed whatever happens to the task after.
ALTER TABLE archives ADD COLUMN signatures jsonb NOT NULL DEFAULT '[]';
