-- Where every message of a service owner's services stands (GET /api/serviceowner/messages, package
-- submission): when a correspondence was first read, and an index that walks one service's messages in
-- the list's keyset order, so a page costs an index range per service however many mailboxes there are.
ALTER TABLE messages ADD COLUMN read_at timestamp;
CREATE INDEX messages_service ON messages (service_code, service_edition, id);
-- The same walk narrowed to one status ("who has not submitted yet": status Utfylling).
CREATE INDEX messages_service_status ON messages (service_code, service_edition, status, id);
