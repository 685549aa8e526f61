-- Subscription secrets are stored sealed (events/webhook: envelope encryption with a key from
-- configuration); the API and the workers seal the ones stored before in plaintext when they start. A
-- rotated secret keeps the one before it, which signs deliveries beside the new one until
-- previous_secret_until, so a subscriber can switch without missing a delivery.
ALTER TABLE webhook_subscriptions
    ADD COLUMN previous_secret       text,
    ADD COLUMN previous_secret_until timestamptz;
