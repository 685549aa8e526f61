-- placeholder, replaced by the 002_mailbox work
SELECT 1;
