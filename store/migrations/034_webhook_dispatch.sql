-- The webhook dispatcher's mark: the seq through which committed events have woken the delivery workflows
-- of their subscriptions. One row; a dispatcher locks it (FOR UPDATE) for its whole pass, so two events
-- workers never wake the same workflows for the same events, and a pass cut short is done again.
CREATE TABLE webhook_dispatch (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    seq      bigint NOT NULL
);
INSERT INTO webhook_dispatch (seq) SELECT last_seq FROM event_sequence;
