-- A signing deadline its task's filler (or creator) sets with its signees, a wall-clock time in the
-- service's zone; it goes before the service's SigningDeadlineDays.
CREATE TABLE task_signing_deadlines (
    message_id text PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    deadline   timestamp NOT NULL
);
