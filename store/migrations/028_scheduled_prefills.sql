-- A pre-filled form task with a VisibleDateTime in the future waits here, under the message id reserved
-- for it, until its workflow (correspondence.PrefillWorkflow) creates the task at that time. Its forms
-- were validated when it was sent; the row goes when the task is created, or stays with why it could not
-- be (failure), for the owner's support to read.
CREATE TABLE scheduled_prefills (
    message_id          text PRIMARY KEY,
    service_owner_code  text NOT NULL REFERENCES service_owners (code),
    service_owner_name  text NOT NULL,
    reportee_id         bigint NOT NULL REFERENCES parties (id),
    service_code        text NOT NULL,
    service_edition     integer NOT NULL,
    subject             text NOT NULL,
    due_at              timestamp,
    visible_at          timestamp NOT NULL,
    -- the forms and attachments as sent (store.RevisionForm, store.RevisionAttachment)
    forms               jsonb NOT NULL,
    attachments         jsonb NOT NULL,
    notification_order  uuid REFERENCES notification_orders (id),
    failure             text,
    created_at          timestamp NOT NULL
);
