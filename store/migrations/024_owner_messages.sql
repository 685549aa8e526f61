-- Where every message of a service owner's services stands (GET /api/serviceowner/messages, package
-- submission): when a correspondence was first read (the indexes that walk one service's messages are
-- built by 035_concurrent_indexes.sql).
ALTER TABLE messages ADD COLUMN read_at timestamp;
