-- The notification order of a task's calls to sign (formtask.callSignees), so that a workflow run that
-- takes Signering from the read model (formtask.UpdateResync) starts the order the lost update did not.
-- A task completed anew gets the order of its new calls.
CREATE TABLE task_call_orders (
    message_id text PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    order_id   uuid NOT NULL REFERENCES notification_orders (id) ON DELETE CASCADE
);
CREATE INDEX task_call_orders_order ON task_call_orders (order_id);
